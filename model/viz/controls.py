"""What a run in the app is made of, and the model the app runs.

A run is `RunSettings`: a scenario file, the value of each knob, a seed. The page edits a draft of it (scenario
choice, sliders, seed); "Apply" builds the model from exactly that draft; Mesa's Reset rebuilds the current run from
its start. A knob is a named dotted path of the scenario (`model.scenario.mesa_scenario.KNOBS`); a knob whose value
differs from the file's becomes a `--set`-style override, so the app changes a run through the same validated path
as `airace run --set`, and a run with the sliders untouched is the file as it is.

The model is reached only here (`AppModel`, `applied_settings`, `scenario_value`), so a change of the market's
constructor or of the scenario object touches this module only.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from model.errors import InputError
from model.market import MarketModel
from model.scenario import load_scenario
from model.scenario.mesa_scenario import DEFAULT_SCENARIO_FILE, KNOBS, MarketScenario, knob_value
from model.viz.launch import ENV_SCENARIO, ENV_SEED

SCENARIO_DIR = DEFAULT_SCENARIO_FILE.parent
SEED_MAX = 99


@dataclass(frozen=True)
class KnobSlider:
    """How one knob is shown: label (with unit), range, step, and how its value is written."""

    label: str
    low: float
    high: float
    step: float
    integer: bool = False

    def shown(self, value: float) -> str:
        return f"{int(value)}" if self.integer else f"\u00d7{value:.2f}"


KNOB_SLIDERS: dict[str, KnobSlider] = {
    "vr_delay_months": KnobSlider("Vera Rubin delay (months)", 0, 24, 1, integer=True),
    "supply_growth_multiplier": KnobSlider("Supply growth", 0.25, 2.0, 0.05),
    "capex_multiplier_hyperscaler": KnobSlider("Capex hyperscalers", 0.25, 3.0, 0.05),
    "capex_multiplier_neocloud": KnobSlider("Capex neoclouds", 0.25, 3.0, 0.05),
    "capex_multiplier_lab": KnobSlider("Capex labs", 0.25, 3.0, 0.05),
    "capex_multiplier_other": KnobSlider("Capex rest of market", 0.25, 3.0, 0.05),
    "power_lead_time_multiplier": KnobSlider("Power lead time", 0.25, 3.0, 0.05),
}


def snap_to_step(knob: str, value: float) -> float | int:
    """The slider's value as the knob takes it: a whole number, or a multiple of the step (no 1.1500000000000001)."""
    spec = KNOB_SLIDERS[knob]
    if spec.integer:
        return int(round(value))
    decimals = max(0, -math.floor(math.log10(spec.step)))
    return round(round(value / spec.step) * spec.step, decimals)


@dataclass(frozen=True)
class RunSettings:
    """A scenario file, a value for every knob, and a seed: what one run of the app is."""

    scenario_file: str
    knobs: tuple[tuple[str, float | int], ...]
    seed: int

    @classmethod
    def of_scenario(cls, scenario_file: str | Path, seed: int = 0) -> RunSettings:
        """The file as it is: every knob at the file's value."""
        path = str(Path(scenario_file).resolve())
        return cls(path, file_knobs(path), int(seed))

    def knob(self, name: str) -> float | int:
        return dict(self.knobs)[name]

    def with_knob(self, name: str, value: float) -> RunSettings:
        values = dict(self.knobs)
        values[name] = snap_to_step(name, value)
        return replace(self, knobs=tuple(values.items()))

    def with_scenario(self, scenario_file: str | Path) -> RunSettings:
        """Another scenario file, its knobs at that file's values, the same seed."""
        return RunSettings.of_scenario(scenario_file, self.seed)

    def with_seed(self, seed: int) -> RunSettings:
        return replace(self, seed=int(seed))

    def overrides(self) -> tuple[str, ...]:
        """`dotted.path=value` for each knob that differs from the file's value."""
        base = dict(file_knobs(self.scenario_file))
        return tuple(f"{KNOBS[k]}={v}" for k, v in self.knobs if v != base[k])

    @property
    def name(self) -> str:
        return Path(self.scenario_file).name

    def summary(self) -> str:
        """"rubin_delay.toml · seed 3 · Vera Rubin delay 6 · Supply growth ×1.15 · ..." (every knob)."""
        parts = [self.name, f"seed {self.seed}"]
        parts += [f"{KNOB_SLIDERS[k].label.split(' (')[0]} {KNOB_SLIDERS[k].shown(v)}" for k, v in self.knobs]
        return " \u00b7 ".join(parts)


