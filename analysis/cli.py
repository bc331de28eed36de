"""Command-line wrapper shared by the figure modules: `python -m analysis.NAME RESULTS... --out DIR`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from model.errors import InputError


@dataclass(frozen=True)
class Options:
    """Options every figure module accepts (each uses the ones that apply)."""

    log: bool = False  # capacity: log-scale H100e
    revenue_year: int | None = None  # sensitivity/comparison: calendar year of the revenue outcome


DEFAULT_OPTIONS = Options()


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", metavar="RESULTS",
                        help="result folders (airace run) and/or sweep folders (airace sweep)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the PNG, SVG and CSV files")
    parser.add_argument("--log", action="store_true", help="log-scale H100e axis in the capacity figure")
    parser.add_argument("--revenue-year", type=int, metavar="YYYY",
                        help="calendar year of the 'NVIDIA revenue in a year' outcome (default 2027 when simulated, "
                        "else the last full year)")


def options_from(args: argparse.Namespace) -> Options:
    return Options(log=args.log, revenue_year=args.revenue_year)


def module_main(name: str, description: str, make: Callable, argv: Sequence[str] | None = None) -> int:
    """Parse, load, draw; exit 0 on success, 2 (one line) on bad input."""
    from model.results import read_folders

    prog = f"python -m analysis.{name}"
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     epilog=f"Example:\n  {prog} results/baseline --out results/baseline/figures",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    try:
        files = make(read_folders(args.results), Path(args.out), options_from(args))
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    for f in files:
        print(f"wrote {f.png} ({f.width_px}x{f.height_px} px), {f.svg.name}, " + ", ".join(c.name for c in f.csvs))
    return 0
