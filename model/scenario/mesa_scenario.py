"""The mapping of scenario files onto Mesa's `Scenario` class, with the named knobs the browser app moves.

A `MarketScenario` names a scenario file (or carries an already validated `Scenario`, or a parameter tree),
`--set`-style overrides, and a few knobs. A knob left at None keeps the file's value; a knob given a value overrides
the dotted path it maps to, so the app, the CLI and sweeps all change the model through the same validated path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model.scenario.loading import load_scenario, override_scenario, scenario_from_tree
from model.scenario.mesa_core import Scenario
from model.scenario.schema import Scenario as ScenarioParams

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
    """Parameters of one market run (Mesa `Scenario`): a scenario file, a validated `Scenario` or a parameter tree;
    overrides; knobs; `rng` is the seed."""

    scenario_file: str = str(DEFAULT_SCENARIO_FILE)
    params: ScenarioParams | dict | None = None
    overrides: tuple[str, ...] = ()
    vr_delay_months: int | None = None
    supply_growth_multiplier: float | None = None
    capex_multiplier_hyperscaler: float | None = None
    capex_multiplier_neocloud: float | None = None
    capex_multiplier_lab: float | None = None
    capex_multiplier_other: float | None = None
    power_lead_time_multiplier: float | None = None

    def settings(self) -> list[str]:
        """`overrides`, then the knobs that are set, as `dotted.path=value`."""
        sets = list(self.overrides)
        for knob, path in KNOBS.items():
            value = getattr(self, knob)
            if value is not None:
                sets.append(f"{path}={value}")
        return sets

    def resolved(self) -> ScenarioParams:
        """The typed scenario: the file (or the given scenario or tree), then `overrides` and knobs; validated
        once (a given `Scenario` is not validated again)."""
        sets = self.settings()
        if isinstance(self.params, ScenarioParams):
            return override_scenario(self.params, sets, source="knob")
        if self.params is not None:
            return scenario_from_tree(self.params, sets, source="knob")
        return load_scenario(self.scenario_file, sets, source="knob")

    def resolved_params(self) -> dict[str, Any]:
        """The resolved parameter tree (plain, as in a manifest)."""
        return self.resolved().tree


# what a knob means when the scenario does not set its path (no delay, multipliers of one)
KNOB_NEUTRAL: dict[str, float] = {knob: 0 if knob == "vr_delay_months" else 1.0 for knob in KNOBS}


def knob_value(scenario: ScenarioParams, knob: str) -> float:
    """The value a knob has in a validated scenario (for slider defaults, and to read back what a run uses); its
    neutral value where the scenario does not set the knob's path."""
    node: Any = scenario
    for part in KNOBS[knob].split("."):
        node = node.get(part) if isinstance(node, dict) else getattr(node, part, None)
        if node is None:
            return KNOB_NEUTRAL[knob]
    return float(node)
