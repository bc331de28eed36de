"""The market's one door to the performance model, cached.

Agents compare systems on what the performance model says a cluster of each delivers: training throughput on a
reference dense model and serving throughput on a reference chat workload. The reference jobs are parameters of
the market's view, chosen to be feasible on every generation from HGX H100 on.
"""

from __future__ import annotations

from functools import cache

from model.hardware.systems import systems
from model.performance.serving import serve_estimate
from model.performance.training import frontier_run_days as _train_frontier_days
from model.performance.training import train_estimate

# Reference jobs (assumptions): Llama 3.1 405B pre-training at 576 GPUs (8 NVL72 racks, 72 HGX servers), and
# Llama 3 70B chat serving (1k in / 1k out, MLPerf-style server latency limits) on one system.
TRAIN_REFERENCE = {"workload": "llama3.1-405b", "gpus": 576, "seq_len": 8192, "global_batch_seqs": 1152}
SERVE_REFERENCE = {"workload": "llama3-70b", "input_tokens": 1024, "output_tokens": 1024, "scenario": "server"}


def _best_precision(system: str, low: str) -> str:
    return low if systems()[system].dense_tflops(low) else "fp8"


@cache
def training_tflops_per_gpu(system: str, precision: str = "fp8") -> float:
    """Model TFLOP/s per GPU on the reference training job (0 if it cannot run there)."""
    result = train_estimate(system, TRAIN_REFERENCE["gpus"], TRAIN_REFERENCE["workload"],
                            _best_precision(system, precision), TRAIN_REFERENCE["seq_len"],
                            TRAIN_REFERENCE["global_batch_seqs"])
    return result.tflops_per_gpu if result.feasible else 0.0


@cache
def serving_tokens_per_s_per_gpu(system: str) -> float:
    """Output tokens/s per GPU on the reference serving job, one system, best precision (0 if infeasible)."""
    gpus = max(systems()[system].gpus_per_system, 8)
    result = serve_estimate(system, gpus, SERVE_REFERENCE["workload"], _best_precision(system, "nvfp4"),
                            SERVE_REFERENCE["input_tokens"], SERVE_REFERENCE["output_tokens"],
                            scenario=SERVE_REFERENCE["scenario"])
    return result.output_tokens_per_s_per_gpu if result.feasible else 0.0


def _round_gpus(gpus: int) -> int:
    return 1 << (max(int(gpus), 1).bit_length() - 1)  # floor to a power of 2 for caching


@cache
def _frontier_days(system: str, gpus: int, flop: float) -> float | None:
    return _train_frontier_days(system, gpus, flop, precision="fp8")


def frontier_run_days(system: str, gpus: int, flop: float) -> float | None:
    """Days to train `flop` on one cluster of `gpus` of `system` (None if no layout fits)."""
    if gpus <= 0:
        return None
    return _frontier_days(system, _round_gpus(gpus), float(flop))
