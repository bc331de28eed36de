"""Speed of the training layout search (run by hand): layouts evaluated per second and ms per query."""

import time

from model.hardware.systems import get_system
from model.performance.training import (
    DEFAULT_EFFICIENCY,
    _candidates,
    estimate_uncached,
    resolve_workload,
    train_estimate,
)

QUERIES = [
    ("hgx_h100", 1024, "llama3.1-405b", "fp8", 8192, 1536),
    ("gb200_nvl72", 256, "deepseek-v3", "fp8", 4096, 4096),
    ("gb300_nvl72", 4608, "llama3.1-405b", "nvfp4", 8192, 2304),
    ("vr_nvl72", 16128, "llama3.1-405b", "fp8", 8192, 2016),
    ("hgx_h100", 16, "qwen3-30b-a3b", "fp8", 4096, 1024),
]


def main() -> None:
    layouts, t0 = 0, time.perf_counter()
    for system, gpus, wl, prec, seq, gbs in QUERIES:
        result = estimate_uncached(get_system(system), resolve_workload(wl), prec, seq, gbs, gpus, None,
                                   DEFAULT_EFFICIENCY)
        layouts += result.layouts_evaluated
    cold = time.perf_counter() - t0
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        for system, gpus, wl, prec, seq, gbs in QUERIES:
            estimate_uncached(get_system(system), resolve_workload(wl), prec, seq, gbs, gpus, None,
                              DEFAULT_EFFICIENCY)
    warm_candidates = (time.perf_counter() - t0) / reps
    for q in QUERIES:
        train_estimate(*q)
    t0 = time.perf_counter()
    for _ in range(1000):
        for q in QUERIES:
            train_estimate(*q)
    cached = (time.perf_counter() - t0) / (1000 * len(QUERIES))
    print(f"candidate cache: {_candidates.cache_info()}")
    print(f"layouts per query (mean): {layouts / len(QUERIES):,.0f}")
    print(f"cold (candidate generation + evaluation): {cold / len(QUERIES) * 1e3:.1f} ms/query")
    print(f"uncached evaluation: {warm_candidates / len(QUERIES) * 1e3:.2f} ms/query, "
          f"{layouts / warm_candidates:,.0f} layouts/s")
    print(f"cached train_estimate: {cached * 1e6:.2f} us/query")


if __name__ == "__main__":
    main()
