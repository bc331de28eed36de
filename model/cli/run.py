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
                       "generation and NVIDIA's revenue per full calendar and fiscal year.",
                       epilog="Examples:\n  airace run scenarios/baseline.toml --out results/baseline\n"
                       "  airace run scenarios/baseline.toml --seed 3 --set supplier.delay_months.vr_nvl72=6",
                       formatter_class=RAW)
    r.add_argument("scenario", help="scenario file, e.g. scenarios/baseline.toml")
    r.add_argument("--seed", type=seed, default=0, help="random seed, a whole number >= 0 (default 0)")
    r.add_argument("--out", help="result folder (default results/<scenario name>): absent, empty, or an earlier "
                   "result folder (replaced whole); anything else is refused")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value by dotted path; repeatable")
    r.add_argument("--quiet", action="store_true", help="print nothing but errors")
    r.set_defaults(func=run_command)


def summarise(tables: dict[str, pd.DataFrame]) -> list[str]:
    """What `airace run` prints, from the outcomes module: the H100e leaders at the end among named agents (the rest
    of the market, an aggregate, reported apart), the firsts per generation that arrives during the run, and NVIDIA
    revenue per fully simulated calendar and fiscal year."""
    from model.results import conform
    from model.results import outcomes as O

    t = {name: conform(name, df) for name, df in tables.items()}
    lines: list[str] = []
    standing = O.standings(t["agents"], at="end")
    if len(standing):
        named = standing[O.is_named(standing["kind"])]
        rest = standing.loc[~O.is_named(standing["kind"]), "h100e"].sum()
        lines.append(f"H100e leaders at {O.month_text(standing['date'].iloc[0])} "
                     f"(the rest of the market, an aggregate, holds {rest / 1e6:.2f} M):")
        for row in named.head(5).itertuples():
            days = "" if row.frontier_run_days != row.frontier_run_days else (
                f", reference run in {row.frontier_run_days:,.0f} days")
            lines.append(f"  {row.agent:<16} {row.kind:<12} {row.h100e / 1e6:7.2f} M H100e ({row.share:.0%}), "
                         f"largest cluster {row.largest_cluster_gpus:>9,.0f} GPUs{days}")
    firsts = O.firsts(t["events"], t["agents"], which=["first_online", "first_cluster_at_scale"])
    for event, title in (("first_online", "First online per system"),
                         ("first_cluster_at_scale", "First cluster at scale per system")):
        rows = firsts[firsts["event"] == event]
        if len(rows):
            lines.append(f"{title}:")
            for r in rows.itertuples():
                lines.append(f"  {r.system:<19} {O.month_text(r.date)}  {r.agent} ({r.gpus:,} GPUs)")
    for period, title in (("calendar_year", "calendar year"), ("fiscal_year", "NVIDIA fiscal year, Feb-Jan")):
        revenue = O.revenue(t["market"], period)
        if len(revenue):
            lines.append(f"NVIDIA revenue by {title} (USD bn, full years): " + ", ".join(
                f"{r.period} {r.nvidia_revenue_usd / 1e9:.0f}" for r in revenue.itertuples()))
    return lines


def run_command(args: argparse.Namespace) -> int:
    """Run and write; Ctrl-C or SIGTERM at any point leaves no partial result folder and no temporary folder."""
    from model.interrupts import terminate_as_interrupt

    with terminate_as_interrupt():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: `airace --help` and the other commands do not pay for pandas and the market.
    from model.market import run_params
    from model.results.folders import check_output_folder, write_result_folder
    from model.scenario import load_scenario, scenario_hash

    path = Path(args.scenario)
    out = Path(args.out) if args.out else Path("results") / path.stem
    check_output_folder(out, "run", keep=[path])  # before the run: a folder we may not write is known at once
    result = run_params(load_scenario(path, args.set), seed=args.seed)  # validated once; [sweep] is not used
    manifest = {"scenario_file": str(path), "scenario_sha256": scenario_hash(path), "overrides": list(args.set),
                **result.manifest}
    write_result_folder(out, result.tables(), manifest)
    if not args.quiet:
        print(f"wrote {out}/ (agents, market, events, manifest) in {manifest['wall_time_s']:.2f} s")
        print("\n".join(summarise(result.tables())))
    return 0
