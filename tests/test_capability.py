"""The capability table: what the market knows about each system, computed once per scenario from the performance
model, and a frontier-run lookup that never gets slower with more GPUs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from model.capability.build import build_capability_table, capability_table
from model.hardware.systems import systems
from model.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(BASELINE)


@pytest.fixture(scope="module")
def table(scenario):
    return capability_table(scenario)


def test_values_are_relative_to_hgx_h100_and_newer_generations_deliver_more(table):
    assert table.training_ratio("hgx_h100") == 1.0
    for weight in (0.0, 0.3, 1.0):
        assert table.value_per_gpu("hgx_h100", weight) == pytest.approx(1.0)
    # per GPU, each NVIDIA generation trains and serves the reference jobs faster than the one before
    for older, newer in (("hgx_h100", "hgx_b200"), ("hgx_b200", "vr_nvl72"), ("gb200_nvl72", "gb300_nvl72")):
        assert table.training_ratio(newer) > table.training_ratio(older)
        assert table.value_per_gpu(newer, 0.0) > table.value_per_gpu(older, 0.0)
    assert set(table.values) == set(systems())


def test_value_per_gpu_mixes_training_and_serving_by_the_buyers_weight(table):
    value = table.values["gb200_nvl72"]
    serving = sum(w * r for w, r in zip(table.serve_weights, value.serving, strict=True)) / sum(table.serve_weights)
    assert table.value_per_gpu("gb200_nvl72", 0.25) == pytest.approx(0.25 * value.training + 0.75 * serving)


def test_one_table_per_scenario_inputs_in_a_process(scenario, table):
    from model.scenario import override_scenario

    later = override_scenario(scenario, ["end=2027-12", "kinds.neocloud.pue=1.3"])
    assert capability_table(later) is table  # inputs the table does not depend on
    other_jobs = override_scenario(scenario, ["reference_jobs.train.global_batch_seqs=2304"])
    assert capability_table(other_jobs) is not table
    assert build_capability_table(scenario) is not table  # building is explicit; the cache is the shared one


def test_the_market_never_imports_the_performance_model():
    """The market reads the capability table it is given; only model.capability asks the performance model."""
    for path in sorted((ROOT / "model" / "market").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith("model.performance") for n in names), path.name
