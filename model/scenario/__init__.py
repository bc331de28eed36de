"""Scenario files: TOML loading with `extends`, command-line overrides, and validation into a typed `Scenario`."""

from model.scenario.loading import (
    apply_overrides,
    load_scenario,
    load_scenario_dict,
    override_scenario,
    scenario_from_tree,
    scenario_hash,
)
from model.scenario.schema import Scenario
from model.scenario.validation import validate

__all__ = ["Scenario", "apply_overrides", "load_scenario", "load_scenario_dict", "override_scenario",
           "scenario_from_tree", "scenario_hash", "validate"]
