"""The outcomes of a run or a sweep, computed once for the run summary, `compare`, `report` and the app.

Inputs are the result tables (`model.results.schema`; dates as timestamps). A frame may carry `run` (a sweep's
runs; absent: one run) and `label` (several inputs stacked); every per-run function groups by whichever of the two
are present and returns them as its first columns, so the same call works on one live run, one folder or many.

Conventions (written down here once; everything else refers to them):

- **Named agents and the aggregate.** Agents of kind `other` (the rest of the market) are an aggregate of many
  buyers: they count in every total and in the denominator of every share, but they never lead, never hold the
  largest cluster and are never first.
- **Positions at a date** (compute, shares, clusters) are stocks: they are read at a month, never summed. "Year
  ends" are each simulated December plus the run's last month (so a run ending mid-year reports its last month).
- **Ties.** Equal H100e or equal cluster sizes: the agent whose name sorts first leads. Firsts in the same month:
  the event logged first wins (the model logs one month's milestones in a seeded random order).
- **Firsts per generation** (`first_delivery`, `first_online`, `first_cluster_at_scale`): per system, the earliest
  such event of any named agent. The market raises none for systems some buyer already runs at the start (the race
  is about generations that arrive during the run), so those systems have no firsts. `first_cluster_at_scale` uses
  the scenario's `at_scale_gpus`; `clusters_at_scale` reads the agents table against any size thresholds.
- **Revenue** is a flow: monthly `nvidia_revenue_usd` summed over calendar years, NVIDIA fiscal years or fiscal
  quarters. NVIDIA's fiscal year N runs February of N-1 to January of N (FY2025 = Feb 2024 - Jan 2025; Q1 Feb-Apr,
  Q2 May-Jul, Q3 Aug-Oct, Q4 Nov-Jan; the real year ends on the last Sunday of January, months stand in for it). A
  period at the run's edges that is not fully simulated is **dropped** by default (`partial="drop"`); with
  `partial="flag"` it is kept with `complete` False and its `months` simulated, for figures that draw it faded.
- **Across runs** (a sweep): numbers are the median and the 5% and 95% quantiles (linear interpolation) over the
  runs; dates are months at those quantiles by the inverted CDF (always a month some run saw), over the runs that
  reached the milestone (`runs_with_event` of `runs`); the agent is the most frequent one (ties: name order) with
  the share of runs it has. A single run is a sweep of one: all three statistics equal its value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from model.results.schema import DATE_DTYPE, to_dates

AGGREGATE_KINDS = frozenset({"other"})
FIRST_EVENTS = ("first_delivery", "first_online", "first_cluster_at_scale")
# Reporting bins for clusters at scale (round sizes analysts quote), not model inputs: a scenario's own threshold
# is its `at_scale_gpus`, which the market uses for `first_cluster_at_scale`.
CLUSTER_THRESHOLDS_GPUS = (10_000, 100_000, 1_000_000)
LOW_Q, HIGH_Q = 0.05, 0.95
STANDING_COLUMNS = ("largest_cluster_gpus", "largest_cluster_h100e", "largest_cluster_mw", "frontier_run_days",
                    "reference_run_cluster_gpus", "power_mw_online")

Period = Literal["month", "calendar_year", "fiscal_year", "fiscal_quarter"]
Partial = Literal["drop", "flag"]
At = Literal["end", "year_ends", "all"] | str | pd.Timestamp | Sequence


# -- helpers ----------------------------------------------------------------------------------------------------
def run_keys(df: pd.DataFrame) -> list[str]:
    """The columns that tell runs apart in `df`: `label` and `run`, those present."""
    return [c for c in ("label", "run") if c in df.columns]


def _with_run(df: pd.DataFrame) -> pd.DataFrame:
    return df if "run" in df.columns else df.assign(run=0)


def is_named(kinds: pd.Series) -> pd.Series:
    """True for agents that can lead or be first (not the rest-of-market aggregate)."""
    return ~kinds.isin(AGGREGATE_KINDS)


def month_text(date: pd.Timestamp) -> str:
    return f"{date:%Y-%m}"


def _at_mask(df: pd.DataFrame, keys: list[str], at: At) -> pd.Series:
    if isinstance(at, str) and at in ("end", "year_ends", "all"):
        if at == "all":
            return pd.Series(True, index=df.index)
        last = df.groupby(keys, sort=False)["date"].transform("max")
        end = df["date"] == last
        return end | (df["date"].dt.month == 12) if at == "year_ends" else end
    dates = [at] if isinstance(at, str | pd.Timestamp) else list(at)
    return df["date"].isin(to_dates(pd.Series([pd.Timestamp(d) for d in dates], dtype=DATE_DTYPE)))


# -- positions at a date ------------------------------------------------------------------------------------------
def standings(agents: pd.DataFrame, at: At = "end") -> pd.DataFrame:
    """Each agent's compute at the chosen dates: its H100e, its share of all H100e (the aggregate included in the
    total), its `rank` among named agents (1 leads; the aggregate has none) and its cluster columns.

    `at`: "end" (each run's last month), "year_ends" (each December and the last month), "all", or dates.
    Returns run keys, date, agent, kind, h100e, share, rank, then the `STANDING_COLUMNS` present; sorted by rank.
    """
    a = _with_run(agents)
    keys = run_keys(a)
    a = a[_at_mask(a, keys, at)]
    cols = [*keys, "date", "agent", "kind", "h100e"]
    out = a[cols + [c for c in STANDING_COLUMNS if c in a.columns]].copy()
    total = out.groupby([*keys, "date"], sort=False)["h100e"].transform("sum")
    out.insert(len(cols), "share", (out["h100e"] / total.where(total > 0)).astype(float))
    named = is_named(out["kind"])
    out = out.assign(_named=~named).sort_values([*keys, "date", "_named", "h100e", "agent"],
                                                  ascending=[True] * (len(keys) + 2) + [False, True], kind="stable")
    rank = out.groupby([*keys, "date"], sort=False).cumcount() + 1
    out.insert(len(cols) + 1, "rank", rank.where(~out["_named"]).astype("Int64"))
    return out.drop(columns="_named").reset_index(drop=True)


def leaders(agents: pd.DataFrame, at: At = "year_ends") -> pd.DataFrame:
    """The named agent with the most H100e at each chosen date of each run (see `standings`)."""
    s = standings(agents, at)
    return s[s["rank"] == 1].drop(columns="rank").reset_index(drop=True)


def totals(agents: pd.DataFrame, at: At = "all") -> pd.DataFrame:
    """Per run and date: `total_h100e` (all agents), `named_h100e`, `aggregate_h100e`, `largest_cluster_gpus` (the
    largest cluster of any named agent) and `fastest_frontier_run_days` (the fewest days any named agent needs for
    the reference frontier run; empty while no cluster fits it)."""
    a = _with_run(agents)
    keys = run_keys(a)
    a = a[_at_mask(a, keys, at)]
    named = is_named(a["kind"])
    a = a.assign(named_h100e=a["h100e"].where(named, 0.0),
                 named_cluster_gpus=a["largest_cluster_gpus"].where(named, 0),
                 named_run_days=a["frontier_run_days"].where(named))
    out = a.groupby([*keys, "date"], sort=True).agg(total_h100e=("h100e", "sum"), named_h100e=("named_h100e", "sum"),
                                                    largest_cluster_gpus=("named_cluster_gpus", "max"),
                                                    fastest_frontier_run_days=("named_run_days", "min"))
    out.insert(2, "aggregate_h100e", out["total_h100e"] - out["named_h100e"])
    out["largest_cluster_gpus"] = out["largest_cluster_gpus"].astype("int64")
    return out.reset_index()


RECORD_MEASURES: dict[str, bool] = {  # measure -> True when the largest value holds the record
    "largest_cluster_gpus": True, "largest_cluster_h100e": True, "largest_cluster_mw": True,
    "frontier_run_days": False,
}


def records(agents: pd.DataFrame, at: At = "end") -> pd.DataFrame:
    """Per run, date and measure: the named agent that holds the record and its value. Measures are the largest
    cluster by GPUs, by H100e and by MW (those of the columns present) and the fewest days for the reference
    frontier run (`frontier_run_days`); ties: name order; a measure no named agent has a value for (no cluster fits
    the run yet) has no row. Returns run keys, date, measure, agent, value."""
    a = _with_run(agents)
    keys = run_keys(a)
    a = a[_at_mask(a, keys, at) & is_named(a["kind"])]
    rows = []
    for measure, largest in RECORD_MEASURES.items():
        if measure not in a.columns:
            continue
        have = a[a[measure].notna()].sort_values([*keys, "date", measure, "agent"],
                                                 ascending=[True] * (len(keys) + 1) + [not largest, True],
                                                 kind="stable")
        best = have.drop_duplicates([*keys, "date"], keep="first")
        rows.append(pd.DataFrame({**{k: best[k] for k in keys}, "date": best["date"], "measure": measure,
                                  "agent": best["agent"], "value": best[measure].astype(float)}))
    cols = [*keys, "date", "measure", "agent", "value"]
    if not rows:
        return pd.DataFrame(columns=cols)
    return pd.concat(rows, ignore_index=True).sort_values([*keys, "date"], kind="stable")[cols].reset_index(drop=True)


def kind_shares(agents: pd.DataFrame, at: At = "all") -> pd.DataFrame:
    """Per run, date and agent kind: the kind's H100e and its share of all H100e (the aggregate is kind `other`)."""
    a = _with_run(agents)
    keys = run_keys(a)
    a = a[_at_mask(a, keys, at)]
    out = a.groupby([*keys, "date", "kind"], sort=True)["h100e"].sum().reset_index()
    total = out.groupby([*keys, "date"])["h100e"].transform("sum")
    out["share"] = (out["h100e"] / total.where(total > 0)).astype(float)
    return out


# -- firsts -------------------------------------------------------------------------------------------------------
def _ordered_milestones(events: pd.DataFrame, which: Sequence[str]) -> pd.DataFrame:
    ev = _with_run(events)
    ev = ev[ev["event"].isin(list(which))]
    keys = run_keys(ev)
    return ev.assign(_order=np.arange(len(ev))).sort_values([*keys, "date", "_order"], kind="stable")


def milestones(events: pd.DataFrame, which: Sequence[str] = FIRST_EVENTS) -> pd.DataFrame:
    """Each agent's own first of each milestone per system (the aggregate included: these are its own dates, not
    firsts of the race). Returns run keys, agent, event, system, date, gpus."""
    ev = _ordered_milestones(events, which)
    keys = run_keys(ev)
    first = ev.drop_duplicates([*keys, "agent", "event", "system"], keep="first")
    return first[[*keys, "agent", "event", "system", "date", "gpus"]].reset_index(drop=True)


def firsts(events: pd.DataFrame, agents: pd.DataFrame, which: Sequence[str] = FIRST_EVENTS) -> pd.DataFrame:
    """Per run, milestone and system: the first named agent to reach it (the agents table says who is the
    aggregate; ties in a month: logged first). Returns run keys, event, system, date, agent, gpus."""
    ev = _ordered_milestones(events, which)
    keys = run_keys(ev)
    by = [k for k in keys if k == "label"]
    aggregates = agents.loc[~is_named(agents["kind"]), [*by, "agent"]].drop_duplicates()
    if len(aggregates):
        ev = ev.merge(aggregates.assign(_aggregate=True), on=[*by, "agent"], how="left", sort=False)
        ev = ev[ev["_aggregate"].isna()]
    first = ev.drop_duplicates([*keys, "event", "system"], keep="first")
    return first[[*keys, "event", "system", "date", "agent", "gpus"]].reset_index(drop=True)


def clusters_at_scale(agents: pd.DataFrame,
                      thresholds_gpus: Sequence[int] = CLUSTER_THRESHOLDS_GPUS) -> pd.DataFrame:
    """Per run and threshold: the first month a named agent's largest cluster (`largest_cluster_gpus`, as the
    agents table defines it) reached the threshold, who (in that month: the largest, then name order) and its size.
    Thresholds no one reached have no row."""
    a = _with_run(agents)
    keys = run_keys(a)
    a = a[is_named(a["kind"])]
    rows = []
    for threshold in thresholds_gpus:
        hit = a[a["largest_cluster_gpus"] >= threshold]
        hit = hit.sort_values([*keys, "date", "largest_cluster_gpus", "agent"],
                              ascending=[True] * (len(keys) + 1) + [False, True], kind="stable")
        first = hit.drop_duplicates(keys, keep="first")
        rows.append(first[[*keys, "date", "agent", "largest_cluster_gpus"]].assign(threshold_gpus=int(threshold)))
    cols = [*keys, "threshold_gpus", "date", "agent", "largest_cluster_gpus"]
    return pd.concat(rows, ignore_index=True)[cols] if rows else pd.DataFrame(columns=cols)


# -- revenue ------------------------------------------------------------------------------------------------------
def fiscal_periods(dates: pd.Series) -> pd.DataFrame:
    """NVIDIA fiscal year and quarter of each month (FY N = Feb N-1 .. Jan N; Q1 = Feb-Apr), and its "Qq FYyyyy"."""
    month = dates.dt.month
    quarter = ((month - 2) % 12) // 3 + 1
    fiscal_year = dates.dt.year + (month >= 2).astype(int)
    return pd.DataFrame({"fiscal_year": fiscal_year, "fiscal_quarter": quarter,
                         "quarter": "Q" + quarter.astype(str) + " FY" + fiscal_year.astype(str)}, index=dates.index)


def fiscal_quarter_start(fiscal_year: int, quarter: int) -> pd.Timestamp:
    """First day of the fiscal quarter's first month."""
    return pd.Timestamp(year=fiscal_year - 1, month=2, day=1) + pd.DateOffset(months=3 * (quarter - 1))


def revenue(market: pd.DataFrame, period: Period = "calendar_year", partial: Partial = "drop") -> pd.DataFrame:
    """NVIDIA revenue summed per period and run.

    Returns run keys, `period` (its label: "2025-01", "2025", "FY2025" or "Q1 FY2025"), `year` or `fiscal_year`
    (and `fiscal_quarter`), `period_start`, `period_end` (first and last day), `months` (simulated),
    `complete`, `nvidia_revenue_usd`. Periods not fully simulated are dropped unless `partial="flag"`.
    """
    m = _with_run(market)
    keys = run_keys(m)
    d = m["date"]
    if period == "month":
        parts = {"period": d.dt.strftime("%Y-%m")}
        start, length = d, 1
    elif period == "calendar_year":
        parts = {"period": d.dt.year.astype(str), "year": d.dt.year}
        start, length = pd.to_datetime({"year": d.dt.year, "month": 1, "day": 1}), 12
    elif period in ("fiscal_year", "fiscal_quarter"):
        fp = fiscal_periods(d)
        fy_start = pd.to_datetime({"year": fp["fiscal_year"] - 1, "month": 2, "day": 1})
        if period == "fiscal_year":
            parts = {"period": "FY" + fp["fiscal_year"].astype(str), "fiscal_year": fp["fiscal_year"]}
            start, length = fy_start, 12
        else:
            parts = {"period": fp["quarter"], "fiscal_year": fp["fiscal_year"],
                     "fiscal_quarter": fp["fiscal_quarter"]}
            start = pd.Series([s + pd.DateOffset(months=3 * (q - 1)) for s, q in
                               zip(fy_start, fp["fiscal_quarter"], strict=True)], index=d.index)
            length = 3
    else:
        raise ValueError(f"period {period!r}: expected month, calendar_year, fiscal_year or fiscal_quarter")
    frame = pd.DataFrame({**{k: m[k] for k in keys}, **parts, "period_start": start.astype(DATE_DTYPE),
                          "nvidia_revenue_usd": m["nvidia_revenue_usd"]}, index=m.index)
    by = [*keys, *parts, "period_start"]
    g = frame.groupby(by, sort=True)["nvidia_revenue_usd"]
    out = pd.DataFrame({"months": g.count(), "nvidia_revenue_usd": g.sum()}).reset_index()
    out.insert(len(by), "period_end", (out["period_start"] + pd.DateOffset(months=length)
                                       - pd.Timedelta(days=1)).astype(DATE_DTYPE))
    out.insert(len(by) + 2, "complete", out["months"] == length)
    if partial not in ("drop", "flag"):
        raise ValueError(f"partial {partial!r}: expected drop or flag")
    if partial == "drop":
        out = out[out["complete"]]
    return out.sort_values([*keys, "period_start"], kind="stable").reset_index(drop=True)


# -- across runs --------------------------------------------------------------------------------------------------
def spread(values: pd.Series | np.ndarray | Sequence[float]) -> dict[str, float]:
    """Median, 5% and 95% of numbers across runs (linear interpolation); NaN when there are none."""
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    if not len(arr):
        return {"median": float("nan"), "p05": float("nan"), "p95": float("nan")}
    p05, med, p95 = np.quantile(arr, (LOW_Q, 0.5, HIGH_Q))
    return {"median": float(med), "p05": float(p05), "p95": float(p95)}


def month_quantiles(dates: pd.Series) -> tuple[pd.Timestamp, pd.Timestamp, pd.Timestamp]:
    """5%, 50% and 95% of months across runs, each a month some run saw (inverted CDF)."""
    months = (dates.dt.year * 12 + dates.dt.month - 1).to_numpy()
    qs = np.quantile(months, (LOW_Q, 0.5, HIGH_Q), method="inverted_cdf")
    return tuple(pd.Timestamp(year=int(q) // 12, month=int(q) % 12 + 1, day=1) for q in qs)  # type: ignore[return-value]


def mode(values: pd.Series) -> tuple[str, float]:
    """The most frequent value (ties: name order) and the share of values it has."""
    counts = values.value_counts()
    best = sorted(counts.index[counts == counts.max()])[0]
    return str(best), float(counts.max() / len(values))


def band(df: pd.DataFrame, keys: Sequence[str], value: str) -> pd.DataFrame:
    """Median, 5% and 95% of `value` across runs for each `label` (when present) and `keys`; `runs` counts the
    runs with a value. Returns label, keys, runs, value, value_p05, value_p95."""
    by = [*(["label"] if "label" in df.columns and "label" not in keys else []), *keys]
    grouped = df.groupby(by, sort=False, dropna=False)[value]
    out = grouped.median().rename(value).to_frame()
    out[f"{value}_p05"] = grouped.quantile(LOW_Q)
    out[f"{value}_p95"] = grouped.quantile(HIGH_Q)
    out.insert(0, "runs", grouped.count())
    return out.reset_index()


def _runs_of(label: object, runs: int | Mapping[str, int]) -> int:
    return int(runs[str(label)]) if isinstance(runs, Mapping) else int(runs)


def date_band(df: pd.DataFrame, keys: Sequence[str], runs: int | Mapping[str, int]) -> pd.DataFrame:
    """Months at 5%, 50% and 95% of a `date` column across runs for each `label` (when present) and `keys`, by the
    inverted CDF over the runs that have a date. Returns label, keys, runs (all runs of the input: `runs`, or per
    label), runs_reached, date, date_p05, date_p95."""
    by = [*(["label"] if "label" in df.columns and "label" not in keys else []), *keys]
    cols = [*by, "runs", "runs_reached", "date", "date_p05", "date_p95"]
    rows = []
    for key, group in df.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        p05, med, p95 = month_quantiles(group["date"])
        label = key[0] if "label" in by else None
        rows.append({**dict(zip(by, key, strict=True)), "runs": _runs_of(label, runs), "runs_reached": len(group),
                     "date": med, "date_p05": p05, "date_p95": p95})
    out = pd.DataFrame(rows, columns=cols)
    for c in ("date", "date_p05", "date_p95"):
        out[c] = out[c].astype(DATE_DTYPE)
    return out


def firsts_across_runs(first: pd.DataFrame, runs: int | Mapping[str, int]) -> pd.DataFrame:
    """`firsts` of several runs summarised per (label,) event and system: `date`, `date_p05`, `date_p95` (months
    by inverted CDF over the runs with the event), `agent` (most often first) and `agent_frequency` (its share of
    those runs), `gpus` (median), `runs_with_event`, and `runs` (all runs of the input: `runs`, or per label)."""
    by = [*(["label"] if "label" in first.columns else []), "event", "system"]
    cols = [*by, "date", "date_p05", "date_p95", "agent", "agent_frequency", "gpus", "runs_with_event", "runs"]
    if first.empty:
        return pd.DataFrame(columns=cols)
    dates = date_band(first, by, runs).rename(columns={"runs_reached": "runs_with_event"})
    rows = []
    for key, group in first.groupby(by, sort=False):
        agent, freq = mode(group["agent"])
        rows.append({**dict(zip(by, key, strict=True)), "agent": agent, "agent_frequency": freq,
                     "gpus": float(group["gpus"].median())})
    return dates.merge(pd.DataFrame(rows), on=by)[cols]


def leaders_across_runs(standing: pd.DataFrame) -> pd.DataFrame:
    """`standings` of several runs summarised per (label,) date: the agent that leads in most runs (ties: name
    order), `frequency` (share of runs it leads) and its share of all H100e across runs (`share`, `share_p05`,
    `share_p95`; 0 in a run where it has none)."""
    by = [*(["label"] if "label" in standing.columns else []), "date"]
    rows = []
    for key, group in standing.groupby(by, sort=True):
        n = group["run"].nunique()
        top = group[group["rank"] == 1]
        agent, _ = mode(top["agent"])
        shares = group[group["agent"] == agent].groupby("run")["share"].first().fillna(0.0).to_numpy()
        s = spread(np.concatenate([shares, np.zeros(n - len(shares))]))
        rows.append({**dict(zip(by, key, strict=True)), "agent": agent,
                     "frequency": float((top["agent"] == agent).sum() / n), "share": s["median"],
                     "share_p05": s["p05"], "share_p95": s["p95"], "runs": n})
    return pd.DataFrame(rows, columns=[*by, "agent", "frequency", "share", "share_p05", "share_p95", "runs"])
