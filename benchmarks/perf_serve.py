"""Milliseconds per `serve_estimate` query, cold (distinct queries) and cached (repeats). Run by hand."""

from __future__ import annotations

import time

from model.performance.serving import serve_estimate

QUERIES = [
    (system, gpus, workload, precision, isl, 500, scenario)
    for system, gpus in (("hgx_h100", 8), ("hgx_h200", 16), ("hgx_b200", 8), ("gb200_nvl72", 72), ("gb300_nvl72", 144))
    for workload in ("llama3.1-8b", "llama2-70b", "llama3.1-405b", "deepseek-r1")
    for precision in ("fp8",)
    for isl in (1000, 4000)
    for scenario in ("offline", "server", "interactive")
]


def main() -> None:
    serve_estimate.cache_clear()
    start = time.perf_counter()
    for q in QUERIES:
        serve_estimate(*q)
    cold_ms = (time.perf_counter() - start) * 1000 / len(QUERIES)
    start = time.perf_counter()
    for _ in range(10):
        for q in QUERIES:
            serve_estimate(*q)
    cached_ms = (time.perf_counter() - start) * 1000 / (10 * len(QUERIES))
    print(f"{len(QUERIES)} queries: cold {cold_ms:.2f} ms/query, cached {cached_ms:.4f} ms/query")


if __name__ == "__main__":
    main()
