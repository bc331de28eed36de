"""`airace report` and `airace compare`, registered with the command line through the `airace.commands` entry point
group (see pyproject.toml), so that the model package does not import the analysis package. Each command imports its
module when it runs (pandas, matplotlib): `airace --help` stays fast."""

from __future__ import annotations

import argparse

RAW = argparse.RawDescriptionHelpFormatter


def _cmd_report(args: argparse.Namespace) -> int:
    from analysis.report import run  # lazy: matplotlib and seaborn only for this command

    return run(args)


def _cmd_compare(args: argparse.Namespace) -> int:
    from analysis.compare import command  # lazy: pandas only for this command

    return command(args)


def positive_whole_number(text: str) -> int:
    """argparse type for counts such as --jobs."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def register_report(sub) -> None:
    """Add the `report` subcommand to the `airace` command line's subparsers."""
    rep = sub.add_parser("report", help="figures (PNG, SVG, CSV), report.md and report.html from result and sweep "
                         "folders",
                         description="Draw the figures analysts ask for (shares of compute, capacity beside Epoch "
                         "AI's estimates, generation mix, race timeline, largest clusters and training runs beside the "
                         "public record, labs' reachable compute, frontier-run days, power, capex, NVIDIA revenue by "
                         "fiscal quarter, backlog, rental prices; scenario-minus-baseline for two or more inputs; fan "
                         "charts and SALib sensitivity for sweeps), each as PNG + SVG with the CSV behind it, and "
                         "write report.md and a self-contained report.html.",
                         epilog="Examples:\n  airace report results/baseline --out results/baseline/figures\n"
                         "  airace report results/baseline results/slow_vr --out results/compare\n"
                         "  airace report results/sweep --out results/sweep/figures --log",
                         formatter_class=RAW)
    rep.add_argument("results", nargs="+", metavar="RESULTS",
                     help="result folders (airace run) and/or sweep folders (airace sweep)")
    rep.add_argument("--out", required=True, metavar="DIR", help="folder for the figures and report.md")
    rep.add_argument("--log", action="store_true", help="log-scale H100e axis in the capacity figure")
    rep.add_argument("--revenue-year", type=int, metavar="YYYY",
                     help="calendar year of the sensitivity's revenue outcome (default 2027 if fully simulated)")
    rep.add_argument("--jobs", type=positive_whole_number, metavar="N",
                     help="processes drawing figures (default: every core this process may use; 1: no workers)")
    rep.set_defaults(func=_cmd_report)


def register_compare(sub) -> None:
    """Add the `compare` subcommand to the `airace` command line's subparsers."""
    c = sub.add_parser("compare", help="compare result folders and sweep folders side by side",
                       description="For each input (a result folder or a sweep folder): who leads by H100e at "
                       "each year end (with share), when each system is first delivered, first comes online and "
                       "first reaches a cluster at scale (agent and date; for sweeps the median date, 5-95%% "
                       "interval and the most frequent agent), end-of-horizon total H100e and largest cluster, and "
                       "NVIDIA revenue per fully simulated calendar and fiscal year (median and 5-95%% interval "
                       "across runs). The rest of the market counts in totals but never leads or is first.",
                       epilog="Examples:\n  airace compare results/baseline results/slow_supply\n"
                       "  airace compare results/baseline_sweep results/other_sweep --out compare.csv\n"
                       "  airace compare results/baseline --json",
                       formatter_class=RAW)
    c.add_argument("inputs", nargs="+", metavar="FOLDER", help="result folders and/or sweep folders")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--out", metavar="FILE.csv", help="also write the comparison as a long CSV table")
    c.set_defaults(func=_cmd_compare)
