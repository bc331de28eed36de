"""`airace compare`: result folders and sweep folders side by side.

A result folder is treated as a sweep of one run, so both go through the same statistics:
- leader by H100e at each year end (the last month of each calendar year in the tables): the agent that leads in the
  most runs, how often it leads, and its share of all agents' H100e (median and 5-95% across runs);
- first_online / first_cluster_at_scale per system: the month by which half (5%, 95%) of the runs that saw the event
  had it (quantiles of observed months, inverted CDF), and the most frequent first agent with its frequency;
- at the horizon end: total H100e and the largest single cluster; NVIDIA revenue per calendar year (sums of the
  monthly `nvidia_revenue_usd`): medians and 5-95% intervals across runs (linear interpolation).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from model.errors import InputError

FIRST_EVENTS = ("first_online", "first_cluster_at_scale")
QUANTILES = (0.05, 0.5, 0.95)


@dataclass(frozen=True)
class Source:
    """One input's tables, every one with a `run` column (0 for a single result folder)."""

    path: str
    kind: str  # "run" | "sweep"
    agents: pd.DataFrame
    market: pd.DataFrame
    events: pd.DataFrame

    @property
    def runs(self) -> int:
        return int(self.agents["run"].nunique())


def _iso(col: pd.Series) -> pd.Series:
    """Dates as 'YYYY-MM-DD' strings whether stored as ISO strings or timestamps."""
    return col.astype(str).str[:10]


def _read_tables(folder: Path) -> dict[str, pd.DataFrame]:
    """The three tables of a result or sweep folder; a missing or unreadable one is bad input, named."""
    tables = {}
    for name in ("agents", "market", "events"):
        path = folder / f"{name}.parquet"
        try:
            tables[name] = pd.read_parquet(path)
        except FileNotFoundError:
            raise InputError(f"{path}: missing; expected the {name} table of a result folder") from None
        except (OSError, ValueError) as exc:  # pyarrow raises ArrowInvalid (a ValueError) on a damaged file
            raise InputError(f"{path}: unreadable ({str(exc).splitlines()[0]}); expected a Parquet table") from None
    return tables


def load_source(path: Path | str) -> Source:
    d = Path(path)
    if (d / "sweep.json").is_file() and (d / "runs.parquet").is_file():
        missing = [n for n in ("agents", "market", "events") if not (d / f"{n}.parquet").is_file()]
        try:
            finished = json.loads((d / "sweep.json").read_text()).get("finished")
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"{d / 'sweep.json'}: unreadable ({exc})") from None
        if missing or not finished:
            raise InputError(f"{d}: sweep.json: finished is empty, the sweep did not finish (its combined tables "
                             "are missing or stale); finish it with `airace sweep ... --resume`")
        tables = _read_tables(d)
        kind = "sweep"
    elif (d / "manifest.json").is_file() and (d / "agents.parquet").is_file():
        tables = _read_tables(d)
        for df in tables.values():
            df.insert(0, "run", 0)
        kind = "run"
    else:
        raise InputError(f"{d}: not a result folder (manifest.json + agents.parquet) nor a sweep folder "
                         "(sweep.json + runs.parquet)")
    for df in tables.values():
        if "date" in df:
            df["date"] = _iso(df["date"])
    if tables["agents"].empty:
        raise InputError(f"{d}: agents table has no rows (a sweep with no ok runs?)")
    return Source(str(path), kind, tables["agents"], tables["market"], tables["events"])


# -- statistics -------------------------------------------------------------------------------------------------
def _spread(values: pd.Series | np.ndarray) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    p05, med, p95 = np.quantile(arr, QUANTILES)
    return {"median": float(med), "p05": float(p05), "p95": float(p95)}


def _month_number(dates: pd.Series) -> np.ndarray:
    return dates.str[:4].astype(int).to_numpy() * 12 + dates.str[5:7].astype(int).to_numpy() - 1


def _month_text(number: int) -> str:
    return f"{number // 12:04d}-{number % 12 + 1:02d}"


def _mode(values: pd.Series) -> tuple[str, float]:
    """The most frequent value (ties: alphabetical, so the answer is stable) and its frequency."""
    counts = values.value_counts()
    best = sorted(counts.index[counts == counts.max()])[0]
    return str(best), float(counts.max() / len(values))


def year_end_leaders(src: Source) -> dict[str, dict[str, Any]]:
    """Per year end: the named agent with the most H100e and its share of all compute (the rest of the market, an
    aggregate of many buyers, counts in the total but does not lead)."""
    a = src.agents[["run", "date", "agent", "kind", "h100e"]].copy()
    a["year"] = a["date"].str[:4]
    a = a[a["date"] == a.groupby(["run", "year"])["date"].transform("max")].copy()
    a["share"] = a["h100e"] / a.groupby(["run", "year"])["h100e"].transform("sum")
    named = a[a["kind"] != "other"]
    leaders = named.loc[named.groupby(["run", "year"])["h100e"].idxmax()]
    out = {}
    for year, group in leaders.groupby("year"):
        agent, freq = _mode(group["agent"])
        shares = a[(a["year"] == year) & (a["agent"] == agent)]["share"]
        label = group["date"].max()[:7]  # the last month of that calendar year in the tables
        out[label] = {"agent": agent, "frequency": freq, "share": _spread(shares.fillna(0.0))}
    return out


