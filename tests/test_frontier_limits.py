"""How many GPUs the reference frontier run can use, and why no more.

The agents table once showed the same `frontier_run_days` (70.87 at end-2025) on every cluster from ~137k to ~318k
GPUs: goodput's first-order formula made 262,144 GPUs slower than 131,072, and a 209-layer model on 80 GB HGX H100
found no pipeline layout (32 stages were not offered), so H100 clusters stopped gaining at 65,536. Now days fall with
every doubling to 2**18 GPUs; past the limit a cluster reports the limit's days, and the limit is set by failures (a
job interrupted about as often as it takes to restart), not by the batch or the fabric.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from model.capability.build import capability_table
from model.performance.goodput import DEFAULT_GOODPUT, mtbf_s
from model.performance.training import FRONTIER_SEQ_LEN, frontier_job, train_estimate
from model.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
NVIDIA_AT_SCALE = ("hgx_h100", "hgx_h200", "hgx_b200", "gb200_nvl72", "gb300_nvl72", "vr_nvl72")


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(ROOT / "scenarios" / "baseline.toml")


@pytest.fixture(scope="module")
def table(scenario):
    return capability_table(scenario)


@pytest.mark.parametrize("system", NVIDIA_AT_SCALE)
def test_days_fall_with_every_doubling_then_stay_at_the_limit(table, scenario, system):
    """Strictly falling days up to 2**18 GPUs at least; past the limit every size reports the limit's days (the lab
    leaves the rest idle), and a size between grid points below the limit is strictly between its neighbours."""
    sizes = [1 << i for i in range(12, 21) if 1 << i <= scenario.fabric_max_gpus]
    days = [table.reference_run_days(system, g) for g in sizes]
    assert all(d is not None for d in days), (system, days)
    limit = next((i for i in range(len(days) - 1) if days[i + 1] >= days[i]), len(days) - 1)
    assert sizes[limit] >= 1 << 18, (system, dict(zip(sizes, days, strict=True)))
    assert all(later < earlier for earlier, later in zip(days[:limit], days[1:limit + 1], strict=True))
    assert all(d == days[limit] for d in days[limit:]), (system, days)
    between = table.reference_run_days(system, 3 * sizes[limit] // 4)
    assert days[limit] < between < days[limit - 1]


@pytest.mark.parametrize("system", ("hgx_h100", "gb200_nvl72", "gb300_nvl72", "vr_nvl72"))
def test_where_days_stop_falling_failures_bind_not_the_batch(scenario, system):
    """At the first doubling that no longer pays, twice the GPUs still step over 1.3x faster and the batch still
    leaves each pipeline 8 or more microbatches; what is lost is goodput: the job is interrupted about as often as a
    restart takes (mean time between failures under three restarts) and keeps under half its wall time."""
    job = frontier_job(scenario.reference_frontier_flop)
    # the run's batch is DeepSeek's compute-optimal 0.292 C**0.3271 tokens (arXiv 2401.02954), 158M tokens for
    # 5e26 FLOP, floored to a power of two in sequences: 16,384 of 8,192 tokens, whatever the cluster
    assert job.global_batch_seqs == 16_384
    runs = {i: train_estimate(system, 1 << i, job.workload, scenario.frontier.precision, FRONTIER_SEQ_LEN,
                              job.global_batch_seqs) for i in range(15, 21)}
    days = {i: job.tokens / r.tokens_per_s / r.goodput_fraction for i, r in runs.items()}
    limit = next(i for i in sorted(days)[:-1] if days[i + 1] >= days[i])
    before, after = runs[limit], runs[limit + 1]
    assert after.tokens_per_s > 1.3 * before.tokens_per_s, (system, limit)
    assert job.global_batch_seqs // (after.layout["dp"] * after.layout["microbatch"]) >= 8, after.layout
    assert mtbf_s(1 << (limit + 1)) < 3 * DEFAULT_GOODPUT.restart_s
    assert after.goodput_fraction < 0.5
