"""Derived tables shared by the figures and the report: bands across runs, firsts, fiscal quarters, outcomes.

Kept apart from drawing so that the CSV written beside each figure is exactly the table the figure was drawn from.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from model.palette import SYSTEM_COLORS

KIND_ORDER = ("hyperscaler", "neocloud", "lab", "other")
MILESTONES = {"first_online": "first online", "first_cluster_at_scale": "first at-scale cluster"}
LOW_Q, HIGH_Q = 0.05, 0.95


def systems_in(columns: Sequence[str], prefix: str) -> list[str]:
    """System keys of the `<prefix><system>` columns, in catalog (palette) order, unknown keys last."""
    found = [c[len(prefix):] for c in columns if c.startswith(prefix)]
    order = list(SYSTEM_COLORS)
    return sorted(found, key=lambda k: (order.index(k) if k in order else len(order), k))


def kinds_in(agents: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(agents["kind"]))
    return [k for k in KIND_ORDER if k in present] + sorted(k for k in present if k not in KIND_ORDER)


def band(df: pd.DataFrame, keys: Sequence[str], value: str) -> pd.DataFrame:
    """Median and 5-95% range of `value` across runs for each `label` + keys; `runs` counts non-missing values.

    With one run the median and both bounds equal the run's value, so single runs and sweeps share one schema.
    """
    by = ["label", *keys]
    grouped = df.groupby(by, sort=False, dropna=False)[value]
    out = grouped.median().rename(value).to_frame()
    out[f"{value}_p05"] = grouped.quantile(LOW_Q)
    out[f"{value}_p95"] = grouped.quantile(HIGH_Q)
    out.insert(0, "runs", grouped.count())
    return out.reset_index()


def month_index(dates: pd.Series, start: pd.Timestamp) -> pd.Series:
    """Whole months from `start` (0 for the start month)."""
    return (dates.dt.year - start.year) * 12 + (dates.dt.month - start.month)


def firsts(events: pd.DataFrame) -> pd.DataFrame:
    """First date per label, run, agent, system and milestone (first_online, first_cluster_at_scale)."""
    ev = events[events["event"].isin(list(MILESTONES))]
    cols = ["label", "run", "agent", "system", "event"]
    if ev.empty:
        return pd.DataFrame(columns=[*cols, "date", "gpus"])
    ev = ev.sort_values("date", kind="stable")
    return ev.groupby(cols, sort=False).first()[["date", "gpus"]].reset_index()


def firsts_across_runs(rs_events: pd.DataFrame, runs_per_label: dict[str, int]) -> pd.DataFrame:
    """Per label, agent, system, milestone: median and 5-95% of the first date over the runs that reached it."""
    f = firsts(rs_events)
    cols = ["label", "agent", "system", "event"]
    if f.empty:
        return pd.DataFrame(columns=[*cols, "runs", "runs_reached", "date", "date_p05", "date_p95"])
    return date_band(f, ["agent", "system", "event"], runs_per_label)


def leading_first(rs_events: pd.DataFrame) -> pd.DataFrame:
    """Per label, system, milestone: who was first in each run, then the most frequent first and its share."""
    f = firsts(rs_events)
    cols = ["label", "system", "event"]
    if f.empty:
        return pd.DataFrame(columns=[*cols, "agent", "share", "runs", "date", "gpus"])
    f = f.sort_values("date", kind="stable")  # ties keep the events table's order, as `airace run` prints
    per_run = f.groupby(["label", "run", "system", "event"], sort=False).first().reset_index()
    rows = []
    for key, grp in per_run.groupby(cols, sort=False):
        counts = grp["agent"].value_counts()
        top = counts.index[0]
        mine = grp[grp["agent"] == top]
        t = mine["date"].astype("datetime64[ns]").astype("int64").median()
        rows.append({**dict(zip(cols, key, strict=True)), "agent": top, "share": counts.iloc[0] / len(grp),
                     "runs": len(grp), "date": pd.Timestamp(int(round(t))).floor("D"),
                     "gpus": float(mine["gpus"].median())})
    return pd.DataFrame(rows)


def fiscal_quarter_of(dates: pd.Series) -> pd.DataFrame:
    """NVIDIA fiscal quarters: Q1 Feb-Apr, Q2 May-Jul, Q3 Aug-Oct, Q4 Nov-Jan; FY = calendar year + 1 from Feb."""
    month = dates.dt.month
    quarter = ((month - 2) % 12) // 3 + 1
    fiscal_year = dates.dt.year + (month >= 2).astype(int)
    return pd.DataFrame({"fiscal_year": fiscal_year, "fiscal_quarter": quarter,
                         "quarter": "Q" + quarter.astype(str) + " FY" + fiscal_year.astype(str)}, index=dates.index)


def quarter_bounds(fiscal_year: int, quarter: int) -> tuple[pd.Timestamp, pd.Timestamp]:
    """First day of the quarter's first month and first day of the month after it ends."""
    start = pd.Timestamp(year=fiscal_year - 1, month=2, day=1) + pd.DateOffset(months=3 * (quarter - 1))
    return start, start + pd.DateOffset(months=3)


