"""The market's one door to the performance model, cached.

Buyers compare systems on what the performance model says a cluster of each delivers on the scenario's reference
jobs (`[reference_jobs]`): training throughput per GPU on one training job, and serving throughput per GPU on one
or more serving jobs, each relative to HGX H100. The jobs are chosen to be feasible on every generation.
"""

from __future__ import annotations

import math
from functools import cache

from model.hardware.systems import systems
from model.performance.serving import serve_estimate
from model.performance.training import frontier_run_days as _train_frontier_days
from model.performance.training import train_estimate

BASELINE_SYSTEM = "hgx_h100"


def _precision(system: str, wanted: str) -> str:
    """The wanted precision where the system has it (NVFP4 needs Blackwell or later), else FP8."""
    return wanted if systems()[system].dense_tflops(wanted) else "fp8"


@cache
def training_tflops_per_gpu(system: str, workload: str, gpus: int, seq_len: int, global_batch_seqs: int,
                            precision: str) -> float:
    """Model TFLOP/s per GPU on a training job (0 if no layout fits)."""
    result = train_estimate(system, gpus, workload, _precision(system, precision), seq_len, global_batch_seqs)
    return result.tflops_per_gpu if result.feasible else 0.0


@cache
def serving_tokens_per_s_per_gpu(system: str, workload: str, gpus: int, input_tokens: int, output_tokens: int,
                                 scenario: str, precision: str) -> float:
    """Output tokens/s per GPU on a serving job (0 if infeasible). Systems bigger than `gpus` serve on one system."""
    used = max(gpus, systems()[system].gpus_per_system)
    result = serve_estimate(system, used, workload, _precision(system, precision), input_tokens, output_tokens,
                            scenario=scenario)
    return result.output_tokens_per_s_per_gpu if result.feasible else 0.0


def training_ratio(system: str, jobs) -> float:
    """Training throughput per GPU on the reference training job, relative to HGX H100."""
    return _train_ratio(system, jobs.train)


def _train_ratio(system: str, job) -> float:
    args = (job.workload, job.gpus, job.seq_len, job.global_batch_seqs, job.precision)
    return training_tflops_per_gpu(system, *args) / training_tflops_per_gpu(BASELINE_SYSTEM, *args)


def _serve_ratio(system: str, job) -> float:
    args = (job.workload, job.gpus, job.input_tokens, job.output_tokens, job.scenario, job.precision)
    return serving_tokens_per_s_per_gpu(system, *args) / serving_tokens_per_s_per_gpu(BASELINE_SYSTEM, *args)


def value_per_gpu(system: str, jobs, training_weight: float) -> float:
    """What one GPU of `system` delivers, in HGX H100 GPUs, on a mix of the reference training job (weight
    `training_weight`) and the serving jobs (the rest, split by their own weights)."""
    serve_jobs = jobs.serve
    total = sum(j.weight for j in serve_jobs)
    serve = sum(j.weight * _serve_ratio(system, j) for j in serve_jobs) / total
    return training_weight * _train_ratio(system, jobs.train) + (1 - training_weight) * serve


def _round_gpus(gpus: int) -> int:
    """Floor to a power of two: few distinct sizes to cache, and sizes that data-parallel layouts divide."""
    return 1 << (max(int(gpus), 1).bit_length() - 1)


@cache
def _frontier_days(system: str, gpus: int, flop: float, precision: str) -> float | None:
    return _train_frontier_days(system, gpus, flop, precision=precision)


def frontier_run_days(system: str, gpus: int, flop: float, precision: str = "fp8") -> float | None:
    """Days to train `flop` on one cluster of `gpus` of `system` (None if no layout fits).

    The run is evaluated on the cluster floored to a power of two (layouts divide it) and at the nearest FLOP on a
    grid of quarter powers of two, then scaled linearly to the cluster (the extra GPUs as more data-parallel
    replicas) and to `flop` (within 10%), so that a few hundred evaluations serve a whole run."""
    if gpus <= 0:
        return None
    step = round(math.log2(flop) * 4) / 4
    rounded = _round_gpus(gpus)
    days = _frontier_days(system, rounded, float(2.0**step), precision)
    return None if days is None else days * flop / 2.0**step * rounded / gpus
