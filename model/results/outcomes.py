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
  the scenario's `at_scale_gpus` (the market also raises it at fixed sizes, 1,000 / 10,000 / 100,000 GPUs, read by
  `firsts_at_sizes`); `clusters_at_scale` reads the agents table against any size thresholds.
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

import re
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
    largest cluster of any named agent), `largest_cluster_h100e` when the table has it (the largest cluster of any
    named agent in H100e: newer GPUs draw more power each, so clusters of a campus's size hold fewer GPUs and more
    H100e; it may be another cluster than the largest by GPUs) and `fastest_frontier_run_days` (the fewest days any
    named agent needs for the reference frontier run; empty while no cluster fits it)."""
    a = _with_run(agents)
    keys = run_keys(a)
    a = a[_at_mask(a, keys, at)]
    named = is_named(a["kind"])
    a = a.assign(named_h100e=a["h100e"].where(named, 0.0),
                 named_cluster_gpus=a["largest_cluster_gpus"].where(named, 0),
                 named_run_days=a["frontier_run_days"].where(named))
    columns = dict(total_h100e=("h100e", "sum"), named_h100e=("named_h100e", "sum"),
                   largest_cluster_gpus=("named_cluster_gpus", "max"))
    if "largest_cluster_h100e" in a:
        a = a.assign(named_cluster_h100e=a["largest_cluster_h100e"].where(named, 0.0))
        columns["largest_cluster_h100e"] = ("named_cluster_h100e", "max")
    columns["fastest_frontier_run_days"] = ("named_run_days", "min")
    out = a.groupby([*keys, "date"], sort=True).agg(**columns)
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
_AT_SIZE = re.compile(r"^\s*(\d+)\s*GPUs")
SCENARIO_THRESHOLD_TAG = "(at_scale_gpus)"  # what the market writes in the detail of its own threshold's events


def at_scale_sizes(events: pd.DataFrame) -> pd.DataFrame:
    """`first_cluster_at_scale` events with `threshold_gpus` (the size crossed, from the detail) and `scenario`
    (True for the scenario's own `at_scale_gpus`; also for results whose events carry no size, which had only
    that one)."""
    ev = events[events["event"] == "first_cluster_at_scale"]
    detail = ev["detail"].fillna("") if "detail" in ev.columns else pd.Series("", index=ev.index)
    size = detail.str.extract(_AT_SIZE, expand=False).astype(float)
    return ev.assign(threshold_gpus=size.astype("Int64"),
                     scenario=detail.str.contains(SCENARIO_THRESHOLD_TAG, regex=False) | size.isna())


def _scenario_threshold_only(events: pd.DataFrame) -> pd.DataFrame:
    """Events without the fixed-size `first_cluster_at_scale` rows that are not the scenario's own threshold."""
    if "detail" not in events.columns or not (events["event"] == "first_cluster_at_scale").any():
        return events
    sized = at_scale_sizes(events)
    return events.drop(index=sized.index[~sized["scenario"]])


def _ordered_milestones(events: pd.DataFrame, which: Sequence[str]) -> pd.DataFrame:
    ev = _with_run(events)
    ev = _scenario_threshold_only(ev[ev["event"].isin(list(which))])
    keys = run_keys(ev)
    return ev.assign(_order=np.arange(len(ev))).sort_values([*keys, "date", "_order"], kind="stable")


def milestones(events: pd.DataFrame, which: Sequence[str] = FIRST_EVENTS) -> pd.DataFrame:
    """Each agent's own first of each milestone per system (the aggregate included: these are its own dates, not
    firsts of the race). Returns run keys, agent, event, system, date, gpus."""
    ev = _ordered_milestones(events, which)
    keys = run_keys(ev)
    first = ev.drop_duplicates([*keys, "agent", "event", "system"], keep="first")
    return first[[*keys, "agent", "event", "system", "date", "gpus"]].reset_index(drop=True)


