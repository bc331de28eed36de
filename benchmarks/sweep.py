"""Sweep throughput: baseline runs per second with 1 and 2 workers, local process pool and a Dask LocalCluster.

python benchmarks/sweep.py [RUNS [REPEATS]]   (default 16 runs per sweep, best of 2 sweeps; the machine's load is
printed, since the numbers mean little on a busy machine)

Each executor is started and warmed up (one run per worker, so imports and caches are paid) before the timed
sweep; the timed part is the whole `run_sweep` call: runs, result folders, runs.parquet and the combined tables.
Scaling efficiency = (runs/s with 2 workers) / (2 x runs/s with 1 worker); the target is >= 0.8.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from model.sweep import run_sweep
from model.sweep.runner import _local_pool

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"


@contextmanager
def local_pool(workers: int):
    pool = _local_pool(workers)
    try:
        yield pool
    finally:
        pool.shutdown()


@contextmanager
def dask_cluster(workers: int):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client.get_executor(pure=False)


def measure(make, workers: int, runs: int, repeats: int, folder: Path) -> float:
    """Best runs/s over `repeats` sweeps on one warmed-up executor (the best is the least disturbed by others)."""
    rates = []
    with make(workers) as executor:
        run_sweep(BASELINE, workers, out=folder / "warm", executor=executor, base_seed=1000)
        for repeat in range(repeats):
            t0 = time.perf_counter()
            run_sweep(BASELINE, runs, out=folder / f"timed{repeat}", executor=executor)
            rates.append(runs / (time.perf_counter() - t0))
    return max(rates)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    print(f"cores: {os.cpu_count()}, load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rates = {}
    for name, make in (("local pool", local_pool), ("dask LocalCluster", dask_cluster)):
        for workers in (1, 2):
            with tempfile.TemporaryDirectory() as tmp:
                rates[name, workers] = measure(make, workers, runs, repeats, Path(tmp))
            print(f"{name:<18} {workers} worker{'s' if workers > 1 else ' '}: {rates[name, workers]:6.2f} runs/s "
                  f"(best of {repeats} sweeps of {runs} baseline runs)")
        print(f"{name:<18} scaling efficiency 1 -> 2 workers: {rates[name, 2] / (2 * rates[name, 1]):.2f}")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
