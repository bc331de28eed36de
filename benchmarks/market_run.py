"""Speed of the market: warm runs, longer horizons, more agents, and the first `airace run` in a fresh process.

    python benchmarks/market_run.py [FACTOR ...]               warm baseline and 10x/100x the providers (1 10 100)
    python benchmarks/market_run.py --horizon [END ...]        cost per agent-month to 2030-12 .. 2050-12
    python benchmarks/market_run.py --against OLD_TREE [--repeats N] [--horizon-ends END ...]
                                                               paired: this tree and OLD_TREE measured in one run
    python benchmarks/market_run.py --instructions [--against OLD_TREE] [--horizon-ends END ...]
                                                               the same, counted in instructions (valgrind)

Cost per agent-month should stay flat as the market grows (more agents) and as the horizon lengthens (2050 within
1.5x of 2030). `--against` takes another source tree of the repository (e.g. `git worktree add /tmp/old <commit>`;
the current venv serves both, since each measurement runs in a child process whose working directory is the tree)
and prints old, new and new/old for: a warm baseline run, cost per agent-month at each horizon, and the CPU time of
`python -m model run scenarios/baseline.toml` in a fresh process. Old and new alternate, so both see the same
machine load; the best of the repeats is reported (the least disturbed by other work). Run by hand; tests never
time anything.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HORIZONS = ("2030-12", "2035-12", "2040-12", "2050-12")

# Runs in a child process with the tree under test as its working directory; uses only the API both old and new
# trees have (a resolved parameter tree in, tables out).
MEASURE = """
import json, sys, time
from model.market import run_params
from model.scenario import apply_overrides, load_scenario_dict
base = load_scenario_dict("scenarios/baseline.toml")
base.pop("sweep", None)
run_params(base, 0)  # warm-up: the performance model's answers are cached in the process
out = {}
for end in sys.argv[2:]:
    params = apply_overrides(base, [f"end={end}"]) if end != "2030-12" else base
    times, rows = [], 0
    for _ in range(int(sys.argv[1]) + 1):  # the first run of a horizon asks the performance model new questions
        t0 = time.perf_counter()
        rows = len(run_params(params, 0).agents)
        times.append(time.perf_counter() - t0)
    out[end] = [min(times[1:]), rows]
print(json.dumps(out))
"""


def scaled(params: dict, factor: int) -> dict:
    """The baseline with every hyperscaler and neocloud copied `factor` times (copy 0 keeps the contracts)."""
    p = copy.deepcopy(params)
    providers = set()
    for kind in ("hyperscaler", "neocloud"):
        providers |= set(p[kind])
        p[kind] = {f"{n}_{i}": copy.deepcopy(v) for n, v in p[kind].items() for i in range(factor)}
    for lab in p["lab"].values():
        lab["hosts"] = [f"{h}_0" for h in lab.get("hosts", [])]
    for c in p.get("contracts", []):
        c["provider"] = f"{c['provider']}_0"
        if c["lab"] in providers:
            c["lab"] = f"{c['lab']}_0"
    partners = p.get("allocation", {}).get("partners", {})  # NVIDIA's public ties: every copy has them
    for name in [n for n in partners if n in providers]:
        since = partners.pop(name)
        partners.update({f"{name}_{i}": since for i in range(factor)})
    return p


def timed(params: dict) -> tuple[float, int]:
    from model.market import run_params

    t0 = time.perf_counter()
    result = run_params(params, 0)
    return time.perf_counter() - t0, len(result.agents)


def providers_mode(factors: list[int]) -> None:
    from model.scenario import load_scenario_dict

    params = load_scenario_dict(ROOT / "scenarios" / "baseline.toml")
    params.pop("sweep", None)
    cold, rows = timed(params)
    print(f"baseline, first run in this process: {cold:.2f} s ({rows} agent-months)")
    for factor in factors or [1, 10, 100]:
        p = params if factor == 1 else scaled(params, factor)
        best, rows = min(timed(p) for _ in range(3 if factor < 100 else 1))
        print(f"{factor:>4}x providers: {best:.2f} s warm, {rows} agent-months, "
              f"{best / rows * 1e6:.0f} us per agent-month")


def horizon_mode(ends: list[str]) -> None:
    from model.scenario import apply_overrides, load_scenario_dict

    base = load_scenario_dict(ROOT / "scenarios" / "baseline.toml")
    base.pop("sweep", None)
    timed(base)  # warm-up
    first = None
    for end in ends or HORIZONS:
        best, rows = min(timed(apply_overrides(base, [f"end={end}"])) for _ in range(2))
        per = best / rows * 1e6
        first = per if first is None else first
        print(f"end {end}: {best:6.2f} s, {rows:6d} agent-months, {per:5.0f} us per agent-month "
              f"({per / first:.2f}x the first horizon)")


def _measure(tree: Path, repeats: int, ends: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(repeats), *ends], cwd=tree, capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _first_run_cpu_s(tree: Path) -> float:
    """CPU time (user + system) of `python -m model run` on the baseline in a fresh process."""
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "model", "run", "scenarios/baseline.toml", "--out", f"{out}/r",
                        "--quiet"], cwd=tree, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def against_mode(old: Path, repeats: int, ends: list[str]) -> None:
    trees = {"old": old.resolve(), "new": ROOT}
    print(f"old: {trees['old']}\nnew: {trees['new']}\ncores: {os.cpu_count()}, load average before: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    first: dict[str, list[float]] = {"old": [], "new": []}
    for _ in range(repeats):
        for name in ("old", "new"):
            first[name].append(_first_run_cpu_s(trees[name]))
    runs: dict[str, dict] = {"old": {}, "new": {}}
    for _ in range(2):  # alternate the long measurements too
        for name in ("old", "new"):
            result = _measure(trees[name], 2, ends)
            for end, (seconds, rows) in result.items():
                best = runs[name].get(end, (seconds, rows))
                runs[name][end] = (min(best[0], seconds), rows)
    old_cpu, new_cpu = min(first["old"]), min(first["new"])
    print(f"\nfirst `python -m model run` in a fresh process (CPU s, best of {repeats}): "
          f"old {old_cpu:.2f}, new {new_cpu:.2f}, new/old {new_cpu / old_cpu:.2f}")
    print("\nwarm runs (best of 2 runs after a first one, in each of 2 processes):")
    print(f"{'end':>8} {'agent-months':>13} {'old s':>8} {'new s':>8} {'new/old':>8} {'old us/am':>10} "
          f"{'new us/am':>10}")
    for end in ends:
        (o, rows), (n, _) = runs["old"][end], runs["new"][end]
        print(f"{end:>8} {rows:13d} {o:8.2f} {n:8.2f} {n / o:8.2f} {o / rows * 1e6:10.0f} {n / rows * 1e6:10.0f}")
    for name in ("old", "new"):
        r = runs[name]
        per = {end: r[end][0] / r[end][1] for end in ends}
        print(f"{name}: cost per agent-month at {ends[-1]} / at {ends[0]} = {per[ends[-1]] / per[ends[0]]:.2f}")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


COUNT = """
import sys
from model.market import run_params
from model.scenario import apply_overrides, load_scenario_dict
base = load_scenario_dict("scenarios/baseline.toml")
base.pop("sweep", None)
params = apply_overrides(base, [f"end={sys.argv[1]}"])
for _ in range(int(sys.argv[2])):
    rows = len(run_params(params, 0).agents)
