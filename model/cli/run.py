"""`airace run`: load and validate a scenario, run the market, write the result folder atomically, summarise."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from model.cli.args import RAW, seed

if TYPE_CHECKING:
    import pandas as pd


def register(sub) -> None:
    r = sub.add_parser("run", help="run a scenario and write a result folder",
                       description="Run a scenario month by month and write agents/market/events tables and a "
                       "manifest into a result folder (atomically), then print the H100e leaders, the firsts per "
                       "generation and NVIDIA's revenue per year.",
                       epilog="Examples:\n  airace run scenarios/baseline.toml --out results/baseline\n"
                       "  airace run scenarios/baseline.toml --seed 3 --set supplier.delay_months.vr_nvl72=6",
                       formatter_class=RAW)
    r.add_argument("scenario", help="scenario file, e.g. scenarios/baseline.toml")
    r.add_argument("--seed", type=seed, default=0, help="random seed, a whole number >= 0 (default 0)")
    r.add_argument("--out", help="result folder (default results/<scenario name>)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value by dotted path; repeatable")
    r.add_argument("--quiet", action="store_true", help="print nothing but errors")
    r.set_defaults(func=run_command)


def summarise(agents: pd.DataFrame, events: pd.DataFrame, market: pd.DataFrame | None = None) -> list[str]:
    """Leaders by H100e at the end (the rest of the market is an aggregate, reported apart), firsts per generation
    that arrives during the run, and NVIDIA revenue per calendar year."""
    import pandas as pd

    lines: list[str] = []
    if not agents.empty:
        last = agents[agents["date"] == agents["date"].max()].sort_values("h100e", ascending=False)
        rest = last[last["kind"] == "other"]["h100e"].sum()
        lines.append(f"H100e leaders at {str(last['date'].iloc[0])[:7]} "
                     f"(the rest of the market, an aggregate, holds {rest / 1e6:.2f} M):")
        for row in last[last["kind"] != "other"].head(5).itertuples():
            days = "" if pd.isna(row.frontier_run_days) else f", reference run in {row.frontier_run_days:,.0f} days"
            lines.append(f"  {row.agent:<16} {row.kind:<12} {row.h100e / 1e6:7.2f} M H100e, largest cluster "
                         f"{row.largest_cluster_gpus:>9,.0f} GPUs{days}")
    for event, title in (("first_online", "First online per system"),
                         ("first_cluster_at_scale", "First cluster at scale per system")):
        firsts = events[events["event"] == event].sort_values("date", kind="stable") if len(events) else events
        if len(firsts):
            lines.append(f"{title}:")
            for system, group in firsts.groupby("system", sort=False):
                first = group.iloc[0]
                lines.append(f"  {system:<19} {str(first['date'])[:7]}  {first['agent']} ({int(first['gpus']):,} GPUs)")
    if market is not None and len(market):
        revenue = market.groupby(market["date"].str[:4])["nvidia_revenue_usd"].sum() / 1e9
        lines.append("NVIDIA revenue by calendar year (USD bn): "
                     + ", ".join(f"{year} {value:.0f}" for year, value in revenue.items()))
    return lines


def run_command(args: argparse.Namespace) -> int:
    """Run and write; Ctrl-C or SIGTERM at any point leaves no partial result folder and no temporary folder."""
    from model.interrupts import terminate_as_interrupt

    with terminate_as_interrupt():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: `airace --help` and the other commands do not pay for pandas and the market.
    from model.io import write_results
    from model.market import run_params
    from model.scenario import load_scenario, scenario_hash

    path = Path(args.scenario)
    result = run_params(load_scenario(path, args.set), seed=args.seed)  # validated once; [sweep] is not used
    manifest = {"scenario_file": str(path), "scenario_sha256": scenario_hash(path), "overrides": list(args.set),
                **result.manifest}
    out = Path(args.out) if args.out else Path("results") / path.stem
    write_results(out, result.tables(), manifest)
    if not args.quiet:
        print(f"wrote {out}/ (agents, market, events, manifest) in {manifest['wall_time_s']:.2f} s")
        print("\n".join(summarise(result.agents, result.events, result.market)))
    return 0