@cache
def file_knobs(scenario_file: str) -> tuple[tuple[str, float | int], ...]:
    """Every knob's value in a scenario file (its neutral value where the file is silent), in `KNOB_SLIDERS` order."""
    scenario = load_scenario(scenario_file)
    return tuple((k, snap_to_step(k, knob_value(scenario, k))) for k in KNOB_SLIDERS)


# -- scenarios to choose from -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScenarioChoice:
    path: str  # absolute
    name: str  # file name
    story: str  # the file's opening comment, what the scenario asks


def scenario_story(path: str | Path) -> str:
    """The comment lines a scenario file opens with, joined: its story."""
    lines = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(lines)


def scenario_choices(current: str | Path | None = None) -> list[ScenarioChoice]:
    """`scenarios/*.toml` (baseline first, then by name), plus `current` when it lives elsewhere."""
    paths = sorted(SCENARIO_DIR.glob("*.toml"), key=lambda p: (p.name != DEFAULT_SCENARIO_FILE.name, p.name))
    if current is not None and Path(current).resolve() not in {p.resolve() for p in paths}:
        paths.insert(0, Path(current))
    return [ScenarioChoice(str(p.resolve()), p.name, scenario_story(p)) for p in paths]


def scenario_from_env() -> Path:
    """The scenario file the app opens with: $AIRACE_VIZ_SCENARIO, else scenarios/baseline.toml."""
    return Path(os.environ.get(ENV_SCENARIO) or DEFAULT_SCENARIO_FILE).resolve()


def seed_from_env() -> int:
    """The initial seed: $AIRACE_VIZ_SEED, else 0."""
    text = os.environ.get(ENV_SEED) or "0"
    try:
        return int(text)
    except ValueError:
        raise InputError(f"${ENV_SEED}: seed {text!r} is not a whole number") from None


# -- the model ----------------------------------------------------------------------------------------------------
class AppModel(MarketModel):
    """The market model as the app runs it: built from `RunSettings`, and never stepping past the scenario's last
    month, however many steps Mesa's controller asks for (its Render Interval steps several months per click).

    Mesa's Reset rebuilds a model as `type(model)(**model_params, scenario=...)`; the app's `model_params` carry
    the current run's `settings`, so Reset replays this run from its start.
    """

    def __init__(self, scenario: MarketScenario | None = None, *, settings: RunSettings | None = None):
        if settings is not None:
            scenario = MarketScenario(scenario_file=settings.scenario_file, overrides=settings.overrides(),
                                      rng=settings.seed)
        super().__init__(scenario)
        self.settings = settings

    def step(self) -> None:
        if self.running:
            super().step()


def build_model(settings: RunSettings) -> AppModel:
    return AppModel(settings=settings)


def applied_settings(model) -> RunSettings:
    """The settings the model actually runs with, read back from the typed scenario it runs (`model.spec`) and its
    seed."""
    values = tuple((k, snap_to_step(k, knob_value(model.spec, k))) for k in KNOB_SLIDERS)
    return RunSettings(model.scenario.scenario_file, values, int(model.scenario.rng))


def scenario_value(model, key: str) -> Any:
    """A top-level value of the scenario the model runs (e.g. `at_scale_gpus`)."""
    return getattr(model.spec, key)
