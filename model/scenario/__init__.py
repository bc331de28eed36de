"""Scenario files: TOML loading with `extends`, command-line overrides, and validation with clear errors."""

from model.scenario.loading import apply_overrides, load_scenario_dict, scenario_hash

__all__ = ["apply_overrides", "load_scenario_dict", "scenario_hash"]
