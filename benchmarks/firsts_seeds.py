"""Who is first, over seeds: each generation's first delivery, first online and first clusters at scale, and the
first named agent whose largest cluster reaches 1,000 / 10,000 / 100,000 GPUs, for this tree and optionally an
older one measured in the same session.

    python benchmarks/firsts_seeds.py [--seeds 10] [--against OLD_TREE] [--set key=value ...]

Each tree runs in a child process whose working directory is the tree (the current venv serves both, as in
`benchmarks/market_run.py`). Prints one table per tree: per milestone the agent first in most seeds (seeds it was
first in / seeds with the event), its kind, and the median month. Run by hand; tests never call this.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MEASURE = """
import json, sys
import pandas as pd
from model.market import run_params
from model.scenario import apply_overrides, load_scenario_dict
from model.results import outcomes as O
params = load_scenario_dict("scenarios/baseline.toml")
params.pop("sweep", None)
params = apply_overrides(params, json.loads(sys.argv[2]))
rows = []
for seed in range(int(sys.argv[1])):
    r = run_params(params, seed)
    ev, ag = r.events.copy(), r.agents.copy()
    ev["date"] = pd.to_datetime(ev["date"]); ag["date"] = pd.to_datetime(ag["date"])
    kinds = dict(zip(ag["agent"], ag["kind"]))
    named = ev[ev["agent"].map(kinds).fillna("x") != "other"]
    for (event, system, detail), g in named[named["event"].str.startswith("first_")].groupby(
            ["event", "system", named["detail"].where(named["event"] == "first_cluster_at_scale", "")], sort=False):
        f = g.iloc[0]
        rows.append([seed, f"{event} {system} {detail}".strip(), f"{f.date:%Y-%m}", f.agent, kinds.get(f.agent, "?")])
    for t in (1000, 10000, 100000):
        a = ag[(ag["kind"] != "other") & (ag["largest_cluster_gpus"] >= t)].sort_values(
            ["date", "largest_cluster_gpus"], ascending=[True, False])
        if len(a):
            f = a.iloc[0]
            rows.append([seed, f"largest_cluster_gpus >= {t}", f"{f.date:%Y-%m}", f.agent, f.kind])
print(json.dumps(rows))
"""


def measure(tree: Path, seeds: int, overrides: list[str]) -> list[list]:
    out = subprocess.run([sys.executable, "-c", MEASURE, str(seeds), json.dumps(overrides)], cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def table(rows: list[list], seeds: int) -> str:
    by: dict[str, list[list]] = {}
    for row in rows:
        by.setdefault(row[1], []).append(row)
    lines = []
    for key in sorted(by):
        g = by[key]
        agent, n = Counter(r[3] for r in g).most_common(1)[0]
        kind = next(r[4] for r in g if r[3] == agent)
        kinds = Counter(r[4] for r in g)
        months = sorted(r[2] for r in g)
        lines.append(f"{key:58s} {months[len(months) // 2]}  {agent} ({kind}) {n}/{len(g)}  kinds "
                     + ", ".join(f"{k} {c}" for k, c in kinds.most_common()))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--against", type=Path, help="another source tree of the repository (e.g. a git worktree)")
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    args = ap.parse_args()
    trees = ([("old", args.against)] if args.against else []) + [("new", ROOT)]
    for label, tree in trees:
        print(f"== {label}: {tree}")
        print(table(measure(tree, args.seeds, args.overrides), args.seeds))


if __name__ == "__main__":
    main()