def first_events(src: Source) -> dict[str, dict[str, dict[str, Any]]]:
    ev = src.events
    out: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in FIRST_EVENTS}
    if ev.empty:
        return out
    ev = ev[ev["event"].isin(FIRST_EVENTS)].sort_values(["run", "event", "system", "date"], kind="stable")
    firsts = ev.drop_duplicates(["run", "event", "system"], keep="first")
    for (event, system), group in firsts.groupby(["event", "system"]):
        months = _month_number(group["date"])
        p05, med, p95 = (int(q) for q in np.quantile(months, QUANTILES, method="inverted_cdf"))
        agent, freq = _mode(group["agent"])
        out[event][system] = {"date_median": _month_text(med), "date_p05": _month_text(p05),
                              "date_p95": _month_text(p95), "agent": agent, "agent_frequency": freq,
                              "runs_with_event": len(group), "runs": src.runs}
    return out


def horizon_end(src: Source) -> dict[str, Any]:
    a = src.agents
    last = a[a["date"] == a.groupby("run")["date"].transform("max")]
    per_run = last.groupby("run").agg(total_h100e=("h100e", "sum"),
                                      largest_cluster_gpus=("largest_cluster_gpus", "max"))
    return {"date": last["date"].max()[:7], "total_h100e": _spread(per_run["total_h100e"]),
            "largest_cluster_gpus": _spread(per_run["largest_cluster_gpus"])}


def revenue_by_year(src: Source) -> dict[str, dict[str, float]]:
    m = src.market[["run", "date", "nvidia_revenue_usd"]].copy()
    m["year"] = m["date"].str[:4]
    per_run = m.groupby(["year", "run"])["nvidia_revenue_usd"].sum()
    return {str(year): _spread(group) for year, group in per_run.groupby(level="year")}


def summarise(src: Source) -> dict[str, Any]:
    """Everything `compare` reports for one input, as plain JSON-able values."""
    return {"path": src.path, "kind": src.kind, "runs": src.runs, "leaders": year_end_leaders(src),
            "firsts": first_events(src), "end": horizon_end(src), "nvidia_revenue_usd": revenue_by_year(src)}


# -- presentation -----------------------------------------------------------------------------------------------
def _systems_in_order(summaries: list[dict]) -> list[str]:
    from model.palette import SYSTEM_COLORS

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
    rows.append(("input", [f"{s['kind']}, {s['runs']} run{'s' if s['runs'] != 1 else ''}" for s in summaries]))
    years = sorted({y for s in summaries for y in s["leaders"]})
    for year in years:
        cells = []
        for s, one in zip(summaries, single, strict=True):
            e = s["leaders"].get(year)
            if e is None:
                cells.append("-")
            elif one:
                cells.append(f"{e['agent']} {e['share']['median']:.0%}")
            else:
                cells.append(f"{e['agent']} {e['share']['median']:.0%} (leads {e['frequency']:.0%} of runs)")
        rows.append((f"H100e leader {year}", cells))
    systems = _systems_in_order(summaries)
    for event in FIRST_EVENTS:
        for system in systems:
            cells = [_first_cell(s["firsts"][event].get(system), one) for s, one in zip(summaries, single,
                                                                                           strict=True)]
            rows.append((f"{event} {system}", cells))
    rows.append(("horizon end", [s["end"]["date"] for s in summaries]))
    rows.append(("total H100e at end (M)",
                 [_interval(s["end"]["total_h100e"], 1e6, ".2f", one) for s, one in zip(summaries, single,
                                                                                         strict=True)]))
    rows.append(("largest cluster at end (GPUs)",
                 [_interval(s["end"]["largest_cluster_gpus"], 1, ",.0f", one)
                  for s, one in zip(summaries, single, strict=True)]))
    for year in sorted({y for s in summaries for y in s["nvidia_revenue_usd"]}):
        cells = [_interval(s["nvidia_revenue_usd"][year], 1e9, ".1f", one) if year in s["nvidia_revenue_usd"]
                 else "-" for s, one in zip(summaries, single, strict=True)]
        rows.append((f"NVIDIA revenue {year} ($bn)", cells))
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
                 "is the most frequent first; numbers are median [5%, 95%] across runs.")
    return "\n".join(lines)


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
        for year, spread in s["nvidia_revenue_usd"].items():
            for k, v in spread.items():
                add("nvidia_revenue_usd", year, k, v)
    return pd.DataFrame(rows, columns=["input", "kind", "runs", "section", "item", "statistic", "value"])


def compare(paths: list[Path | str]) -> list[dict]:
    return [summarise(load_source(p)) for p in paths]


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def _write_csv(path: Path, df: pd.DataFrame) -> None:
    """Atomically: a temporary file beside it, then a rename."""
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        df.to_csv(name, index=False)
        os.chmod(name, 0o644)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def compare_command(args: argparse.Namespace) -> int:
    if args.out and Path(args.out).suffix.lower() != ".csv":
        raise InputError(f"--out {args.out}: expected a file name ending in .csv")
    summaries = compare(args.inputs)
    if args.out:
        _write_csv(Path(args.out), long_table(summaries))
    if args.json:
        print(json.dumps({"inputs": [_clean(s) for s in summaries]}))
    else:
        print(format_table(summaries))
    return 0
