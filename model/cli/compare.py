"""`airace compare`: result folders and sweep folders side by side."""

from __future__ import annotations

import argparse

from model.cli.args import RAW


def register(sub) -> None:
    c = sub.add_parser("compare", help="compare result folders and sweep folders side by side",
                       description="For each input (a result folder or a sweep folder): who leads by H100e at "
                       "each year end (with share), when each system first comes online and first reaches a "
                       "cluster at scale (agent and date; for sweeps the median date, 5-95%% interval and the most "
                       "frequent agent), and end-of-horizon total H100e, largest cluster and NVIDIA revenue per "
                       "year (median and 5-95%% interval across runs).",
                       epilog="Examples:\n  airace compare results/baseline results/slow_supply\n"
                       "  airace compare results/baseline_sweep results/other_sweep --out compare.csv\n"
                       "  airace compare results/baseline --json",
                       formatter_class=RAW)
    c.add_argument("inputs", nargs="+", metavar="FOLDER", help="result folders and/or sweep folders")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--out", metavar="FILE.csv", help="also write the comparison as a long CSV table")
    c.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from model.compare import compare_command

    return compare_command(args)
