"""`airace compare`: result folders and sweep folders side by side, from the outcomes module.

A result folder is a sweep of one run, so both go through the same statistics (conventions: the docstring of
`model.results.outcomes`). Per input:
- the H100e leader among named agents at each year end (each December and the last month): the agent that leads in
  the most runs, how often, and its share of all H100e (median and 5-95% across runs);
- per system and milestone (first_delivery, first_online, first_cluster_at_scale): the month by which 5%, 50%, 95%
  of the runs that saw it had it, the most frequent first agent and its frequency;
- at the horizon end: total H100e and the largest cluster of a named agent; NVIDIA revenue per fully simulated
  calendar year and NVIDIA fiscal year (median and 5-95% across runs);
- each vendor's share of all H100e at the horizon end and of the H100e shipped during the run (median and 5-95%);
  every system is shown with its vendor.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from model.errors import InputError, dumps_strict
from model.palette import SYSTEM_COLORS
from model.results import Source, read_folder, write_csv
from model.results import outcomes as O
from model.results.folders import check_output_file

REVENUE_SECTIONS = {"nvidia_revenue_usd": ("calendar_year", "NVIDIA revenue {} ($bn)"),
                    "nvidia_revenue_usd_fiscal_year": ("fiscal_year", "NVIDIA revenue {} ($bn)")}


def _spread_of(row: Any, name: str) -> dict[str, float]:
    return {"median": float(getattr(row, name)), "p05": float(getattr(row, f"{name}_p05")),
            "p95": float(getattr(row, f"{name}_p95"))}


def summarise(src: Source, path: str | None = None) -> dict[str, Any]:
    """Everything `compare` reports for one input, as plain JSON-able values."""
    leaders = {}
    for r in O.leaders_across_runs(O.standings(src.agents, at="year_ends")).itertuples():
        leaders[O.month_text(r.date)] = {"agent": r.agent, "frequency": r.frequency, "share": _spread_of(r, "share")}
    firsts: dict[str, dict[str, dict[str, Any]]] = {event: {} for event in O.FIRST_EVENTS}
    first = O.firsts_across_runs(O.firsts(src.events, src.agents), src.n_runs)
    vendor = O.system_facts(list(dict.fromkeys(first["system"])))["vendor"].to_dict() if len(first) else {}
    for r in first.itertuples():
        firsts[r.event][r.system] = {"vendor": vendor[r.system],
                                     "date_median": O.month_text(r.date), "date_p05": O.month_text(r.date_p05),
                                     "date_p95": O.month_text(r.date_p95), "agent": r.agent,
                                     "agent_frequency": r.agent_frequency, "runs_with_event": int(r.runs_with_event),
                                     "runs": int(r.runs)}
    end = O.totals(src.agents, at="end")
    summary = {"path": path or str(src.path), "kind": src.kind, "runs": src.n_runs, "leaders": leaders,
               "firsts": firsts,
               "end": {"date": O.month_text(end["date"].max()), "total_h100e": O.spread(end["total_h100e"]),
                       "largest_cluster_gpus": O.spread(end["largest_cluster_gpus"])}}
    for section, (period, _) in REVENUE_SECTIONS.items():
        rev = O.revenue(src.market, period)
        summary[section] = {str(p): O.spread(g["nvidia_revenue_usd"]) for p, g in rev.groupby("period", sort=False)}
    summary["vendor_share_h100e"] = vendor_shares(src)
    return summary


def vendor_shares(src: Source) -> dict[str, dict[str, dict[str, float]]]:
    """{"online_at_end": {vendor: spread}, "shipped": {vendor: spread}}: each vendor's share of all H100e online at
    the horizon end and of all H100e shipped during the run, across runs (vendors of the catalog's systems)."""
    online = O.compute_shares(src.agents, "vendor", at="end")
    ship = O.shipment_shares(src.market, "month", partial="flag")
    per_run = ship.groupby(["run", "vendor"])["h100e"].sum() if "run" in ship.columns else \
        ship.groupby("vendor")["h100e"].sum()
    total = per_run.groupby(level="run").transform("sum") if "run" in ship.columns else per_run.sum()
    shipped = (per_run / total).rename("share").reset_index()
    order = O.vendors_present(src.agents)
    order += sorted((set(online["vendor"]) | set(shipped["vendor"])) - set(order))
    out: dict[str, dict[str, dict[str, float]]] = {"online_at_end": {}, "shipped": {}}
    for key, frame in (("online_at_end", online), ("shipped", shipped)):
        for v in order:
            values = frame.loc[frame["vendor"] == v, "share"].fillna(0.0)
            if len(values):
                out[key][v] = O.spread(values)
    return out


def compare(paths: Sequence[Path | str]) -> list[dict]:
    return [summarise(read_folder(p), str(p)) for p in paths]


# -- presentation -----------------------------------------------------------------------------------------------
def _systems_in_order(summaries: list[dict]) -> list[str]:
    seen = {s for summ in summaries for ev in summ["firsts"].values() for s in ev}
    return [k for k in SYSTEM_COLORS if k in seen] + sorted(seen - set(SYSTEM_COLORS))


def _interval(spread: dict[str, float], scale: float, fmt: str, single: bool) -> str:
    text = format(spread["median"] / scale, fmt)
    if single:
        return text
    return f"{text} [{format(spread['p05'] / scale, fmt)}, {format(spread['p95'] / scale, fmt)}]"


def _first_cell(entry: dict[str, Any] | None, single: bool) -> str:
    if entry is None:
        return "-"
    if single:
        return f"{entry['date_median']} {entry['agent']}"
    text = (f"{entry['date_median']} [{entry['date_p05']}, {entry['date_p95']}] {entry['agent']} "
            f"{entry['agent_frequency']:.0%}")
    if entry["runs_with_event"] < entry["runs"]:
        text += f" (in {entry['runs_with_event']}/{entry['runs']} runs)"
    return text


def table_rows(summaries: list[dict]) -> list[tuple[str, list[str]]]:
    """(row label, one cell per input) for the text table."""
    rows: list[tuple[str, list[str]]] = []
    single = [s["runs"] == 1 for s in summaries]
    pairs = list(zip(summaries, single, strict=True))
    rows.append(("input", [f"{s['kind']}, {s['runs']} run{'s' if s['runs'] != 1 else ''}" for s in summaries]))
    for year in sorted({y for s in summaries for y in s["leaders"]}):
        cells = []
        for s, one in pairs:
            e = s["leaders"].get(year)
            if e is None:
                cells.append("-")
            elif one:
                cells.append(f"{e['agent']} {e['share']['median']:.0%}")
            else:
                cells.append(f"{e['agent']} {e['share']['median']:.0%} (leads {e['frequency']:.0%} of runs)")
        rows.append((f"H100e leader {year}", cells))
    systems = _systems_in_order(summaries)
    vendor = {k: e["vendor"] for s in summaries for ev in s["firsts"].values() for k, e in ev.items()}
    for event in O.FIRST_EVENTS:
        for system in systems:
            rows.append((f"{event} {system} ({vendor[system]})",
                         [_first_cell(s["firsts"][event].get(system), one) for s, one in pairs]))
    rows.append(("horizon end", [s["end"]["date"] for s in summaries]))
    rows.append(("total H100e at end (M)", [_interval(s["end"]["total_h100e"], 1e6, ".2f", one) for s, one in pairs]))
    rows.append(("largest cluster at end (GPUs)",
                 [_interval(s["end"]["largest_cluster_gpus"], 1, ",.0f", one) for s, one in pairs]))
    for key, label in (("online_at_end", "share of H100e online at end"), ("shipped", "share of H100e shipped")):
        vendors = list(dict.fromkeys(v for s in summaries for v in s["vendor_share_h100e"][key]))
        for v in vendors:
            cells = [_interval(s["vendor_share_h100e"][key][v], 0.01, ".1f", one) + "%"
                     if v in s["vendor_share_h100e"][key] else "-" for s, one in pairs]
            rows.append((f"{v} {label}", cells))
    for section, (_, label) in REVENUE_SECTIONS.items():
        periods = sorted({p for s in summaries for p in s[section]})
        for period in periods:
            cells = [_interval(s[section][period], 1e9, ".1f", one) if period in s[section] else "-"
                     for s, one in pairs]
            rows.append((label.format(period), cells))
    return rows


def format_table(summaries: list[dict]) -> str:
    rows = table_rows(summaries)
    header = ("", [s["path"] for s in summaries])
    label_w = max(len(label) for label, _ in [header, *rows])
    widths = [max(len(cells[i]) for _, cells in [header, *rows]) for i in range(len(summaries))]
    lines = []
    for n, (label, cells) in enumerate([header, *rows]):
        lines.append("  ".join([label.ljust(label_w), *(c.ljust(w) for c, w in zip(cells, widths, strict=True))])
                     .rstrip())
        if n == 0:
            lines.append("-" * len(lines[0]))
    lines.append("Sweeps: dates are the month by which 50% [5%, 95%] of the runs with the event had it; the agent "
                 "is the most frequent first; numbers are median [5%, 95%] across runs. Leaders and firsts are "
                 "named agents (the rest of the market counts in totals only); revenue is shown for fully "
                 "simulated years (fiscal year N = Feb N-1 .. Jan N).")
    return "\n".join(lines)


LONG_COLUMNS = ("input", "kind", "runs", "section", "item", "statistic", "value")


def long_table(summaries: list[dict]) -> pd.DataFrame:
    """One row per input, section, item and statistic (for --out FILE.csv)."""
    rows = []
    for s in summaries:
        def add(section: str, item: str, stat: str, value: Any, s: dict = s) -> None:
            rows.append({"input": s["path"], "kind": s["kind"], "runs": s["runs"], "section": section,
                         "item": item, "statistic": stat, "value": value})
        for year, e in s["leaders"].items():
            add("h100e_leader", year, "agent", e["agent"])
            add("h100e_leader", year, "frequency", e["frequency"])
            for k, v in e["share"].items():
                add("h100e_leader", year, f"share_{k}", v)
        for event, systems in s["firsts"].items():
            for system, e in systems.items():
                for k, v in e.items():
                    add(event, system, k, v)
        for metric in ("total_h100e", "largest_cluster_gpus"):
            for k, v in s["end"][metric].items():
                add("horizon_end", metric, k, v)
        for key, shares in s["vendor_share_h100e"].items():
            for vendor, spread in shares.items():
                for k, v in spread.items():
                    add(f"vendor_share_h100e_{key}", vendor, k, v)
        for section in REVENUE_SECTIONS:
            for period, spread in s[section].items():
                for k, v in spread.items():
                    add(section, period, k, v)
    return pd.DataFrame(rows, columns=list(LONG_COLUMNS))


def _clean(value: Any) -> Any:
    """Strict JSON: non-finite numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def command(args: argparse.Namespace) -> int:
    if args.out and Path(args.out).suffix.lower() != ".csv":
        raise InputError(f"--out {args.out}: expected a file name ending in .csv")
    if args.out:
        check_output_file(Path(args.out), ",".join(LONG_COLUMNS), "a table written by airace compare",
                          keep=[Path(p) for p in args.inputs])
    summaries = compare(args.inputs)
    if args.out:
        write_csv(Path(args.out), long_table(summaries))
    if args.json:
        print(dumps_strict({"inputs": [_clean(s) for s in summaries]}))
    else:
        print(format_table(summaries))
    return 0
