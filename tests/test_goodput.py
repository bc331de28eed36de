"""Goodput under failures: Daly's exact expected time for Poisson failures, checked against his published optimum
intervals and against a simulation of failures, checkpoints and restarts, where the first-order formula failed."""

from __future__ import annotations

import numpy as np
import pytest

from model.performance.goodput import (
    DEFAULT_GOODPUT,
    checkpoint_interval_s,
    checkpoint_s,
    goodput_fraction,
    mtbf_s,
)


@pytest.mark.parametrize(("mtbf_min", "expected_min"), [(24 * 60, 117.0), (6 * 60, 57.0), (15, 9.1)])
def test_checkpoint_interval_is_daly_s_published_optimum(mtbf_min, expected_min):
    """Daly (2006), figures 3-5: R = 10 min, dump time 5 min; M = 24 h, 6 h and 15 min give 117, 57 and 9.1 min."""
    got_min = checkpoint_interval_s(5 * 60.0, mtbf_min * 60.0) / 60.0
    assert got_min == pytest.approx(expected_min, abs=0.05 * expected_min if expected_min < 10 else 0.5)


def simulated_goodput(mtbf: float, cost: float, restart: float, interval: float, segments: int, seed: int) -> float:
    """Useful time over wall time of a job that checkpoints after every `interval` of work (the checkpoint costs
    `cost`), loses the segment it is in at each failure (Poisson, mean `mtbf`) and then restarts in `restart`,
    which a failure also interrupts."""
    rng = np.random.default_rng(seed)
    draws = iter(rng.exponential(mtbf, size=20 * segments))
    clock, done, next_failure = 0.0, 0, next(draws)
    while done < segments:
        if clock + interval + cost <= next_failure:
            clock += interval + cost
            done += 1
            continue
        clock = next_failure
        while True:  # restart until a restart completes
            next_failure = clock + next(draws)
            if clock + restart <= next_failure:
                clock += restart
                break
            clock = next_failure
    return done * interval / clock


@pytest.mark.parametrize("gpus", [16_384, 131_072, 262_144, 524_288])
def test_goodput_matches_a_simulation_of_failures_and_restarts(gpus):
    """The old first-order formula gave 0.33 at 262,144 GPUs and its floor, 0.001, at 524,288, where failures come
    every 6 minutes and a restart takes 5: a simulation of the same failures, checkpoints and restarts keeps ~30%."""
    state_gb = 0.5
    mtbf, cost = mtbf_s(gpus), checkpoint_s(state_gb)
    interval = checkpoint_interval_s(cost, mtbf)
    simulated = simulated_goodput(mtbf, cost, DEFAULT_GOODPUT.restart_s, interval, segments=20_000, seed=gpus)
    assert goodput_fraction(gpus, state_gb) == pytest.approx(simulated, rel=0.03)


def test_goodput_at_llama3_scale_is_the_reported_effective_training_time():
    """Meta reports higher than 90% effective training time for Llama 3 405B on 16,384 GPUs
    (https://arxiv.org/abs/2407.21783, section 3.3.4); failures are rare there, so the first-order formula holds."""
    mtbf, cost = mtbf_s(16_384), checkpoint_s(1.0)
    interval = np.sqrt(2 * cost * mtbf)
    first_order = 1 - cost / interval - (interval / 2 + DEFAULT_GOODPUT.restart_s) / mtbf
    assert 0.9 < goodput_fraction(16_384) < 1.0
    assert goodput_fraction(16_384) == pytest.approx(first_order, abs=0.01)


def test_goodput_falls_with_scale_and_never_reaches_zero():
    sizes = [1 << i for i in range(0, 25)]  # to the largest job a batch file may name
    values = [goodput_fraction(g, 2.0) for g in sizes]
    assert all(0 < v <= 1 for v in values)
    assert all(b < a for a, b in zip(values[8:], values[9:], strict=False))  # strictly, once failures count
