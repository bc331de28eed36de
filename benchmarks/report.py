"""CPU time of `airace report` on one result folder, after imports (run by hand; tests never time).

    python benchmarks/report.py RESULT_FOLDER [REPEATS]

Imports the analysis package and reads nothing before the clock starts; then builds the whole report (figures,
report.md, report.html) into a temporary folder REPEATS times (default 3) and prints the best CPU time of this
process and its children, the wall time, and the CPU time of each figure in the best run.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import time

import analysis.report as report
from analysis import FIGURE_MODULES

for _name in FIGURE_MODULES:  # imports are not what is measured
    importlib.import_module(f"analysis.{_name}")


def cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def one(folder: str) -> tuple[float, float, dict[str, float]]:
    per_figure: dict[str, float] = {}
    originals = {}
    for name in FIGURE_MODULES:
        module = importlib.import_module(f"analysis.{name}")
        originals[name] = module.make

        def timed(*args, _make=module.make, _name=name, **kwargs):
            t = cpu()
            try:
                return _make(*args, **kwargs)
            finally:
                per_figure[_name] = cpu() - t

        module.make = timed
    try:
        with tempfile.TemporaryDirectory() as out:
            c, w = cpu(), time.perf_counter()
            report.build_report([folder], out, progress=False)
            return cpu() - c, time.perf_counter() - w, per_figure
    finally:
        for name, make in originals.items():
            importlib.import_module(f"analysis.{name}").make = make


def main() -> None:
    folder = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    runs = [one(folder) for _ in range(repeats)]
    best = min(runs, key=lambda r: r[0])
    print(f"report of {folder}: best CPU {best[0]:.2f} s (wall {best[1]:.2f} s) of {repeats}; "
          f"all CPU: {', '.join(f'{r[0]:.2f}' for r in runs)}")
    for name, seconds in sorted(best[2].items(), key=lambda kv: -kv[1]):
        print(f"  {name:<12} {seconds:.2f} s")


if __name__ == "__main__":
    main()
