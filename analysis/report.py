"""The whole report: every figure that applies to the inputs, and `report.md` with summary tables and links.

`airace report RESULTS... --out DIR` and `python -m analysis.report RESULTS... --out DIR` both land here.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from analysis import FIGURE_MODULES
from analysis.cli import DEFAULT_OPTIONS, Options, add_common_arguments, options_from
from analysis.figure import FigureFile, NotApplicable, sys_name, write_text
from analysis.summaries import systems_in
from model.errors import InputError
from model.results import ResultSet, read_folders
from model.results import outcomes as O

TOP = 5


def _num(median: float, lo: float, hi: float, runs: int, scale: float, fmt: str) -> str:
    if pd.isna(median):
        return "-"
    text = format(median / scale, fmt)
    if runs > 1 and not (pd.isna(lo) or pd.isna(hi)) and lo != hi:
        text += f" ({format(lo / scale, fmt)}-{format(hi / scale, fmt)})"
    return text


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def summary(rs: ResultSet, label: str) -> list[str]:
    """Leaders by H100e at the end, firsts per generation, largest clusters (medians and 5-95% for sweeps), all from
    the outcomes module (its conventions: named agents lead and are first, the rest of the market counts in totals)."""
    src = rs.source(label)
    agents = rs.agents[rs.agents["label"] == label]
    standing = O.standings(agents, at="end")
    end = standing["date"].max()
    ranged = " (median, 5-95% range in brackets)" if src.n_runs > 1 else ""
    lines = [f"### {label}", "",
             f"{'Sweep' if src.is_sweep else 'Run'} of `{src.scenario_file or '?'}`, {src.n_runs} "
             f"run{'s' if src.n_runs != 1 else ''}, {agents['date'].min():%Y-%m} to {end:%Y-%m}.", "",
             f"**H100e leaders at {end:%Y-%m}**{ranged}", ""]
    named = standing[O.is_named(standing["kind"])]
    rest = standing[~O.is_named(standing["kind"])].groupby("run")["h100e"].sum()
    if len(rest):
        lines[-2] += f" (the rest of the market, an aggregate, holds {rest.median() / 1e6:.2f} M)"
    h = O.band(named, ["agent", "kind"], "h100e").sort_values(["h100e", "agent"], ascending=[False, True])
    c = O.band(named, ["agent"], "largest_cluster_gpus").set_index("agent")
    fr = O.band(named, ["agent"], "frontier_run_days").set_index("agent")
    rows = []
    for r in h.head(TOP).itertuples():
        cl = c.loc[r.agent]
        rows.append([r.agent, r.kind, _num(r.h100e, r.h100e_p05, r.h100e_p95, src.n_runs, 1e6, ".2f"),
                     _num(cl["largest_cluster_gpus"], cl["largest_cluster_gpus_p05"], cl["largest_cluster_gpus_p95"],
                          src.n_runs, 1, ",.0f")])
    lines += _md_table(["agent", "kind", "H100e (millions)", "largest cluster (GPUs)"], rows)

    first = O.firsts_across_runs(O.firsts(rs.events[rs.events["label"] == label], agents), src.n_runs)
    lines += ["**Firsts per generation**" + (" (median month over the runs that reached it, the most frequent first "
                                           "agent and its share of those runs)" if src.n_runs > 1 else ""), ""]
    rows = []
    for system in systems_in(first["system"].unique()):
        cells = [sys_name(system)]
        for event in O.FIRST_EVENTS:
            sel = first[(first["system"] == system) & (first["event"] == event)]
            if sel.empty:
                cells.append("-")
                continue
            r = sel.iloc[0]
            share = (f" ({r['agent_frequency']:.0%} of {r['runs_with_event']} runs)" if src.n_runs > 1 else "")
            gpus = f", {r['gpus']:,.0f} GPUs" if event == "first_cluster_at_scale" else ""
            cells.append(f"{r['date']:%Y-%m} {r['agent']}{share}{gpus}")
        rows.append(cells)
    header = ["system", "first delivery", "first online", "first at-scale cluster"]
    lines += _md_table(header, rows) if rows else ["(no events)", ""]

    lines += [f"**Largest clusters at {end:%Y-%m}**{ranged}", ""]
    rows = []
    for agent, r in c.sort_values("largest_cluster_gpus", ascending=False).head(TOP).iterrows():
        f = fr.loc[agent]
        rows.append([agent, _num(r["largest_cluster_gpus"], r["largest_cluster_gpus_p05"],
                                 r["largest_cluster_gpus_p95"], src.n_runs, 1, ",.0f"),
                     _num(f["frontier_run_days"], f["frontier_run_days_p05"], f["frontier_run_days_p95"],
                          src.n_runs, 1, ".0f")])
    lines += _md_table(["agent", "largest cluster (GPUs)", "days to train the reference run"], rows)
    return lines


def render(rs: ResultSet, figures: list[FigureFile], skipped: list[tuple[str, str]], out: Path,
           seconds: float) -> str:
    lines = ["# airace report", "", "## Inputs", ""]
    rows = [[s.label, "sweep" if s.is_sweep else "run", str(s.n_runs), f"`{s.scenario_file or '?'}`",
             f"`{s.path}`"] for s in rs.sources]
    lines += _md_table(["label", "type", "runs", "scenario", "folder"], rows)
    lines += ["## Summary", ""]
    for label in rs.labels:
        lines += summary(rs, label)
    lines += ["## Figures", ""]
    for f in figures:
        data = ", ".join(f"[{c.name}]({c.relative_to(out).as_posix()})" for c in f.csvs)
        lines += [f"### {f.title}", "", f"![{f.title}]({f.png.relative_to(out).as_posix()})", "",
                  f"[SVG]({f.svg.relative_to(out).as_posix()}) · data: {data}", ""]
    lines += ["## Notes", ""]
    for name, why in skipped:
        lines.append(f"- `{name}` not drawn: {why}")
    lines += ["- Sensitivity uses Spearman rank correlations; variance-based indices (SALib Sobol/Morris) are not "
              "computed because they need a sweep sampled for them.",
              "- Reported NVIDIA data-center revenue: `analysis/data/nvidia_dc_revenue.csv` (source URL per quarter). "
              "The model's `nvidia_revenue_usd` is summed into NVIDIA fiscal quarters (Q1 = Feb-Apr); quarters at the "
              "run's edges that were not fully simulated are drawn faded.",
              "- Conventions (leaders, firsts, periods, bands across runs): `model.results.outcomes`.",
              f"- Made by `airace report` in {seconds:.1f} s.", ""]
    return "\n".join(lines)


def build_report(paths: Sequence[str | Path], out: str | Path, opts: Options = DEFAULT_OPTIONS) -> Path:
    """Draw every applicable figure into `out` and write `out/report.md`; returns its path."""
    t0 = time.perf_counter()
    rs = read_folders(paths)
    out = Path(out)
    figures: list[FigureFile] = []
    skipped: list[tuple[str, str]] = []
    for name in FIGURE_MODULES:
        module = importlib.import_module(f"analysis.{name}")
        try:
            figures += module.make(rs, out, opts)
        except NotApplicable as exc:
            skipped.append((name, str(exc)))
    return write_text(out / "report.md", render(rs, figures, skipped, out, time.perf_counter() - t0))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)


def run(args: argparse.Namespace) -> int:
    path = build_report(args.results, args.out, options_from(args))
    print(f"wrote {path} and its figures")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    prog = "python -m analysis.report"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
