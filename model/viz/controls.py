"""The app's controls: SolaraViz `model_params` for the scenario knobs, with defaults from the scenario file.

SolaraViz hands every entry of `model_params` whose name is a field of the model's `Scenario` class to a new
`MarketScenario(**values)` on Reset (`mesa.visualization.solara_viz._build_model_init_kwargs`), so the sliders are
named exactly like the `MarketScenario` knobs, the seed is `rng`, and the scenario file rides along as a fixed
(non-slider) entry. A knob's value is applied through `MarketScenario.resolved_params`, the same validated path as
`--set` on the command line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mesa.visualization import Slider

from model.errors import InputError
from model.scenario import load_scenario_dict
from model.scenario.mesa_scenario import DEFAULT_SCENARIO_FILE, MarketScenario, knob_value
from model.viz.launch import ENV_SCENARIO, ENV_SEED

SEED_MAX = 99


@dataclass(frozen=True)
class KnobSlider:
    """How one knob is shown: label (with unit), range and step; int knobs get an integer slider."""

    label: str
    low: float
    high: float
    step: float
    integer: bool = False


KNOB_SLIDERS: dict[str, KnobSlider] = {
    "vr_delay_months": KnobSlider("Vera Rubin delay (months)", 0, 24, 1, integer=True),
    "supply_growth_multiplier": KnobSlider("Supply growth (x)", 0.25, 2.0, 0.05),
    "capex_multiplier_hyperscaler": KnobSlider("Capex hyperscalers (x)", 0.25, 3.0, 0.05),
    "capex_multiplier_neocloud": KnobSlider("Capex neoclouds (x)", 0.25, 3.0, 0.05),
    "capex_multiplier_lab": KnobSlider("Capex labs (x)", 0.25, 3.0, 0.05),
    "capex_multiplier_other": KnobSlider("Capex rest of market (x)", 0.25, 3.0, 0.05),
    "power_lead_time_multiplier": KnobSlider("Power lead time (x)", 0.25, 3.0, 0.05),
}


def scenario_from_env() -> Path:
    """The scenario file the app shows: $AIRACE_VIZ_SCENARIO, else scenarios/baseline.toml."""
    return Path(os.environ.get(ENV_SCENARIO) or DEFAULT_SCENARIO_FILE).resolve()


def seed_from_env() -> int:
    """The initial seed: $AIRACE_VIZ_SEED, else 0."""
    text = os.environ.get(ENV_SEED) or "0"
    try:
        return int(text)
    except ValueError:
        raise InputError(f"${ENV_SEED}: seed {text!r} is not a whole number") from None


def model_params(scenario_file: str | Path, seed: int = 0) -> dict[str, Any]:
    """SolaraViz `model_params`: a slider per knob (default: the file's value), the seed, and the fixed file."""
    params = load_scenario_dict(scenario_file)
    out: dict[str, Any] = {
        "scenario_file": str(scenario_file),
        "rng": Slider("Seed", int(seed), 0, max(SEED_MAX, int(seed)), 1, dtype=int),
    }
    for knob, spec in KNOB_SLIDERS.items():
        value = knob_value(params, knob)
        if spec.integer:
            value = int(value)
            out[knob] = Slider(spec.label, value, int(min(spec.low, value)), int(max(spec.high, value)), 1,
                               dtype=int)
        else:
            value = float(value)
            out[knob] = Slider(spec.label, value, min(spec.low, value), max(spec.high, value), spec.step,
                               dtype=float)
    return out


def knob_values(model) -> dict[str, Any]:
    """The knob values the model runs with (a knob left unset shows the scenario file's value)."""
    params = model.scenario.resolved_params()
    return {knob: knob_value(params, knob) for knob in KNOB_SLIDERS}


def knob_summary(values: dict[str, Any], seed: Any) -> str:
    """One line naming the run's settings, e.g. "seed 0 · Vera Rubin delay 3 months · supply x1.00 · ..."."""
    parts = [f"seed {seed}", f"Vera Rubin delay {int(values['vr_delay_months'])} months",
             f"supply growth x{float(values['supply_growth_multiplier']):.2f}"]
    capex = [f"{kind} x{float(values[f'capex_multiplier_{kind}']):.2f}"
             for kind in ("hyperscaler", "neocloud", "lab", "other")]
    parts.append("capex " + ", ".join(capex))
    parts.append(f"power lead time x{float(values['power_lead_time_multiplier']):.2f}")
    return " \u00b7 ".join(parts)


def build_model(scenario_file: str | Path, seed: int = 0):
    """The model the app starts with: the file as it is (knobs unset), seeded."""
    from model.market import MarketModel

    return MarketModel(MarketScenario(scenario_file=str(scenario_file), rng=int(seed)))
