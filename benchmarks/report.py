"""CPU and wall time of `airace report` on result folders, after imports (run by hand; tests never time).

    python benchmarks/report.py RESULTS [RESULTS ...] [--repeats N] [--jobs N] [--against SRC]

Imports the analysis package before the clock starts; then builds the whole report into a temporary folder
`--repeats` times (default 3) and prints the CPU time of this process, of this process and its workers, and the wall
time (best of the repeats, and every repeat). `--jobs 1` draws in this process (per-figure CPU times are printed
then). `--against SRC` runs the same measurement, interleaved, on another checkout's source tree (e.g. the commit
you started from, exported with `git archive`), in a subprocess per repeat, so both share the machine's load.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
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


def _subprocess(src: str, folders: list[str], jobs: int | None) -> dict:
    env = {**os.environ, "PYTHONPATH": src}
    args = [sys.executable, __file__, *folders, "--child"] + (["--jobs", str(jobs)] if jobs else [])
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=src)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--against", metavar="SRC", help="another source tree to measure, interleaved")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    folders = [os.path.abspath(f) for f in args.results]
    if args.child:
        print(json.dumps(child(folders, args.jobs)))
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs: dict[str, list[dict]] = {"this": [], "against": []}
    for _ in range(args.repeats):
        runs["this"].append(_subprocess(here, folders, args.jobs))
        if args.against:
            runs["against"].append(_subprocess(os.path.abspath(args.against), folders, args.jobs))
    for name, rows in runs.items():
        if not rows:
            continue
        best = min(rows, key=lambda r: r["total"])
        print(f"{name}: CPU {best['total']:.2f} s with workers ({best['own']:.2f} s in the main process), wall "
              f"{best['wall']:.2f} s; every repeat (CPU with workers / wall): "
              + ", ".join(f"{r['total']:.2f}/{r['wall']:.2f}" for r in rows))
        if best["figures"]:
            print("  " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(best["figures"].items(), key=lambda kv: -kv[1])))
    if args.against and runs["against"]:
        ratio = min(r["total"] for r in runs["this"]) / min(r["total"] for r in runs["against"])
        print(f"ratio this/against (best CPU with workers): {ratio:.2f}")


if __name__ == "__main__":
    main()
