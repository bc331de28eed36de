"""The mapping of scenario files onto Mesa's `Scenario` class, with the named knobs the browser app moves.

A `MarketScenario` names a scenario file (or carries an already resolved parameter tree), `--set`-style overrides,
and a few knobs. A knob left at None keeps the file's value; a knob given a value overrides the dotted path it maps
to, so the app, the CLI and sweeps all change the model through the same validated path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mesa.experimental.scenarios import Scenario

from model.scenario.loading import apply_overrides, load_scenario_dict

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SCENARIO_FILE = ROOT / "scenarios" / "baseline.toml"

# knob name -> dotted path in the scenario tree. One table, used by the Scenario class, the app and sweeps.
KNOBS: dict[str, str] = {
    "vr_delay_months": "supplier.delay_months.vr_nvl72",
    "supply_growth_multiplier": "supplier.supply_growth_multiplier",
    "capex_multiplier_hyperscaler": "kinds.hyperscaler.capex_multiplier",
    "capex_multiplier_neocloud": "kinds.neocloud.capex_multiplier",
    "capex_multiplier_lab": "kinds.lab.capex_multiplier",
    "capex_multiplier_other": "kinds.other.capex_multiplier",
    "power_lead_time_multiplier": "power_lead_time_multiplier",
}


class MarketScenario(Scenario):
    """Parameters of one market run (Mesa `Scenario`): a scenario file or tree, overrides, knobs; `rng` is the seed."""

    scenario_file: str = str(DEFAULT_SCENARIO_FILE)
    params: dict | None = None
    overrides: tuple[str, ...] = ()
    vr_delay_months: int | None = None
    supply_growth_multiplier: float | None = None
    capex_multiplier_hyperscaler: float | None = None
    capex_multiplier_neocloud: float | None = None
    capex_multiplier_lab: float | None = None
    capex_multiplier_other: float | None = None
    power_lead_time_multiplier: float | None = None

    def resolved_params(self) -> dict[str, Any]:
        """The parameter tree: file (or given tree), then `overrides`, then knobs that are set."""
        if self.params is not None:
            from model.scenario.schema import validate

            base = validate(self.params, "parameters")
        else:
            base = load_scenario_dict(self.scenario_file)
        sets = list(self.overrides)
        for knob, path in KNOBS.items():
            value = getattr(self, knob)
            if value is not None:
                sets.append(f"{path}={value}")
        return apply_overrides(base, sets, source="knob") if sets else base


# what a knob means when the scenario does not set its path (no delay, multipliers of one)
KNOB_NEUTRAL: dict[str, float] = {knob: 0 if knob == "vr_delay_months" else 1.0 for knob in KNOBS}


def knob_value(params: dict[str, Any], knob: str) -> Any:
    """The value a knob has in a parameter tree (for slider defaults); its neutral value where the tree is silent."""
    node: Any = params
    for part in KNOBS[knob].split("."):
        if not isinstance(node, dict) or part not in node:
            return KNOB_NEUTRAL[knob]
        node = node[part]
    return node