def quarterly_revenue(market: pd.DataFrame) -> pd.DataFrame:
    """Monthly `nvidia_revenue_usd` summed into fiscal quarters per label and run; `months` < 3 marks a partial one."""
    fq = fiscal_quarter_of(market["date"])
    df = pd.concat([market[["label", "run", "nvidia_revenue_usd"]], fq], axis=1)
    g = df.groupby(["label", "run", "fiscal_year", "fiscal_quarter", "quarter"], sort=True)["nvidia_revenue_usd"]
    out = pd.DataFrame({"nvidia_revenue_usd": g.sum(), "months": g.count()}).reset_index()
    bounds = [quarter_bounds(y, q) for y, q in zip(out["fiscal_year"], out["fiscal_quarter"], strict=True)]
    out["quarter_start"] = [b[0] for b in bounds]
    out["quarter_end"] = [b[1] - pd.Timedelta(days=1) for b in bounds]
    return out


def revenue_year(market: pd.DataFrame, preferred: int = 2027) -> int:
    """The calendar year for the 'NVIDIA revenue in a year' outcome: `preferred` if fully simulated, else the last
    full year, else the last year."""
    months = market.groupby(market["date"].dt.year)["date"].nunique()
    full = [int(y) for y, n in months.items() if n == 12]
    if preferred in full:
        return preferred
    return max(full) if full else int(months.index.max())


def run_outcomes(agents: pd.DataFrame, market: pd.DataFrame, events: pd.DataFrame,
                 year: int | None = None) -> tuple[pd.DataFrame, dict[str, str]]:
    """One row per label and run: outcomes the sensitivity and comparison figures rank runs by.

    Returns the table and a {column: readable name} map. First-online months count from the run's first month;
    they are missing in runs where the system never came online.
    """
    year = revenue_year(market) if year is None else year
    last = agents.groupby(["label", "run"])["date"].transform("max")
    end = agents[agents["date"] == last]
    out = end.groupby(["label", "run"])["h100e"].sum().rename("total_h100e_end").to_frame()
    out["largest_cluster_gpus"] = agents.groupby(["label", "run"])["largest_cluster_gpus"].max()
    start = agents["date"].min()
    f = firsts(events)
    names = {"total_h100e_end": f"total H100e at {end['date'].max():%Y-%m}",
             "largest_cluster_gpus": "largest cluster (GPUs)"}
    for system, col, text in (("gb300_nvl72", "first_gb300_online_month", "GB300 NVL72"),
                              ("vr_nvl72", "first_vr_online_month", "Vera Rubin NVL72")):
        sel = f[(f["event"] == "first_online") & (f["system"] == system)]
        first = sel.groupby(["label", "run"])["date"].min()
        out[col] = month_index(first, start).reindex(out.index).astype(float) if len(first) else np.nan
        names[col] = f"first {text} online (months after {start:%Y-%m})"
    in_year = market[market["date"].dt.year == year]
    out[f"nvidia_revenue_usd_{year}"] = in_year.groupby(["label", "run"])["nvidia_revenue_usd"].sum()
    names[f"nvidia_revenue_usd_{year}"] = f"NVIDIA revenue {year} (USD)"
    return out.reset_index(), names


def date_band(df: pd.DataFrame, keys: Sequence[str], runs_per_label: dict[str, int]) -> pd.DataFrame:
    """Median and 5-95% of a `date` column per label + keys; `runs_reached` counts runs with a date."""
    d = df.assign(t=df["date"].astype("datetime64[ns]").astype("int64"))
    g = d.groupby(["label", *keys], sort=False)["t"]
    out = pd.DataFrame({"runs_reached": g.count(), "date": g.median(), "date_p05": g.quantile(LOW_Q),
                        "date_p95": g.quantile(HIGH_Q)}).reset_index()
    for c in ("date", "date_p05", "date_p95"):
        out[c] = pd.to_datetime(out[c].round().astype("int64")).dt.floor("D")
    out.insert(len(keys) + 1, "runs", out["label"].map(runs_per_label).astype(int))
    return out


def first_per_run(events: pd.DataFrame, event: str = "first_online") -> pd.DataFrame:
    """Per label, run and system: the earliest date any agent reached `event`, and who."""
    f = firsts(events)
    f = f[f["event"] == event].sort_values("date", kind="stable")
    return f.groupby(["label", "run", "system"], sort=False).first().reset_index()[
        ["label", "run", "system", "date", "agent", "gpus"]]
