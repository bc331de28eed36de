"""Build the capability table of a scenario by asking the performance model; one table per scenario inputs per
process, so that the runs of a sweep (and repeated runs in the app) share it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache, partial

from model.capability.table import CapabilityTable, FrontierDays, SystemValue
from model.hardware.systems import systems
from model.performance.serving import PRECISIONS as SERVING_PRECISIONS
from model.performance.serving import serve_estimate
from model.performance.training import PRECISIONS as TRAINING_PRECISIONS
from model.performance.training import frontier_run_days, train_estimate
from model.scenario.schema import BASELINE_SYSTEM, ReferenceJobs, Scenario, ServeJob, TrainJob

_TABLES: dict[str, CapabilityTable] = {}


def _precision(system: str, wanted: str, supported: Sequence[str] = TRAINING_PRECISIONS) -> str:
    """The wanted precision where the system has it (NVFP4 needs Blackwell or later); an 8-bit job, and a 4-bit one
    on a system without FP4, runs in the system's fastest 8-bit format that the performance model can run for the
    job (`supported`): FP8, or INT8 where a TPU has no FP8 path (TPUs train in INT8 with MaxText's AQT, as in
    their MLPerf GPT-3 runs in validation/vendor_runs.csv; the serving model has no INT8, so TPUs serve FP8 work
    at their BF16 rate)."""
    s = systems()[system]
    if wanted != "fp8" and s.dense_tflops(wanted):
        return wanted
    eight_bit = [p for p in ("fp8", "int8") if p in supported and s.dense_tflops(p)]
    return max(eight_bit, key=lambda p: s.dense_tflops(p) or 0.0, default="fp8")


@cache  # the HGX H100 baseline is asked once per era, not once per system valued against it
def training_tflops_per_gpu(system: str, job: TrainJob, era: str | None = None) -> float:
    """Model TFLOP/s per GPU on a training job with the software of `era` (0 if no layout fits)."""
    result = train_estimate(system, job.gpus, job.workload, _precision(system, job.precision), job.seq_len,
                            job.global_batch_seqs, date=era)
    return result.tflops_per_gpu if result.feasible else 0.0


@cache
def serving_tokens_per_s_per_gpu(system: str, job: ServeJob, era: str | None = None) -> float:
    """Output tokens/s per GPU on a serving job with the software of `era` (0 if infeasible). Systems bigger
    than the job serve on one system."""
    used = max(job.gpus, systems()[system].gpus_per_system)
    result = serve_estimate(system, used, job.workload, _precision(system, job.precision, SERVING_PRECISIONS),
                            job.input_tokens, job.output_tokens, scenario=job.scenario, date=era)
    return result.output_tokens_per_s_per_gpu if result.feasible else 0.0


def _frontier_oracle(precision: str, system: str, gpus: int, flop: float) -> float | None:
    """Days of a frontier run at the scenario's precision, in the system's own format for it (`_precision`)."""
    return frontier_run_days(system, gpus, flop, precision=_precision(system, precision))


def _peak_flop_per_gpu_day(precision: str, system: str) -> float:
    """Dense peak FLOP per day of one GPU at the run's precision (FP8 where the system lacks it): no training run
    does better."""
    return systems()[system].dense_tflops(_precision(system, precision)) * 1e12 * 86400.0


def table_key(scenario: Scenario) -> str:
    """A hash of the scenario inputs the table depends on (the catalog and the performance model are fixed within
    a process)."""
    inputs = {"reference_jobs": scenario.reference_jobs.model_dump(), "precision": scenario.frontier.precision,
              "era_months": scenario.valuation.software_era_months,
              "scale_steps": scenario.valuation.training_scale_steps,
              "reference_flop": scenario.reference_frontier_flop, "max_gpus": scenario.fabric_max_gpus}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def training_sizes_gpus(jobs: ReferenceJobs, scale_steps: Sequence[int]) -> tuple[int, ...]:
    """The reference training job's own size, then that size times each step (`valuation.training_scale_steps`:
    the buyers' own scale)."""
    return (jobs.train.gpus, *(jobs.train.gpus * step for step in scale_steps))


def _at_scale(job: TrainJob, gpus: int) -> TrainJob:
    """The reference training job on `gpus` GPUs, its global batch growing with the cluster (sequences per GPU
    kept), as large runs do."""
    per_gpu = job.global_batch_seqs / job.gpus
    return job.model_copy(update={"gpus": gpus, "global_batch_seqs": max(job.global_batch_seqs,
                                                                       round(per_gpu * gpus))})


def _ratio(system: str, job: TrainJob, era: str | None) -> float:
    base = training_tflops_per_gpu(BASELINE_SYSTEM, job, era)
    return training_tflops_per_gpu(system, job, era) / base if base > 0 else 0.0


def _software_slowdown(job: TrainJob, system: str, era: str | None) -> float:
    """How many times longer the reference training job takes on `system` with `era`'s software than with mature
    software (1 where either has no layout)."""
    mature, then = training_tflops_per_gpu(system, job, None), training_tflops_per_gpu(system, job, era)
    return mature / then if mature > 0 and then > 0 else 1.0


def _value(jobs: ReferenceJobs, sizes_gpus: tuple[int, ...], system: str, era: str | None) -> SystemValue:
    """One system's throughput per GPU on the reference jobs relative to HGX H100, both on `era`'s software; the
    training job also at the larger sizes of `sizes_gpus` (`training_sizes_gpus`)."""
    scaled = tuple(_ratio(system, _at_scale(jobs.train, gpus), era) for gpus in sizes_gpus)
    serve = tuple(serving_tokens_per_s_per_gpu(system, job, era) / serving_tokens_per_s_per_gpu(BASELINE_SYSTEM,
                                                                                                 job, era)
                  for job in jobs.serve)
    return SystemValue(training=scaled[0], serving=serve, training_at_scale=scaled)


def build_capability_table(scenario: Scenario) -> CapabilityTable:
    """A new table for the scenario: every system of the catalog valued on the reference jobs against HGX H100,
    era by era as the market asks."""
    jobs = scenario.reference_jobs
    sizes = training_sizes_gpus(jobs, scenario.valuation.training_scale_steps)
    return CapabilityTable(valuer=partial(_value, jobs, sizes), systems=tuple(systems()),
                           serve_weights=tuple(job.weight for job in jobs.serve),
                           serve_since=tuple(job.since for job in jobs.serve),
                           era_months=scenario.valuation.software_era_months,
                           training_sizes_gpus=sizes,
                           software_slowdown=partial(_software_slowdown, jobs.train),
                           frontier=FrontierDays(partial(_frontier_oracle, scenario.frontier.precision),
                                                 reference_flop=scenario.reference_frontier_flop,
                                                 max_gpus=scenario.fabric_max_gpus,
                                                 peak_flop_per_gpu_day=partial(_peak_flop_per_gpu_day,
                                                                               scenario.frontier.precision)))


def capability_table(scenario: Scenario) -> CapabilityTable:
    """The scenario's table, built on first use in this process and shared by later runs with the same inputs."""
    key = table_key(scenario)
    if key not in _TABLES:
        _TABLES[key] = build_capability_table(scenario)
    return _TABLES[key]
