"""Speed of the serving model (run by hand; tests never time), in CPU time of one process (a busy shared machine
slows wall time, not this): milliseconds per cold `serve_estimate` query (the MLPerf-style presets and, where the
tree has them, latency targets), cached queries, and one Pareto frontier.

    python benchmarks/perf_serve.py            # this tree
    python benchmarks/perf_compare.py          # this tree against an older commit, same run, as ratios
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
import time

from model.errors import InputError
from model.performance import serving

SYSTEMS = (("hgx_h100", 8), ("hgx_h200", 16), ("hgx_b200", 8), ("gb200_nvl72", 72), ("gb300_nvl72", 144))
QUERIES = [(system, gpus, workload, "fp8", isl, 500, scenario)
           for system, gpus in SYSTEMS
           for workload in ("llama3.1-8b", "llama2-70b", "llama3.1-405b", "deepseek-r1")
           for isl in (1000, 4000)
           for scenario in ("offline", "server", "interactive")]


def measure() -> dict:
    serving.serve_estimate(*QUERIES[0])  # imports out of the way
    serving.serve_estimate.cache_clear()
    t0 = time.process_time()
    for q in QUERIES:
        serving.serve_estimate(*q)
    cold_ms = (time.process_time() - t0) / len(QUERIES) * 1e3
    t0 = time.process_time()
    for _ in range(20):
        for q in QUERIES:
            serving.serve_estimate(*q)
    cached_us = (time.process_time() - t0) / (20 * len(QUERIES)) * 1e6
    out = {"cold_ms_per_query": cold_ms, "cached_us_per_query": cached_us}
    if "min_user_tokens_per_s" in inspect.signature(serving.serve_estimate).parameters:
        serving.serve_estimate.cache_clear()
        targets = [(s, g, w, "nvfp4" if not s.startswith("hgx_h") else "fp8", isl, 1024)
                   for s, g in SYSTEMS for w in ("llama3-70b", "deepseek-r1") for isl in (1024, 8192)]
        t0 = time.process_time()
        n = 0
        for q in targets:
            for rate in (20, 50, 100):
                serving.serve_estimate(*q, min_user_tokens_per_s=rate, max_ttft_s=2.0)
                n += 1
        out["target_cold_ms_per_query"] = (time.process_time() - t0) / n * 1e3
        serving.serve_pareto.cache_clear()
        t0 = time.process_time()
        for q in targets:
            with contextlib.suppress(InputError):  # a model that does not fit the system: still timed
                serving.serve_pareto(*q)
        out["pareto_cold_ms"] = (time.process_time() - t0) / len(targets) * 1e3
    return out


if __name__ == "__main__":
    result = measure()
    if "--json" in sys.argv:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>28}: {value:,.3f}")
