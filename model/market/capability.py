"""The market's one door to the performance model, cached.

If `model.performance.training.frontier_run_days` exists it is used; otherwise (and for throughput questions, until
the adapter is wired to train_estimate/serve_estimate) a clearly-labelled ROOFLINE FALLBACK is used:
training = dense FP8 peak x 0.4; serving = 0.4 x geometric mean of dense FP4 (else FP8) peak and HBM bandwidth,
scaled to tokens/s. These are placeholders, documented here only.
"""

from __future__ import annotations

import importlib
import math
from functools import cache

from model.hardware.systems import systems

ROOFLINE_EFFICIENCY = 0.4  # assumption: fallback MFU


def _perf_fn(module: str, name: str):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


@cache
def training_tflops_per_gpu(system: str, precision: str = "fp8") -> float:
    peak = systems()[system].dense_tflops(precision) or systems()[system].dense_tflops("bf16")
    return ROOFLINE_EFFICIENCY * peak


@cache
def serving_tokens_per_s_per_gpu(system: str) -> float:
    s = systems()[system]
    flops = s.dense_tflops("fp4") or s.dense_tflops("fp8")
    return ROOFLINE_EFFICIENCY * math.sqrt(flops * s.hbm_tb_s * 1000.0)


def _round_gpus(gpus: int) -> int:
    return 1 << (max(int(gpus), 1).bit_length() - 1)  # floor to a power of 2 for caching


@cache
def _frontier_days(system: str, gpus: int, flop: float) -> float | None:
    fn = _perf_fn("model.performance.training", "frontier_run_days")
    if fn is not None:
        try:
            return fn(systems()[system], gpus, flop, precision="fp8")
        except Exception:  # noqa: BLE001 - the real model is under construction; fall back
            pass
    return flop / (gpus * training_tflops_per_gpu(system) * 1e12) / 86400.0


def frontier_run_days(system: str, gpus: int, flop: float) -> float | None:
    if gpus <= 0:
        return None
    return _frontier_days(system, _round_gpus(gpus), float(flop))
