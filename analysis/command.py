"""`airace report`, registered with the command line through the `airace.commands` entry point (see
pyproject.toml), so that the model package does not import the analysis package. Heavy imports wait for the run."""

from __future__ import annotations

import argparse


def _cmd_report(args: argparse.Namespace) -> int:
    from analysis.report import run

    return run(args)


def register(sub) -> None:
    """Add the `report` subcommand to the `airace` command line's subparsers."""
    rep = sub.add_parser("report", help="figures (PNG, SVG, CSV) and report.md from result and sweep folders",
                         description="Draw capacity, generations, race timeline, frontier-run days, market, "
                         "comparison (two or more inputs) and sensitivity (sweeps with sampled parameters) figures, "
                         "each as PNG + SVG with the CSV behind it, and write report.md with a summary table.",
                         epilog="Examples:\n  airace report results/baseline --out results/baseline/figures\n"
                         "  airace report results/baseline results/slow_vr --out results/compare\n"
                         "  airace report results/sweep --out results/sweep/figures --log",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("results", nargs="+", metavar="RESULTS",
                     help="result folders (airace run) and/or sweep folders (airace sweep)")
    rep.add_argument("--out", required=True, metavar="DIR", help="folder for the figures and report.md")
    rep.add_argument("--log", action="store_true", help="log-scale H100e axis in the capacity figure")
    rep.add_argument("--revenue-year", type=int, metavar="YYYY",
                     help="calendar year of the sensitivity's revenue outcome (default 2027 if simulated)")
    rep.set_defaults(func=_cmd_report)
