"""CPU and wall time of `airace report` on result folders, after imports (run by hand; tests never time).

    python benchmarks/report.py RUN [SWEEP ...] [--repeats N] [--jobs N] [--against SRC]

Each positional argument is one report to build (join folders with "+" for one report of several inputs), e.g. one
run of the baseline and a 5-run sweep of it:

    airace run scenarios/baseline.toml --out /tmp/b && airace sweep scenarios/baseline.toml --runs 5 --out /tmp/s
    git archive START | tar -x -C /tmp/old
    python benchmarks/report.py /tmp/b /tmp/s --against /tmp/old

Each build runs in a fresh subprocess that imports the analysis package before the clock starts, then builds the
whole report into a temporary folder and reports the CPU time of the main process, of the main process and its
workers together (what the report costs), and the wall time. `--repeats` (default 3) builds per report and tree;
with `--against SRC` (another checkout's source tree, e.g. the commit you started from, exported with `git
archive`) this tree and SRC alternate, so both share the machine's load, and the ratios this/against of the best
CPU (and of the median CPU) and the best wall are printed; `--against-python` runs SRC with another interpreter
(another venv, e.g. with another matplotlib release, on the same or another tree). `--jobs 1` draws in the main
process (per-figure CPU times are printed then).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def cpu(children: bool = True) -> float:
    t = os.times()
    return t.user + t.system + ((t.children_user + t.children_system) if children else 0.0)


def one(folders: list[str], jobs: int | None) -> dict:
    """One build in this process: CPU (own, with workers), wall and per-figure CPU when drawn here."""
    import inspect

    import analysis.report as report
    from analysis import FIGURE_MODULES

    per_figure: dict[str, float] = {}
    originals = {}
    for name in FIGURE_MODULES:
        module = importlib.import_module(f"analysis.{name}")
        originals[name] = module.make

        def timed(*args, _make=module.make, _name=name, **kwargs):
            t = cpu(children=False)
            try:
                return _make(*args, **kwargs)
            finally:
                per_figure[_name] = cpu(children=False) - t

        module.make = timed
    kwargs = {}
    params = inspect.signature(report.build_report).parameters
    if "progress" in params:
        kwargs["progress"] = False
    if "jobs" in params and jobs is not None:
        kwargs["jobs"] = jobs
    try:
        with tempfile.TemporaryDirectory() as out:
            own, total, wall = cpu(children=False), cpu(), time.perf_counter()
            report.build_report(folders, out, **kwargs)
            return {"own": cpu(children=False) - own, "total": cpu() - total, "wall": time.perf_counter() - wall,
                    "figures": per_figure}
    finally:
        for name, make in originals.items():
            importlib.import_module(f"analysis.{name}").make = make


def child(folders: list[str], jobs: int | None) -> dict:
    """Import everything, then measure one build (the subprocess side of --against)."""
    import analysis.report  # noqa: F401
    from analysis import FIGURE_MODULES

    for name in FIGURE_MODULES:
        importlib.import_module(f"analysis.{name}")
    return one(folders, jobs)


def _subprocess(src: str, folders: list[str], jobs: int | None, python: str = sys.executable) -> dict:
    env = {**os.environ, "PYTHONPATH": src}
    args = [python, __file__, *folders, "--child"] + (["--jobs", str(jobs)] if jobs else [])
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=src)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(rows: list[dict], key: str) -> float:
    return min(r[key] for r in rows)


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def _line(name: str, rows: list[dict]) -> str:
    best = min(rows, key=lambda r: r["total"])
    return (f"  {name}: CPU {best['total']:.2f} s with workers ({best['own']:.2f} s in the main process), wall "
            f"{_best(rows, 'wall'):.2f} s; median CPU {_median(rows, 'total'):.2f} s; every repeat (CPU with "
            "workers / wall): " + ", ".join(f"{r['total']:.2f}/{r['wall']:.2f}" for r in rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="one report per argument; FOLDER or FOLDER+FOLDER...")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--against", metavar="SRC", help="another source tree to measure, alternating")
    parser.add_argument("--against-python", metavar="PYTHON", default=sys.executable,
                        help="the interpreter for SRC (e.g. another venv's, to compare library versions)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child([os.path.abspath(f) for f in args.results], args.jobs)))
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = {"this": here} | ({"against": os.path.abspath(args.against)} if args.against else {})
    cases = [[os.path.abspath(f) for f in case.split("+")] for case in args.results]
    runs: dict[tuple[int, str], list[dict]] = {(i, t): [] for i in range(len(cases)) for t in trees}
    for _ in range(args.repeats):
        for i, folders in enumerate(cases):
            for name, src in trees.items():  # alternate: this, against, this, against ...
                python = args.against_python if name == "against" else sys.executable
                runs[(i, name)].append(_subprocess(src, folders, args.jobs, python))
    for i, case in enumerate(args.results):
        print(f"report of {case}:")
        for name in trees:
            print(_line(name, runs[(i, name)]))
        this = runs[(i, "this")]
        best = min(this, key=lambda r: r["total"])
        if best["figures"]:
            print("    per figure (CPU s" + (", this/against" if args.against else "") + "): " + ", ".join(
                f"{k} {v:.2f}" + (f" ({v / o:.2f})" if args.against and (o := min(
                    r["figures"].get(k, 0.0) for r in runs[(i, "against")])) > 0 else "")
                for k, v in sorted(best["figures"].items(), key=lambda kv: -kv[1]) if v > 0))
        if args.against:
            other = runs[(i, "against")]
            print(f"  ratio this/against: CPU with workers {_best(this, 'total') / _best(other, 'total'):.2f} "
                  f"(of the medians {_median(this, 'total') / _median(other, 'total'):.2f}), "
                  f"main process {_best(this, 'own') / _best(other, 'own'):.2f}, "
                  f"wall {_best(this, 'wall') / _best(other, 'wall'):.2f}")


if __name__ == "__main__":
    main()
