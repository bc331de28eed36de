"""Speed of the training model (run by hand; tests never time), in CPU time of one process: layouts evaluated per
second with generation included, cold and cached `train_estimate`, and the market's first-run question
(`frontier_run_days` on a grid of systems and cluster sizes, every cache cold).

    python benchmarks/perf_train.py            # this tree
    python benchmarks/perf_compare.py          # this tree against an older commit, same run, as ratios
"""

from __future__ import annotations

import json
import sys
import time

from model.hardware.systems import get_system
from model.performance import training

QUERIES = [
    ("hgx_h100", 1024, "llama3.1-405b", "fp8", 8192, 1536),
    ("gb200_nvl72", 256, "deepseek-v3", "fp8", 4096, 4096),
    ("gb300_nvl72", 4608, "llama3.1-405b", "nvfp4", 8192, 2304),
    ("vr_nvl72", 16128, "llama3.1-405b", "fp8", 8192, 2016),
    ("hgx_h100", 16, "qwen3-30b-a3b", "fp8", 4096, 1024),
    ("hgx_b200", 512, "llama3-70b", "fp8", 8192, 512),
]
FRONTIER = [(s, g) for s in ("hgx_h100", "hgx_b200", "gb200_nvl72", "gb300_nvl72", "vr_nvl72")
            for g in (1024, 4096, 16384, 65536)]


def _clear() -> None:
    for fn in ("train_estimate", "frontier_run_days", "_candidates"):
        cached = getattr(training, fn, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()
    try:
        from model.performance import training_layouts
        training_layouts.candidates.cache_clear()
    except ImportError:  # the first generation kept the generator in training.py
        pass


def _uncached(system, gpus, wl, prec, seq, gbs):
    s, w = get_system(system), training.resolve_workload(wl)
    if hasattr(training, "DEFAULT_EFFICIENCY"):
        return training.estimate_uncached(s, w, prec, seq, gbs, gpus, None, training.DEFAULT_EFFICIENCY)
    return training.estimate_uncached(s, w, prec, seq, gbs, gpus, None)


def _generator():
    try:
        from model.performance.training_layouts import candidates
        return candidates
    except ImportError:  # the first generation kept the generator in training.py
        return training._candidates


def generation_ms() -> float:
    """Layout generation alone for the sizes a market run asks about (dense frontier models on every system
    family, cluster sizes from one rack to 2^17 GPUs), caches cold."""
    gen = _generator()
    gen.cache_clear()
    args = [(g, domain, layers, heads, 0, gbs, 8192)
            for domain in (8, 72, 144) for g in [1 << k for k in range(7, 18)] + [72 * k for k in (4, 16, 64, 256)]
            for layers, heads, gbs in ((126, 128, 2048), (160, 160, 4096), (200, 192, 8192))]
    t0 = time.process_time()
    for a in args:
        gen(*a)
    return (time.process_time() - t0) / len(args) * 1e3


def measure(reps: int = 5) -> dict:
    _uncached(*QUERIES[0])  # imports and first allocations out of the way
    layouts, t_gen = 0, 0.0
    for _ in range(reps):
        _clear()
        t0 = time.process_time()
        for q in QUERIES:
            layouts += _uncached(*q).layouts_evaluated
        t_gen += time.process_time() - t0
    _clear()
    t0 = time.process_time()
    for q in QUERIES:
        training.train_estimate(*q)
    cold_ms = (time.process_time() - t0) / len(QUERIES) * 1e3
    t0 = time.process_time()
    for _ in range(2000):
        for q in QUERIES:
            training.train_estimate(*q)
    cached_us = (time.process_time() - t0) / (2000 * len(QUERIES)) * 1e6
    _clear()
    t0 = time.process_time()
    for system, gpus in FRONTIER:
        for flop in (1e25, 1e26, 1e27):
            training.frontier_run_days(system, gpus, flop)
    frontier_s = time.process_time() - t0
    gen_ms = generation_ms()
    return {"generation_ms_per_query": gen_ms, "layouts_per_query": layouts / reps / len(QUERIES),
            "layouts_per_s": layouts / t_gen,
            "cold_ms_per_query": cold_ms, "cached_us_per_query": cached_us, "frontier_grid_cold_s": frontier_s}


if __name__ == "__main__":
    result = measure()
    if "--json" in sys.argv:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value:,.3f}")
