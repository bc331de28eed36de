"""`airace run`: load and validate a scenario, run the market, write the result folder atomically, summarise."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from model.scenario import apply_overrides, load_scenario_dict, scenario_hash


def summarise(agents: pd.DataFrame, events: pd.DataFrame) -> list[str]:
    """Leaders by H100e at the end, first online per generation, largest cluster per agent."""
    lines: list[str] = []
    if not agents.empty:
        last = agents[agents["date"] == agents["date"].max()].sort_values("h100e", ascending=False)
        lines.append(f"H100e leaders at {str(last['date'].iloc[0])[:7]}:")
        for row in last.head(5).itertuples():
            lines.append(f"  {row.agent:<16} {row.h100e / 1e6:8.2f} M H100e   "
                         f"largest cluster {row.largest_cluster_gpus:>9,.0f} GPUs")
    firsts = events[events["event"] == "first_online"].sort_values("date") if not events.empty else events
    if len(firsts):
        lines.append("First online per system:")
        for system, group in firsts.groupby("system", sort=False):
            first = group.iloc[0]
            lines.append(f"  {system:<19} {str(first['date'])[:7]}  {first['agent']}")
    at_scale = events[events["event"] == "first_cluster_at_scale"].sort_values("date") if len(events) else events
    if len(at_scale):
        lines.append("First cluster at scale per system:")
        for system, group in at_scale.groupby("system", sort=False):
            first = group.iloc[0]
            lines.append(f"  {system:<19} {str(first['date'])[:7]}  {first['agent']} ({int(first['gpus']):,} GPUs)")
    return lines


def run_command(args: argparse.Namespace) -> int:
    """Run and write; Ctrl-C or SIGTERM at any point leaves no partial result folder and no temporary folder."""
    from model.interrupts import terminate_as_interrupt

    with terminate_as_interrupt():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from model.io import write_results
    from model.market import run_params

    path = Path(args.scenario)
    params = apply_overrides(load_scenario_dict(path), list(args.set))
    params.pop("sweep", None)  # a scenario's [sweep] table is for `airace sweep`, not the model
    result = run_params(params, seed=args.seed)
    manifest = {"scenario_file": str(path), "scenario_sha256": scenario_hash(path), "overrides": list(args.set),
                **result.manifest}
    out = Path(args.out) if args.out else Path("results") / path.stem
    write_results(out, result.tables(), manifest)
    if not args.quiet:
        print(f"wrote {out}/ (agents, market, events, manifest) in {manifest['wall_time_s']:.2f} s")
        print("\n".join(summarise(result.agents, result.events)))
    return 0
