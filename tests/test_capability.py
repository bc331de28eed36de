"""The capability table: what the market knows about each system, computed once per scenario from the performance
model, and a frontier-run lookup that never gets slower with more GPUs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    assert set(table.systems) == set(systems())


def test_value_per_gpu_is_the_h100_time_a_gpu_saves_on_a_fixed_mix_of_work(table):
    """A buyer's work is a fixed mix (a quarter training, the rest serving split by the jobs' weights): one GPU of
    the system does it in the sum of each job's share over its speed-up, so its worth in H100s is the harmonic
    mean, never above the best job's speed-up nor below the worst's, and below the arithmetic mean when the
    speed-ups differ."""
    value = table.value("gb200_nvl72")
    shares = [0.25] + [0.75 * w / sum(table.serve_weights) for w in table.serve_weights]
    ratios = [value.training, *value.serving]
    time_on_mix = sum(share / ratio for share, ratio in zip(shares, ratios, strict=True))
    worth = table.value_per_gpu("gb200_nvl72", 0.25)
    assert worth == pytest.approx(1.0 / time_on_mix)
    assert min(ratios) <= worth <= max(ratios)
    assert worth < sum(share * ratio for share, ratio in zip(shares, ratios, strict=True))


def test_a_system_that_cannot_run_a_job_of_the_mix_is_worth_nothing_on_it(table):
    from dataclasses import replace

    from model.capability.table import SystemValue

    def valuer(system: str, era: str | None) -> SystemValue:
        return SystemValue(training=2.0, serving=(3.0, 0.0), training_at_scale=(2.0,))

    cannot_serve = replace(table, valuer=valuer, _values={})
    assert cannot_serve.value_per_gpu("gb200_nvl72", 0.5) == 0.0
    assert cannot_serve.value_per_gpu("gb200_nvl72", 1.0) == pytest.approx(2.0)  # training only: it can


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


# -- frontier-run days: monotone, physically interpolated, independent of the order of questions ----------------
SHIPPING = ("hgx_h100", "hgx_h200", "hgx_b200", "gb200_nvl72", "gb300_nvl72", "vr_nvl72")


def test_no_sawtooth_one_gpu_more_is_never_slower(table):
    """The old lookup floored GPUs to a power of two and scaled linearly: 262,143 GPUs took ~21 days, 262,144
    ~42. A cluster just under a power of two is now interpolated between the sizes around it."""
    for system in SHIPPING:
        for k in (12, 15, 17, 18):
            below, at = table.reference_run_days(system, (1 << k) - 1), table.reference_run_days(system, 1 << k)
            assert at is not None and below is not None and at <= below <= 1.1 * at, (system, k)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(system=st.sampled_from(SHIPPING), small=st.integers(1, 524_288), more=st.integers(0, 524_288),
       log10_flop=st.floats(25.0, 28.5))
def test_days_never_increase_with_more_gpus(table, system, small, more, log10_flop):
    flop = 10.0**log10_flop
    fewer = table.frontier_run_days(system, small, flop)
    bigger = table.frontier_run_days(system, small + more, flop)
    if fewer is not None:
        assert bigger is not None and bigger <= fewer * (1 + 1e-12)


def test_the_lookup_follows_the_performance_model_at_grid_points(table, scenario):
    from model.performance.training import frontier_run_days

    flop = scenario.reference_frontier_flop
    for system, gpus in (("gb200_nvl72", 16_384), ("hgx_h100", 32_768), ("vr_nvl72", 65_536)):
        direct = frontier_run_days(system, gpus, flop, precision=scenario.frontier.precision)
        assert table.reference_run_days(system, gpus) <= direct * (1 + 1e-12)  # best of this size and smaller
        assert table.reference_run_days(system, gpus) >= 0.5 * direct  # and no free lunch


def _synthetic(speed: float, bend: float):
    """A made-up physical oracle: throughput linear in GPUs up to `bend`, falling beyond it (failures), a model
    that needs 64 GPUs to fit; `speed` scales every GPU."""

    def oracle(system: str, gpus: int, flop: float) -> float | None:
        if gpus < 64:
            return None
        per_day = speed * 1e21 * gpus * (bend / gpus if gpus > bend else 1.0) ** 1.5
        return flop / per_day

    return oracle


@settings(max_examples=80, deadline=None)
@given(speedup=st.floats(1.0, 4.0), bend=st.sampled_from([2_000.0, 30_000.0, 300_000.0]),
       gpus=st.lists(st.integers(1, 600_000), min_size=2, max_size=6), log10_flop=st.floats(24.0, 27.0))
def test_faster_gpus_and_more_gpus_never_take_longer(speedup, bend, gpus, log10_flop):
    from model.capability.table import FrontierDays

    flop = 10.0**log10_flop
    slow = FrontierDays(_synthetic(1.0, bend), reference_flop=1e25, max_gpus=524_288)
    fast = FrontierDays(_synthetic(speedup, bend), reference_flop=1e25, max_gpus=524_288)
    days = [slow.days("x", g, flop) for g in sorted(gpus)]
    feasible = [d for d in days if d is not None]
    assert feasible == sorted(feasible, reverse=True)  # more GPUs: never slower
    assert days[-1] is not None or all(d is None for d in days)  # once it fits, it fits on more
    for g, d in zip(sorted(gpus), days, strict=True):
        quick = fast.days("x", g, flop)
        assert (d is None) == (quick is None)
        if d is not None:
            assert quick <= d * (1 + 1e-12)


def test_answers_do_not_depend_on_the_order_of_questions():
    from model.capability.table import FrontierDays

    questions = [("x", g, f) for g in (70, 5_000, 100_000, 524_288) for f in (3e24, 1e25, 7e25, 2e26)]
    first = FrontierDays(_synthetic(1.0, 30_000.0), reference_flop=1e25, max_gpus=524_288)
    second = FrontierDays(_synthetic(1.0, 30_000.0), reference_flop=1e25, max_gpus=524_288)
    forward = [first.days(*q) for q in questions]
    backward = [second.days(*q) for q in reversed(questions)][::-1]
    assert forward == backward


def test_training_is_valued_at_the_buyers_scale(table, scenario):
    """The reference training job is also asked on 8x and 64x its GPUs (global batch growing with the cluster): a
    buyer values training at the size of the cluster new GPUs would join, each size against HGX H100 on as many
    GPUs; below the job's size and without a cluster, the job's own value."""
    sizes = table.training_sizes_gpus
    job = scenario.reference_jobs.train
    assert sizes == (job.gpus, job.gpus * 8, job.gpus * 64)
    for k in ("hgx_b200", "gb300_nvl72"):
        v = table.value(k, "2025-07")
        assert len(v.training_at_scale) == 3 and v.training_at_scale[0] == v.training
        assert table.training_ratio_at(v, None) == table.training_ratio_at(v, 8) == v.training
        assert table.training_ratio_at(v, 10**6) == v.training_at_scale[-1]
        middle = table.training_ratio_at(v, sizes[0] * 3)
        assert min(v.training_at_scale[:2]) <= middle <= max(v.training_at_scale[:2])
        whole = table.value_per_gpu(k, 1.0, "2025-07", cluster_gpus=sizes[2])
        assert whole == pytest.approx(v.training_at_scale[2])
    # a rack-scale NVLink domain keeps its lead over an 8-GPU server at scale
    gb300, b300 = table.value("gb300_nvl72", "2025-07"), table.value("hgx_b300", "2025-07")
    assert all(r > s for r, s in zip(gb300.training_at_scale, b300.training_at_scale, strict=True))


def test_frontier_days_carry_the_software_era_of_the_month(table):
    """A run on a new system takes longer on the software of its launch than on mature software, by the era's
    slowdown on the reference training job, and never longer as the eras pass; without a month, mature software."""
    gpus = 65536
    mature = table.reference_run_days("gb300_nvl72", gpus)
    months = ["2025-07", "2026-01", "2026-07", "2027-07", "2029-01"]
    days = [table.reference_run_days("gb300_nvl72", gpus, m) for m in months]
    assert days[0] > mature * 1.02
    assert days == sorted(days, reverse=True) and days[-1] >= mature - 1e-9
    assert days[0] == pytest.approx(mature * table.slowdown("gb300_nvl72", "2025-07"))
    assert table.slowdown("gb300_nvl72", "2025-08") == table.slowdown("gb300_nvl72", "2025-07")  # one era


def test_an_8_bit_training_job_runs_in_each_systems_fastest_8_bit_format():
    """TPUs without an FP8 path train 8-bit jobs in INT8 (MaxText AQT, as in their MLPerf GPT-3 runs in the validation
    data), so their value is not their BF16 rate; the serving model has no INT8, so they serve FP8 work as FP8 (at
    their BF16 rate). Systems with FP8 keep it; NVFP4 stays NVFP4 where the system has FP4."""
    from model.capability.build import SERVING_PRECISIONS, _precision

    assert systems()["tpu_v6e"].dense_tflops("int8") > systems()["tpu_v6e"].dense_tflops("fp8")
    assert _precision("tpu_v6e", "fp8") == "int8"
    assert _precision("tpu_v6e", "fp8", SERVING_PRECISIONS) == "fp8"
    assert _precision("tpu_v6e", "nvfp4", SERVING_PRECISIONS) == "fp8"
    assert _precision("tpu_v7", "fp8") == "fp8"  # Ironwood has FP8
    assert _precision("hgx_h100", "fp8") == "fp8" and _precision("hgx_h100", "nvfp4") == "fp8"
    assert _precision("gb300_nvl72", "nvfp4", SERVING_PRECISIONS) == "nvfp4"
    assert _precision("hgx_h100", "bf16") == "bf16"