def _named_only(ev: pd.DataFrame, agents: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Events of named agents only: an aggregate (the rest of the market) is never first."""
    by = [k for k in keys if k == "label"]
    aggregates = agents.loc[~is_named(agents["kind"]), [*by, "agent"]].drop_duplicates()
    if not len(aggregates):
        return ev
    ev = ev.merge(aggregates.assign(_aggregate=True), on=[*by, "agent"], how="left", sort=False)
    return ev[ev["_aggregate"].isna()].drop(columns="_aggregate")


def firsts(events: pd.DataFrame, agents: pd.DataFrame, which: Sequence[str] = FIRST_EVENTS) -> pd.DataFrame:
    """Per run, milestone and system: the first named agent to reach it (the agents table says who is the
    aggregate; ties in a month: logged first). Returns run keys, event, system, date, agent, gpus."""
    ev = _ordered_milestones(events, which)
    keys = run_keys(ev)
    ev = _named_only(ev, agents, keys)
    first = ev.drop_duplicates([*keys, "event", "system"], keep="first")
    return first[[*keys, "event", "system", "date", "agent", "gpus"]].reset_index(drop=True)


def firsts_at_sizes(events: pd.DataFrame, agents: pd.DataFrame) -> pd.DataFrame:
    """Per run, system and cluster size (the fixed sizes every run reports and the scenario's own): the first named
    agent with a cluster of that system of at least that many GPUs in one site. Returns run keys, system,
    threshold_gpus, scenario (the scenario's own threshold), date, agent, gpus."""
    ev = _with_run(events)
    ev = at_scale_sizes(ev.assign(_order=np.arange(len(ev))))
    keys = run_keys(ev)
    cols = [*keys, "system", "threshold_gpus", "scenario", "date", "agent", "gpus"]
    ev = _named_only(ev, agents, keys)
    ev = ev.sort_values([*keys, "date", "_order"], kind="stable")
    first = ev.drop_duplicates([*keys, "system", "threshold_gpus"], keep="first")
    return first[cols].sort_values([*keys, "system", "threshold_gpus"], kind="stable").reset_index(drop=True)


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


def _period_parts(d: pd.Series, period: Period) -> tuple[dict[str, pd.Series], pd.Series, int]:
    """The label columns of each month's period ("period" and "year" or "fiscal_year"/"fiscal_quarter"), the
    period's first day and its length in months."""
    if period == "month":
        return {"period": d.dt.strftime("%Y-%m")}, d, 1
    if period == "calendar_year":
        return ({"period": d.dt.year.astype(str), "year": d.dt.year},
                pd.to_datetime({"year": d.dt.year, "month": 1, "day": 1}), 12)
    if period in ("fiscal_year", "fiscal_quarter"):
        fp = fiscal_periods(d)
        fy_start = pd.to_datetime({"year": fp["fiscal_year"] - 1, "month": 2, "day": 1})
        if period == "fiscal_year":
            return {"period": "FY" + fp["fiscal_year"].astype(str), "fiscal_year": fp["fiscal_year"]}, fy_start, 12
        month = (fp["fiscal_year"] - 1) * 12 + 1 + 3 * (fp["fiscal_quarter"] - 1)  # months since year 0; Feb = 1
        start = pd.to_datetime({"year": month // 12, "month": month % 12 + 1, "day": 1}).astype(DATE_DTYPE)
        return ({"period": fp["quarter"], "fiscal_year": fp["fiscal_year"], "fiscal_quarter": fp["fiscal_quarter"]},
                start, 3)
    raise ValueError(f"period {period!r}: expected month, calendar_year, fiscal_year or fiscal_quarter")


def revenue(market: pd.DataFrame, period: Period = "calendar_year", partial: Partial = "drop") -> pd.DataFrame:
    """NVIDIA revenue summed per period and run.

    Returns run keys, `period` (its label: "2025-01", "2025", "FY2025" or "Q1 FY2025"), `year` or `fiscal_year`
    (and `fiscal_quarter`), `period_start`, `period_end` (first and last day), `months` (simulated),
    `complete`, `nvidia_revenue_usd`. Periods not fully simulated are dropped unless `partial="flag"`.
    """
    m = _with_run(market)
    keys = run_keys(m)
    parts, start, length = _period_parts(m["date"], period)
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
    months = (df["date"].dt.year * 12 + df["date"].dt.month - 1).to_numpy()
    rows, quantiles = [], []
    # positions of each group's rows, groups in order of first appearance (as groupby(sort=False) iterates them)
    for key, where in sorted(df.groupby(by, sort=False).indices.items(), key=lambda kv: kv[1].min()):
        key = key if isinstance(key, tuple) else (key,)
        label = key[0] if "label" in by else None
        rows.append({**dict(zip(by, key, strict=True)), "runs": _runs_of(label, runs), "runs_reached": len(where)})
        quantiles.append(np.quantile(months[where], (LOW_Q, 0.5, HIGH_Q), method="inverted_cdf"))  # as month_quantiles
    out = pd.DataFrame(rows, columns=cols)
    q = np.asarray(quantiles, dtype=np.int64).reshape(-1, 3)
    for c, month in (("date_p05", q[:, 0]), ("date", q[:, 1]), ("date_p95", q[:, 2])):
        out[c] = pd.to_datetime({"year": month // 12, "month": month % 12 + 1, "day": 1}).astype(DATE_DTYPE)
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


# -- compute by system, vendor and owner --------------------------------------------------------------------------
SYSTEM_PREFIX = "gpus_online_"
UNKNOWN_VENDOR = "unknown"  # a system key the catalog does not know


def system_facts(keys: Sequence[str]) -> pd.DataFrame:
    """Per system key: `vendor`, `h100e_per_gpu` (dense BF16 over H100's 989 TFLOP/s) and `gpus_per_system`, from
    the catalog; a key the catalog does not know has vendor "unknown" and NaN numbers."""
    from model.hardware import systems  # lazy: the catalog file is read only when an outcome needs it

    catalog = systems()
    rows = []
    for key in keys:
        s = catalog.get(key)
        rows.append({"system": key, "vendor": s.vendor if s else UNKNOWN_VENDOR,
                     "h100e_per_gpu": float(s.h100e_per_gpu) if s else float("nan"),
                     "gpus_per_system": float(s.gpus_per_system) if s else float("nan")})
    return pd.DataFrame(rows, columns=["system", "vendor", "h100e_per_gpu", "gpus_per_system"]).set_index("system")


def generation_mix(agents: pd.DataFrame, at: At = "all", by: Sequence[str] = ()) -> pd.DataFrame:
    """Per run, date, the columns `by` (e.g. "kind", "agent"; none: all agents) and system: `vendor`, `gpus`
    (online), `h100e` (GPUs x the catalog's H100e per GPU) and `share` (of all H100e at that date and `by`).
    Systems come from the agents table's `gpus_online_<system>` columns; all-zero systems are kept (share 0)."""
    a = _with_run(agents)
    keys = run_keys(a)
    a = a[_at_mask(a, keys, at)]
    cols = [c for c in a.columns if c.startswith(SYSTEM_PREFIX)]
    group = [*keys, "date", *by]
    per = a.groupby(group, sort=True)[cols].sum()
    long = per.stack(future_stack=True).rename("gpus").reset_index()
    long = long.rename(columns={long.columns[len(group)]: "system"})
    long["system"] = long["system"].str.removeprefix(SYSTEM_PREFIX)
    facts = system_facts(list(dict.fromkeys(long["system"])))
    long.insert(len(group) + 1, "vendor", long["system"].map(facts["vendor"]))
    long["gpus"] = long["gpus"].astype("int64")
    long["h100e"] = long["gpus"] * long["system"].map(facts["h100e_per_gpu"])
    total = long.groupby(group, sort=False)["h100e"].transform("sum")
    long["share"] = (long["h100e"] / total.where(total > 0)).astype(float)
    return long.reset_index(drop=True)


def vendors_of(systems: pd.Series) -> pd.Series:
    """Per value of '+'-joined system keys (the agents table's `largest_cluster_systems`), the '+'-joined vendors
    of those systems from the catalog, in the systems' order without repeats ("" stays "")."""
    text = systems.fillna("").astype(str)
    keys = sorted({k for v in text.unique() for k in v.split("+") if k})
    vendor = system_facts(keys)["vendor"].to_dict() if keys else {}
    joined = {v: "+".join(dict.fromkeys(vendor[k] for k in v.split("+") if k)) for v in text.unique()}
    return text.map(joined).astype(str)


def vendors_present(agents: pd.DataFrame) -> list[str]:
    """The vendors of the systems that have GPUs online anywhere in `agents`, NVIDIA first, then by name."""
    cols = [c for c in agents.columns if c.startswith(SYSTEM_PREFIX) and (agents[c] > 0).any()]
    found = set(system_facts([c.removeprefix(SYSTEM_PREFIX) for c in cols])["vendor"]) if cols else set()
    return sorted(found, key=lambda v: (v != "NVIDIA", v))


def owner_compute_by_vendor(agents: pd.DataFrame, at: At = "end") -> pd.DataFrame:
    """Each owner's compute across all vendors: per run, date, agent, kind and vendor, `gpus` online, `h100e`
    (GPUs x the catalog's H100e per GPU: dense BF16 FLOP/s relative to H100's, for every vendor) and `share` of the
    owner's H100e. Vendors an owner has no GPUs of are left out."""
    mix = generation_mix(agents, at=at, by=["agent", "kind"])
    keys = run_keys(mix)
    out = mix.groupby([*keys, "date", "agent", "kind", "vendor"], sort=True)[["gpus", "h100e"]].sum().reset_index()
    out = out[out["gpus"] > 0].reset_index(drop=True)
    total = out.groupby([*keys, "date", "agent"], sort=False)["h100e"].transform("sum")
    out["share"] = (out["h100e"] / total.where(total > 0)).astype(float)
    return out


def compute_shares(agents: pd.DataFrame, by: Literal["agent", "kind", "vendor"] = "agent",
                   at: At = "all") -> pd.DataFrame:
    """Per run, date and owner (`by="agent"`), agent kind or vendor: its H100e and its share of all H100e (the
    aggregate included in the total). Vendor shares weigh each system's GPUs by the catalog's H100e per GPU
    (`generation_mix`); owner and kind shares read the agents table's `h100e`."""
    if by == "vendor":
        mix = generation_mix(agents, at=at)
        keys = run_keys(mix)
        out = mix.groupby([*keys, "date", "vendor"], sort=True)["h100e"].sum().reset_index()
    elif by in ("agent", "kind"):
        a = _with_run(agents)
        keys = run_keys(a)
        a = a[_at_mask(a, keys, at)]
        out = a.groupby([*keys, "date", by], sort=True)["h100e"].sum().reset_index()
    else:
        raise ValueError(f"by {by!r}: expected agent, kind or vendor")
    total = out.groupby([*keys, "date"], sort=False)["h100e"].transform("sum")
    out["share"] = (out["h100e"] / total.where(total > 0)).astype(float)
    return out


def mean_shares(shares: pd.DataFrame, group: str) -> pd.DataFrame:
    """`compute_shares` (or `generation_mix`) of several runs as one composition per (label,) date and group: the
    mean share across runs (means of shares still sum to one, medians need not), with the 5% and 95% share."""
    by = [*(["label"] if "label" in shares.columns else []), "date", group]
    g = shares.assign(share=shares["share"].fillna(0.0)).groupby(by, sort=True)["share"]
    out = pd.DataFrame({"runs": g.count(), "share": g.mean(), "share_p05": g.quantile(LOW_Q),
                        "share_p95": g.quantile(HIGH_Q)})
    return out.reset_index()


# -- clusters -------------------------------------------------------------------------------------------------------
def largest_clusters(agents: pd.DataFrame, at: At = "end") -> pd.DataFrame:
    """Each agent's largest single training cluster at the chosen dates, whatever its vendor: run keys, date,
    agent, kind, `largest_cluster_gpus` and, those present, `largest_cluster_h100e`, `largest_cluster_mw`,
    `largest_cluster_systems` and `largest_cluster_vendor` (its systems' vendors from the catalog, '+'-joined; ""
    when the agent has no cluster). Sorted by GPUs, largest first, named agents before the aggregate."""
    a = _with_run(agents)
    keys = run_keys(a)
    a = a[_at_mask(a, keys, at)]
    cols = [c for c in ("largest_cluster_gpus", "largest_cluster_h100e", "largest_cluster_mw",
                        "largest_cluster_systems") if c in a.columns]
    out = a[[*keys, "date", "agent", "kind", *cols]].copy()
    if "largest_cluster_systems" in out.columns:
        out["largest_cluster_vendor"] = vendors_of(out["largest_cluster_systems"]).to_numpy()
    out = out.assign(_named=~is_named(out["kind"])).sort_values(
        [*keys, "date", "_named", "largest_cluster_gpus", "agent"],
        ascending=[True] * (len(keys) + 2) + [False, True], kind="stable")
    return out.drop(columns="_named").reset_index(drop=True)


def largest_cluster_meaning(columns: Sequence[str]) -> str:
    """What `largest_cluster_gpus` holds in a table with these columns. The market's second generation (issue 15)
    makes it the largest single training cluster by GPUs and moves the fastest-reference-run cluster to its own
    column `reference_run_cluster_gpus`; a table without that column holds the older meaning."""
    if "reference_run_cluster_gpus" in columns:
        return "the largest single training cluster by GPUs (one site, one fabric)"
    return ("the cluster that trains the scenario's reference run fastest (its own or, for a lab, one it can reach), "
            "not the largest site: this result predates the largest-cluster column")


def has_largest_cluster(columns: Sequence[str]) -> bool:
    """True when `largest_cluster_gpus` is the largest single training cluster (see `largest_cluster_meaning`)."""
    return "reference_run_cluster_gpus" in columns


# -- labs' compute --------------------------------------------------------------------------------------------------
REACHABLE_COLUMN = "reachable_h100e"  # owned + contracted H100e of a lab (the market's second generation, issue 15)
CONTRACTED_COLUMN = "contracted_h100e"
_CONTRACT_YEARS = re.compile(r"over\s+([0-9.]+)\s+years")


def contracts_signed(events: pd.DataFrame) -> pd.DataFrame:
    """`contract_signed` events as contracts: run keys, `agent` (the lab or buyer holding the compute), `provider`,
    `date` (signed), `system`, `gpus`, `h100e` (GPUs x the catalog's H100e per GPU), `duration_months` (from the
    event's "over N years"; NaN when the detail does not say) and `end` (first month no longer held)."""
    ev = _with_run(events)
    keys = run_keys(ev)
    ev = ev[ev["event"] == "contract_signed"]
    cols = [*keys, "agent", "provider", "date", "system", "gpus", "h100e", "duration_months", "end"]
    if ev.empty:
        return pd.DataFrame(columns=cols)
    detail = ev["detail"] if "detail" in ev.columns else pd.Series("", index=ev.index)
    years = detail.str.extract(_CONTRACT_YEARS, expand=False).astype(float)
    months = (years * 12).round()
    facts = system_facts(list(dict.fromkeys(ev["system"])))
    out = ev[[*keys, "agent", "date", "system", "gpus"]].copy()
    out.insert(len(keys) + 1, "provider", detail.str.split(":", n=1).str[0].str.strip())
    out["h100e"] = out["gpus"] * out["system"].map(facts["h100e_per_gpu"])
    out["duration_months"] = months
    out["end"] = [d + pd.DateOffset(months=int(m)) if m == m else pd.NaT
                  for d, m in zip(out["date"], months, strict=True)]
    out["end"] = pd.to_datetime(out["end"]).astype(DATE_DTYPE)
    return out[cols].reset_index(drop=True)


def lab_compute(agents: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """Per run, date and lab: `owned_h100e`, `contracted_h100e`, `reachable_h100e` (owned + contracted) and
    `contracted_from` ("table" or "events").

    With the agents table's `reachable_h100e` (and `contracted_h100e`) columns, these are read as the market wrote
    them. Without them (results before issue 15) the contracted part is rebuilt from `contract_signed` events: each
    contract's GPUs in H100e from the month it was signed for its duration. That stand-in misses contracts signed
    before the run starts (they raise no event), counts a contract from signing even when it starts later, and
    does not subtract GPUs a provider has not delivered."""
    a = _with_run(agents)
    keys = run_keys(a)
    labs = a[a["kind"] == "lab"]
    out = labs[[*keys, "date", "agent", "h100e"]].rename(columns={"h100e": "owned_h100e"}).copy()
    if REACHABLE_COLUMN in labs.columns:
        out["reachable_h100e"] = labs[REACHABLE_COLUMN].astype(float).to_numpy()
        contracted = (labs[CONTRACTED_COLUMN].astype(float).to_numpy() if CONTRACTED_COLUMN in labs.columns
                      else out["reachable_h100e"] - out["owned_h100e"])
        out.insert(len(keys) + 3, "contracted_h100e", contracted)
        out["contracted_from"] = "table"
        return out.reset_index(drop=True)
    held = np.zeros(len(out))
    c = contracts_signed(events)
    if len(c):
        c = c[c["agent"].isin(set(out["agent"]))]
        by = [*keys, "agent"]
        index = out.reset_index(drop=True)
        for key, group in c.groupby(by, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            mask = np.ones(len(index), dtype=bool)
            for col, value in zip(by, key, strict=True):
                mask &= (index[col] == value).to_numpy()
            dates = index.loc[mask, "date"].to_numpy()
            total = np.zeros(mask.sum())
            for r in group.itertuples():
                active = dates >= np.datetime64(r.date)
                if not pd.isna(r.end):
                    active &= dates < np.datetime64(r.end)
                total += np.where(active, r.h100e, 0.0)
            held[mask] = total
    out = out.reset_index(drop=True)
    out["contracted_h100e"] = held
    out["reachable_h100e"] = out["owned_h100e"] + held
    out["contracted_from"] = "events"
    return out[[*keys, "date", "agent", "owned_h100e", "contracted_h100e", "reachable_h100e", "contracted_from"]]


_RUN_DETAIL = re.compile(r"^\s*([0-9.]+(?:[eE][+-]?[0-9]+)?)\s*FLOP(?:,\s*([0-9.]+)\s*days)?")


def training_runs(events: pd.DataFrame, agents: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each `training_run_started` event as a run: run keys, `agent`, `kind` (when `agents` is given), `date`
    (started), `flop` and `days` (from the event's detail "5.00e+25 FLOP, 30 days"), `gpus` (the cluster's)."""
    ev = _with_run(events)
    keys = run_keys(ev)
    ev = ev[ev["event"] == "training_run_started"]
    parsed = ev["detail"].str.extract(_RUN_DETAIL) if len(ev) else pd.DataFrame({0: [], 1: []})
    out = ev[[*keys, "agent", "date", "gpus"]].copy()
    out.insert(len(keys) + 2, "flop", parsed[0].astype(float).to_numpy())
    out.insert(len(keys) + 3, "days", parsed[1].astype(float).to_numpy())
    if agents is not None:
        kinds = agents.drop_duplicates([*[k for k in keys if k == "label"], "agent"])
        out = out.merge(kinds[[*[k for k in keys if k == "label"], "agent", "kind"]], how="left",
                        on=[*[k for k in keys if k == "label"], "agent"])
        out.insert(len(keys) + 1, "kind", out.pop("kind"))
    return out.reset_index(drop=True)


# -- capex, shipments, backlog and per-system market columns ----------------------------------------------------
def capex(agents: pd.DataFrame, period: Literal["calendar_year", "fiscal_year"] = "calendar_year",
          partial: Partial = "drop") -> pd.DataFrame:
    """Each agent's capex per calendar year (or NVIDIA fiscal year), a flow: `capex_usd_cumulative` at the period's
    last simulated month less its value at the month before the period (zero before the run's first month). Returns
    run keys, agent, kind, period, period_start, months, complete, capex_usd."""
    a = _with_run(agents)
    keys = run_keys(a)
    a = a.sort_values([*keys, "agent", "date"], kind="stable")
    d = a["date"]
    if period == "calendar_year":
        label, start = d.dt.year.astype(str), pd.to_datetime({"year": d.dt.year, "month": 1, "day": 1})
    elif period == "fiscal_year":
        fy = fiscal_periods(d)["fiscal_year"]
        label, start = "FY" + fy.astype(str), pd.to_datetime({"year": fy - 1, "month": 2, "day": 1})
    else:
        raise ValueError(f"period {period!r}: expected calendar_year or fiscal_year")
    previous = a.groupby([*keys, "agent"], sort=False)["capex_usd_cumulative"].shift(1).fillna(0.0)
    frame = a[[*keys, "agent", "kind"]].assign(period=label, period_start=start.astype(DATE_DTYPE),
                                               capex_usd=a["capex_usd_cumulative"] - previous)
    g = frame.groupby([*keys, "agent", "kind", "period", "period_start"], sort=True)["capex_usd"]
    out = pd.DataFrame({"months": g.count(), "capex_usd": g.sum()}).reset_index()
    out.insert(len(out.columns) - 1, "complete", out["months"] == 12)
    if partial == "drop":
        out = out[out["complete"]]
    return out.reset_index(drop=True)


def per_system(market: pd.DataFrame, prefix: str, value: str) -> pd.DataFrame:
    """The market table's `<prefix><system>` columns as long rows: run keys, date, system, `value`."""
    m = _with_run(market)
    keys = run_keys(m)
    cols = [c for c in m.columns if c.startswith(prefix)]
    long = m[[*keys, "date", *cols]].melt(id_vars=[*keys, "date"], var_name="system", value_name=value)
    long["system"] = long["system"].str.removeprefix(prefix)
    long[value] = pd.to_numeric(long[value], errors="coerce")
    return long


def backlog(market: pd.DataFrame) -> pd.DataFrame:
    """Order backlog per run, month and system: `backlog_units` (systems ordered, not yet shipped, at the month's
    end) and `backlog_gpus` (units x the catalog's GPUs per system)."""
    long = per_system(market, "backlog_units_", "backlog_units")
    facts = system_facts(list(dict.fromkeys(long["system"])))
    long["backlog_gpus"] = long["backlog_units"] * long["system"].map(facts["gpus_per_system"])
    return long


def shipments(market: pd.DataFrame, period: Period = "fiscal_quarter", partial: Partial = "flag") -> pd.DataFrame:
    """Systems shipped per run, period (as in `revenue`) and system: `units`, `gpus` (units x the catalog's GPUs per
    system) and `h100e`, with the period's `period_start`, `months` and `complete`."""
    long = per_system(market, "units_shipped_", "units")
    keys = run_keys(long)
    parts, start, length = _period_parts(long["date"], period)
    long["period"] = parts["period"]
    long["period_start"] = start.astype(DATE_DTYPE).to_numpy()
    facts = system_facts(list(dict.fromkeys(long["system"])))
    long["gpus"] = long["units"] * long["system"].map(facts["gpus_per_system"])
    long["h100e"] = long["gpus"] * long["system"].map(facts["h100e_per_gpu"])
    g = long.groupby([*keys, "period", "period_start", "system"], sort=False)
    out = g[["units", "gpus", "h100e"]].sum()
    out.insert(0, "months", g["date"].nunique())
    out = out.reset_index()
    out.insert(len(keys) + 4, "complete", out["months"] == length)
    if partial == "drop":
        out = out[out["complete"]]
    return out.sort_values([*keys, "period_start", "system"], kind="stable").reset_index(drop=True)


def shipment_shares(market: pd.DataFrame, period: Period = "fiscal_quarter", partial: Partial = "flag",
                    by: Literal["vendor", "system"] = "vendor") -> pd.DataFrame:
    """Shipments per run, period and vendor (or system), as in `shipments`, with each one's `share_gpus` and
    `share_h100e` of everything shipped in the period (empty when nothing shipped)."""
    ship = shipments(market, period, partial)
    keys = run_keys(ship)
    if by == "vendor":
        ship = ship.assign(vendor=ship["system"].map(system_facts(list(dict.fromkeys(ship["system"])))["vendor"]))
    elif by != "system":
        raise ValueError(f"by {by!r}: expected vendor or system")
    group = [*keys, "period", "period_start", "months", "complete"]
    out = ship.groupby([*group, by], sort=True)[["units", "gpus", "h100e"]].sum().reset_index()
    for value in ("gpus", "h100e"):
        total = out.groupby(group, sort=False)[value].transform("sum")
        out[f"share_{value}"] = (out[value] / total.where(total > 0)).astype(float)
    return out.sort_values([*keys, "period_start", by], kind="stable").reset_index(drop=True)


# -- differences against a baseline ---------------------------------------------------------------------------
def months_between(later: pd.Series, earlier: pd.Series) -> pd.Series:
    """Whole months from `earlier` to `later` (dates of months' first days)."""
    return ((later.dt.year - earlier.dt.year) * 12 + (later.dt.month - earlier.dt.month)).astype(float)


def differences(values: pd.DataFrame, seeds: pd.DataFrame, keys: Sequence[str], value: str,
                baseline: str) -> pd.DataFrame:
    """Each input minus the baseline input, per `keys` (e.g. date, year, system).

    `values`: label, run, keys, value (one row per run and key). `seeds`: label, run, seed. Runs of the two inputs
    with the same seed are paired and the difference is taken seed by seed (median, 5% and 95% of the paired
    differences); without common seeds it is the difference of the medians (no interval). The noise band is what
    seeds alone do: 5% and 95% of the differences between two different seeds of the baseline (empty with fewer
    than two baseline runs). A value missing in a run (a milestone never reached) leaves that run out; `runs`
    counts the differences taken. Returns label, keys, paired, runs, delta, delta_p05, delta_p95, noise_p05,
    noise_p95."""
    v = values.merge(seeds[["label", "run", "seed"]], on=["label", "run"], how="left")
    base = v[v["label"] == baseline]
    rows = []
    noise: dict[tuple, tuple[float, float]] = {}
    for key, g in base.groupby(list(keys), sort=False, dropna=False):
        x = g[value].dropna().to_numpy(float)
        key = key if isinstance(key, tuple) else (key,)
        if len(x) >= 2:
            diffs = (x[:, None] - x[None, :])[~np.eye(len(x), dtype=bool)]
            noise[key] = (float(np.quantile(diffs, LOW_Q)), float(np.quantile(diffs, HIGH_Q)))
    for label in [lab for lab in dict.fromkeys(v["label"]) if lab != baseline]:
        other = v[v["label"] == label]
        merged = other.merge(base, on=[*keys, "seed"], how="inner", suffixes=("", "_base"))
        paired = merged[[value, f"{value}_base"]].notna().all(axis=1)
        for key, g in other.groupby(list(keys), sort=False, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            mask = np.ones(len(merged), dtype=bool)
            for col, k in zip(keys, key, strict=True):
                mask &= (merged[col] == k).to_numpy()
            d = (merged.loc[mask & paired, value] - merged.loc[mask & paired, f"{value}_base"]).to_numpy(float)
            if len(d):
                s = spread(d)
                row = {"paired": True, "runs": len(d), "delta": s["median"], "delta_p05": s["p05"],
                       "delta_p95": s["p95"]}
            else:
                b = base
                for col, k in zip(keys, key, strict=True):
                    b = b[b[col] == k]
                mine, theirs = g[value].dropna(), b[value].dropna()
                delta = float(mine.median() - theirs.median()) if len(mine) and len(theirs) else float("nan")
                row = {"paired": False, "runs": min(len(mine), len(theirs)), "delta": delta,
                       "delta_p05": float("nan"), "delta_p95": float("nan")}
            lo, hi = noise.get(key, (float("nan"), float("nan")))
            rows.append({"label": label, **dict(zip(keys, key, strict=True)), **row, "noise_p05": lo,
                         "noise_p95": hi})
    cols = ["label", *keys, "paired", "runs", "delta", "delta_p05", "delta_p95", "noise_p05", "noise_p95"]
    return pd.DataFrame(rows, columns=cols)


FAN_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def fan(df: pd.DataFrame, keys: Sequence[str], value: str) -> pd.DataFrame:
    """Quantiles of `value` across runs for fan charts: per (label,) keys, `runs` and `<value>_p05`, `_p25`,
    `<value>` (median), `_p75`, `_p95` (linear interpolation): the 50% and 90% bands around the median."""
    by = [*(["label"] if "label" in df.columns and "label" not in keys else []), *keys]
    grouped = df.groupby(by, sort=False, dropna=False)[value]
    out = pd.DataFrame({"runs": grouped.count()})
    for q in FAN_QUANTILES:
        out[value if q == 0.5 else f"{value}_p{round(q * 100):02d}"] = grouped.quantile(q)
    return out.reset_index()