print(rows)
"""


def _instructions(tree: Path, end: str, runs: int) -> tuple[int, int]:
    """Instructions of a process that runs the baseline `runs` times to `end`, and the agent-months of a run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c",
                               COUNT, end, str(runs)], cwd=tree, capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": str(tree)})
        total = next(int(line.split(":")[1].replace(",", "")) for line in proc.stderr.splitlines()
                     if "Collected" in line)
    return total, int(proc.stdout.strip().splitlines()[-1])


def instructions_mode(old: Path | None, ends: list[str]) -> None:
    """Instructions of one warm run (a process with two runs less one with one run), per agent-month."""
    trees = {"new": ROOT} if old is None else {"old": old.resolve(), "new": ROOT}
    per: dict[tuple[str, str], float] = {}
    for name, tree in trees.items():
        for end in (ends if name == "new" else ends[:1]):
            one, rows = _instructions(tree, end, 1)
            two, _ = _instructions(tree, end, 2)
            per[name, end] = (two - one) / rows
            print(f"{name} {end}: {(two - one) / 1e9:.2f} G instructions per warm run, {rows} agent-months, "
                  f"{per[name, end] / 1e6:.2f} M per agent-month", flush=True)
    if old is not None:
        print(f"warm run at {ends[0]}: new/old = {per['new', ends[0]] / per['old', ends[0]]:.2f}")
    print(f"new: per agent-month at {ends[-1]} / at {ends[0]} = {per['new', ends[-1]] / per['new', ends[0]]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("factors", nargs="*", type=int, help="provider multiples (default 1 10 100)")
    parser.add_argument("--horizon", nargs="*", metavar="END", help="cost per agent-month by horizon")
    parser.add_argument("--against", type=Path, metavar="OLD_TREE", help="paired comparison with another tree")
    parser.add_argument("--repeats", type=int, default=3, help="fresh-process runs per tree (--against)")
    parser.add_argument("--horizon-ends", nargs="+", default=["2030-12", "2050-12"], metavar="END",
                        help="horizons for --against (default 2030-12 2050-12)")
    parser.add_argument("--instructions", action="store_true", help="count instructions with valgrind instead")
    args = parser.parse_args()
    if args.instructions:
        instructions_mode(args.against, args.horizon_ends)
    elif args.against is not None:
        against_mode(args.against, args.repeats, args.horizon_ends)
    elif args.horizon is not None:
        horizon_mode(args.horizon)
    else:
        providers_mode(args.factors)


if __name__ == "__main__":
    main()
