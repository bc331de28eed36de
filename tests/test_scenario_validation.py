"""Scenario files and overrides: every class of bad input is one InputError line naming the file (or --set), the
field, the value and what was expected; `airace run` turns it into exit code 2 with no traceback and no output."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from model.errors import InputError
from model.scenario import apply_overrides, load_scenario_dict, validate

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


@pytest.fixture
def folder(tmp_path):
    """A folder with a copy of the baseline, so child scenarios can extend it."""
    shutil.copy(SCENARIOS / "baseline.toml", tmp_path / "baseline.toml")
    return tmp_path


def child(folder: Path, body: str, name: str = "x.toml") -> Path:
    path = folder / name
    path.write_text('extends = "baseline.toml"\n' + body)
    return path


BAD_FILES = {
    "toml syntax (with line)": ("[kinds.neocloud\npue = 1.2\n", r"x.toml: invalid TOML: .*line 2"),
    "unknown key (nearest name)": ("[kinds.neocloud]\nconstruction_lead_month = 1\n",
                                   r"x.toml: kinds.neocloud.construction_lead_month: unknown key "
                                   r"\(did you mean 'construction_lead_months'\?\)"),
    "unknown top-level table": ("[suplier]\nlaunch_premium = 0.1\n",
                                r"x.toml: suplier: unknown key \(did you mean 'supplier'\?\)"),
    "wrong type": ('[hyperscaler.microsoft.capex_usd_bn]\n"2025" = "abc"\n',
                   r"x.toml: hyperscaler.microsoft.capex_usd_bn.2025: expected a number, got 'abc'"),
    "out of range": ("[rental]\nutilization = 1.5\n", r"x.toml: rental.utilization: expected a number < 1, got 1.5"),
    "negative": ("[supplier.delay_months]\nvr_nvl72 = -2\n",
                 r"x.toml: supplier.delay_months.vr_nvl72: expected a number >= 0, got -2"),
    "unknown system key": ("[supplier.delay_months]\ngb300 = 3\n",
                           r"x.toml: supplier.delay_months.gb300: unknown system key; expected one of the catalog "
                           r"\(did you mean 'gb300_nvl72'\?\)"),
    "bad month": ('start = "2024-13"\n', r"x.toml: start: expected a month as YYYY-MM, got '2024-13'"),
    "dates out of order": ('end = "2023-06"\n', r"x.toml: end: expected a month on or after start \(2024-01\), "
                                                r"got '2023-06'"),
    "start before any system ships": ('start = "2021-01"\n', r"x.toml: start: expected a month on or after 2021-05 "
                                                             r"\(the first system's first shipment\)"),  # TPU v4
    "a reference job H100 cannot run": ("[reference_jobs.train]\ngpus = 8\n",
                                        r"x.toml: reference_jobs.train: expected a job HGX H100 can run"),
    "probabilities": ("[supplier]\nslip_probs = [0.5, 0.5, 0.5, 0.5]\n",
                      r"x.toml: supplier.slip_probs: expected probabilities summing to 1"),
    "unknown agent in a contract": ('[[contracts]]\nlab = "openai"\nprovider = "corewave"\ndate = "2026-01"\n'
                                    "value_usd_bn = 1\nduration_years = 2\n",
                                    r"x.toml: contracts.0.provider: expected a provider agent"),
    "unknown workload": ('[reference_jobs.train]\nworkload = "llama9"\ngpus = 8\nseq_len = 8192\n'
                         'global_batch_seqs = 64\nprecision = "fp8"\n',
                         r"x.toml: reference_jobs.train.workload: expected a workload of the catalog"),
    "missing extends target": (None, r"nope.toml: scenario file not found"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_scenario_files_give_one_line_naming_file_field_value_and_expectation(folder, case):
    body, pattern = BAD_FILES[case]
    if body is None:
        path = folder / "x.toml"
        path.write_text('extends = "nope.toml"\n')
    else:
        path = child(folder, body)
    with pytest.raises(InputError, match=pattern) as info:
        load_scenario_dict(path)
    assert "\n" not in str(info.value)


def test_contract_with_unknown_provider_names_the_nearest_agent(folder):
    path = child(folder, '[[contracts]]\nlab = "openai"\nprovider = "corewave"\ndate = "2026-01"\n'
                         "value_usd_bn = 1\nduration_years = 2\n")
    # a child's [[contracts]] replaces the parent's whole list (TOML arrays are not merged), so this is contract 0
    with pytest.raises(InputError, match=r"x.toml: contracts.0.provider: expected a provider agent, got 'corewave' "
                                         r"\(did you mean 'coreweave'\?\)"):
        load_scenario_dict(path)


def test_a_problem_in_the_parent_file_names_the_parent(folder):
    base = folder / "baseline.toml"
    base.write_text(base.read_text().replace("utilization = 0.7", "utilization = 7"))
    path = child(folder, "[rental]\nmargin = 0.2\n")
    with pytest.raises(InputError, match=r"baseline.toml: rental.utilization: expected a number < 1, got 7"):
        load_scenario_dict(path)


def test_a_child_can_add_an_anchor_anywhere_in_a_dated_series(folder):
    data = load_scenario_dict(child(folder, '[supplier.cowos_wafers_per_month]\n"2027-06" = 95000\n'))
    dates = list(data["supplier"]["cowos_wafers_per_month"])
    assert "2027-06" in dates and dates == sorted(dates)


def test_anchors_out_of_order_in_a_parameter_tree_are_refused():
    params = load_scenario_dict(SCENARIOS / "baseline.toml")
    params["supplier"]["hbm_tb_per_month"] = {"2026-01": 1500, "2025-01": 1000}
    with pytest.raises(InputError, match=r"parameters: supplier.hbm_tb_per_month.2025-01: expected dates in "
                                         r"increasing order"):
        validate(params, "parameters")


def test_extends_merges_tables_and_keeps_the_rest(folder):
    path = child(folder, "[rental]\nmargin = 0.2\n[supplier.delay_months]\nvr_nvl72 = 6\n")
    data = load_scenario_dict(path)
    base = load_scenario_dict(folder / "baseline.toml")
    assert data["rental"] == {**base["rental"], "margin": 0.2}
    assert data["supplier"]["delay_months"] == {**base["supplier"]["delay_months"], "vr_nvl72": 6}
    assert data["hyperscaler"] == base["hyperscaler"]


BAD_SETS = {
    "supplier.growht=2": r"--set supplier.growht: unknown key",
    "kinds.neocloud.pue=abc": r"--set kinds.neocloud.pue: expected a number, got 'abc'",
    "kinds.neocloud.pue=0.5": r"--set: kinds.neocloud.pue: expected a number >= 1, got 0.5",
    "end=2023-01": r"--set: end: expected a month on or after start",
    "supplier.delay_months.vr_nvl72=-1": r"--set: supplier.delay_months.vr_nvl72: expected a number >= 0, got -1",
    "supplier": r"expected KEY=VALUE",
    "supplier=3": r"--set supplier: is a table; set one of its keys",
}


@pytest.mark.parametrize("override", list(BAD_SETS))
def test_bad_overrides_name_the_flag_field_and_value(override):
    base = load_scenario_dict(SCENARIOS / "baseline.toml")
    with pytest.raises(InputError, match=BAD_SETS[override]):
        apply_overrides(base, [override])


def test_overrides_can_set_optional_fields_the_file_leaves_out_but_not_invent_agents():
    base = load_scenario_dict(SCENARIOS / "baseline.toml")
    assert "volume_delay_months" not in base["supplier"]
    out = apply_overrides(base, ["supplier.volume_delay_months.gb200_nvl72=4",
                                 "hyperscaler.microsoft.capex_usd_bn.2027=200"])
    assert out["supplier"]["volume_delay_months"] == {"gb200_nvl72": 4}
    assert out["hyperscaler"]["microsoft"]["capex_usd_bn"]["2027"] == 200
    with pytest.raises(InputError, match=r"--set lab.newlab: unknown key"):
        apply_overrides(base, ["lab.newlab.frontier_flop_factor=1"])
    with pytest.raises(InputError, match=r"--set supplier.volume_delay_months.gb300: unknown key"):
        apply_overrides(base, ["supplier.volume_delay_months.gb300=1"])


def test_good_overrides_keep_types_and_do_not_modify_the_input():
    base = load_scenario_dict(SCENARIOS / "baseline.toml")
    out = apply_overrides(base, ["supplier.delay_months.vr_nvl72=6", "kinds.neocloud.pue=1.3", "end=2027-12"])
    assert out["supplier"]["delay_months"]["vr_nvl72"] == 6 and out["kinds"]["neocloud"]["pue"] == 1.3
    assert out["end"] == "2027-12"
    assert base["supplier"]["delay_months"]["vr_nvl72"] == 0


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_scenario_is_valid_and_changes_the_baseline_somewhere(path):
    from model.scenario import load_scenario

    scenario = load_scenario(path)
    assert scenario.start == "2024-01" and all(getattr(scenario, kind) for kind in ("hyperscaler", "neocloud", "lab"))
    assert validate(scenario.tree, "parameters") == scenario  # the recorded tree gives the same scenario back
    if path.name != "baseline.toml":  # a story that changes nothing is not a scenario
        assert scenario.tree != load_scenario_dict(SCENARIOS / "baseline.toml")


def test_cli_exits_2_with_one_line_and_writes_nothing(folder):
    path = child(folder, '[hyperscaler.microsoft.capex_usd_bn]\n"2025" = "abc"\n')
    out = folder / "out"
    proc = subprocess.run([sys.executable, "-m", "model", "run", str(path), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].endswith("x.toml: hyperscaler.microsoft.capex_usd_bn.2025: expected a number, got 'abc'")
    assert not out.exists()
    proc = subprocess.run([sys.executable, "-m", "model", "run", str(SCENARIOS / "baseline.toml"), "--out", str(out),
                           "--set", "kinds.neocloud.pue=0.5"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--set: kinds.neocloud.pue: expected a number >= 1, got 0.5" in proc.stderr
    assert not out.exists()
    proc = subprocess.run([sys.executable, "-m", "model", "run", str(SCENARIOS / "baseline.toml"), "--out", str(out),
                           "--seed", "-1"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--seed: expected a whole number >= 0, got '-1'" in proc.stderr
    assert not out.exists()


def test_kind_specific_fields_are_required_on_their_kind_and_refused_on_others(folder):
    with pytest.raises(InputError, match=r"x.toml: kinds.hyperscaler.debt_multiple_of_backlog: unknown key"):
        load_scenario_dict(child(folder, "[kinds.hyperscaler]\ndebt_multiple_of_backlog = 0.3\n"))
    base = folder / "baseline.toml"
    text = base.read_text()
    lab_table = text.index("[kinds.lab]")
    base.write_text(text[:lab_table] + text[lab_table:].replace("contract_years = 5", "", 1))
    with pytest.raises(InputError, match=r"baseline.toml: kinds.lab.contract_years: missing; expected a value here"):
        load_scenario_dict(child(folder, ""))


def test_validation_gives_frozen_typed_models_with_defaults_filled_in():
    from pydantic import ValidationError

    from model.scenario import load_scenario
    from model.scenario.schema import LabKind, NeocloudKind

    scenario = load_scenario(SCENARIOS / "baseline.toml", ["kinds.neocloud.pue=1.3"])
    assert isinstance(scenario.kinds.neocloud, NeocloudKind) and isinstance(scenario.kinds.lab, LabKind)
    assert scenario.kinds.neocloud.pue == 1.3 and isinstance(scenario.kinds.neocloud.debt_multiple_of_backlog, float)
    assert scenario.lab["anthropic"].capex_usd_bn == {} and scenario.lab["openai"].power_mw_start == 0.0
    assert scenario.supplier.volume_delay_months == {}  # a default, not in the file
    assert "volume_delay_months" not in scenario.tree["supplier"]  # the tree is what the files and --set say
    with pytest.raises(ValidationError):
        scenario.kinds.neocloud.pue = 2.0
    tree = scenario.tree
    tree["end"] = "2099-12"
    assert scenario.tree["end"] == "2030-12"  # `tree` is a copy


def test_a_run_validates_its_scenario_once(monkeypatch):
    from model.market import run_params
    from model.scenario import load_scenario, validation

    calls = []
    check = validation.check
    monkeypatch.setattr(validation, "check", lambda tree: calls.append(1) or check(tree))
    scenario = load_scenario(SCENARIOS / "baseline.toml", ["end=2024-03", "kinds.neocloud.pue=1.3"])
    run_params(scenario, seed=0)
    assert len(calls) == 1


def test_a_problem_only_an_override_causes_is_blamed_on_the_override_and_one_in_the_file_on_the_file(folder):
    from model.scenario import load_scenario

    with pytest.raises(InputError, match=r"^--set: end: expected a month on or after start \(2031-01\)"):
        load_scenario(SCENARIOS / "baseline.toml", ["start=2031-01"])
    path = child(folder, "[rental]\nutilization = 7\n")
    with pytest.raises(InputError, match=r"x.toml: rental.utilization: expected a number < 1, got 7"):
        load_scenario(path, ["kinds.neocloud.pue=1.3"])
