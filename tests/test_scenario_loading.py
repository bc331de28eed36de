"""Scenario loading: extends, overrides, and one clear error per class of bad input."""

import pytest

from model.errors import InputError
from model.scenario import apply_overrides, load_scenario_dict


def write(path, text):
    path.write_text(text)
    return path


def test_extends_merges_tables(tmp_path):
    write(tmp_path / "base.toml", "start = '2024-01'\n[supply]\nslip_months = 0\ngrowth = 1.5\n")
    child = write(tmp_path / "child.toml", "extends = 'base.toml'\n[supply]\nslip_months = 6\n")
    data = load_scenario_dict(child)
    assert data == {"start": "2024-01", "supply": {"slip_months": 6, "growth": 1.5}}


def test_toml_syntax_error_names_file_and_line(tmp_path):
    bad = write(tmp_path / "bad.toml", "start = '2024-01'\n[supply\n")
    with pytest.raises(InputError, match=r"bad.toml: invalid TOML: .*line 2"):
        load_scenario_dict(bad)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="nope.toml: scenario file not found"):
        load_scenario_dict(tmp_path / "nope.toml")


def test_override_types_and_unknown_keys():
    data = {"supply": {"slip_months": 0, "growth": 1.5, "name": "x"}}
    out = apply_overrides(data, ["supply.slip_months=6", "supply.growth=2"])
    assert out["supply"] == {"slip_months": 6, "growth": 2.0, "name": "x"}
    assert data["supply"]["slip_months"] == 0  # the input is not modified
    with pytest.raises(InputError, match=r"--set supply.growht: unknown key \(did you mean 'growth'\?\)"):
        apply_overrides(data, ["supply.growht=2"])
    with pytest.raises(InputError, match="--set supply.growth: expected a number, got 'abc'"):
        apply_overrides(data, ["supply.growth=abc"])
    with pytest.raises(InputError, match="expected KEY=VALUE"):
        apply_overrides(data, ["supply.growth"])
