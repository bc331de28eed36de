"""Chart series and table rows for the browser app, computed from the model's result tables so far.

Only the public API is used (`agents_frame`, `market_frame`, `events_frame`, `time_index`, `n_months`,
`current_date`) and only the DESIGN.md columns, so the app keeps working while the market internals change. All
charts of one month share one `Snapshot`, built once per (model, month): the tables are converted once, not once per
chart, to the results schema (`model.results.schema`: dates as timestamps), and the numbers the app states as
outcomes (leader, largest cluster, revenue) come from `model.results.outcomes`, as in `airace run`, `compare` and
`report`.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass

import pandas as pd

from model.results import conform
from model.results import outcomes as O

EVENT_TABLE_COLUMNS = ["month", "agent", "event", "system", "gpus", "detail"]


@dataclass(frozen=True)
class Snapshot:
    """The model's tables after `months_done` simulated months (schema dtypes), and the scenario's span of months."""

    agents: pd.DataFrame
    market: pd.DataFrame
    events: pd.DataFrame
    months_done: int
    n_months: int
    start_month: str  # "YYYY-MM", the first simulated month
    end_month: str  # "YYYY-MM", the last simulated month

    @property
    def month(self) -> str:
        """The month the charts have reached ("YYYY-MM"); the start month before the first step."""
        return add_months(self.start_month, max(self.months_done - 1, 0))

    @property
    def started(self) -> bool:
        return self.months_done > 0

    @property
    def finished(self) -> bool:
        return self.months_done >= self.n_months


def add_months(month: str, n: int) -> str:
    """"YYYY-MM" plus n months."""
    year, mon = map(int, month[:7].split("-"))
    m = mon - 1 + n
    return f"{year + m // 12:04d}-{m % 12 + 1:02d}"


def _up_to(frame: pd.DataFrame, month: str) -> pd.DataFrame:
    if frame.empty:
        return frame
    return frame[frame["date"].astype(str).str[:7] <= month].reset_index(drop=True)


def snapshot_of(model, attempts: int = 100) -> Snapshot:
    """The model's tables so far, as a `Snapshot`.

    SolaraViz may step the model in another thread while the page renders ("Use Threads"), so the month is noted
    first, rows of a month still being written are dropped, and a read that races a write is retried.
    """
    for _ in range(attempts):
        months_done = int(model.time_index)
        current = str(model.current_date)[:7]
        if int(model.time_index) != months_done:
            continue
        try:
            agents, market, events = model.agents_frame(), model.market_frame(), model.events_frame()
        except (ValueError, IndexError, RuntimeError):  # a table grew while pandas read it
            time.sleep(0.002)
            continue
        start = add_months(current, -months_done)
        last = add_months(start, months_done - 1)
        return Snapshot(
            agents=conform("agents", _up_to(agents, last)),
            market=conform("market", _up_to(market, last)),
            events=conform("events", events),
            months_done=months_done,
            n_months=int(model.n_months),
            start_month=start,
            end_month=add_months(start, int(model.n_months) - 1),
        )
    raise RuntimeError(f"could not read the model's tables consistently in {attempts} attempts")


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def cached_snapshot(model) -> Snapshot:
    """`snapshot_of(model)`, computed once per model and month however many charts ask (weakly keyed by model)."""
    hit = _CACHE.get(model)
    if hit is not None and hit.months_done == model.time_index:
        return hit
    snap = snapshot_of(model)
    _CACHE[model] = snap
    return snap


def month_timestamp(month: str) -> pd.Timestamp:
    return pd.Timestamp(f"{month[:7]}-01")


def _dates(frame: pd.DataFrame) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(pd.to_datetime(frame["date"].astype(str).str[:10]))


def system_keys(frame: pd.DataFrame, prefix: str) -> list[str]:
    """System keys in table order, read from the column names `<prefix><system>`."""
    return [c[len(prefix):] for c in frame.columns if c.startswith(prefix)]


def agent_order(agents: pd.DataFrame) -> list[str]:
    """Agents grouped by kind (hyperscalers, neoclouds, labs, others), each group in the table's order."""
    if agents.empty:
        return []
    first = agents.drop_duplicates("agent")
    rank = {"hyperscaler": 0, "neocloud": 1, "lab": 2, "other": 3}
    keyed = sorted((rank.get(k, 4), i, a) for i, (a, k) in enumerate(zip(first["agent"], first["kind"], strict=True)))
    return [a for _, _, a in keyed]


def _by_agent(agents: pd.DataFrame, column: str) -> pd.DataFrame:
    """One column per agent (kind order), one row per month (DatetimeIndex)."""
    if agents.empty:
        return pd.DataFrame(dtype=float)
    wide = agents.assign(_t=_dates(agents)).pivot(index="_t", columns="agent", values=column)
    wide = wide[agent_order(agents)].astype(float)
    wide.index.name = "date"
    wide.columns.name = None
    return wide


def h100e_by_agent(agents: pd.DataFrame) -> pd.DataFrame:
    """H100-equivalents online per agent per month."""
    return _by_agent(agents, "h100e")


def frontier_days_by_agent(agents: pd.DataFrame) -> pd.DataFrame:
    """Days to train the reference frontier run on each agent's largest cluster (NaN: no cluster that fits)."""
    return _by_agent(agents, "frontier_run_days")


def largest_cluster_now(agents: pd.DataFrame) -> pd.Series:
    """Largest single cluster (GPUs) per agent in the latest month, kind order."""
    if agents.empty:
        return pd.Series(dtype=float)
    last = agents[agents["date"] == agents["date"].iloc[-1]].set_index("agent")["largest_cluster_gpus"]
    return last.reindex(agent_order(agents)).astype(float)


def gpus_by_system(agents: pd.DataFrame) -> pd.DataFrame:
    """GPUs online per system generation, summed over agents, one row per month."""
    if agents.empty:
        return pd.DataFrame(dtype=float)
    cols = [f"gpus_online_{k}" for k in system_keys(agents, "gpus_online_")]
    summed = agents.groupby("date", sort=True)[cols].sum()
    summed.index = pd.DatetimeIndex(pd.to_datetime(summed.index.astype(str).str[:10]), name="date")
    summed.columns = [c[len("gpus_online_"):] for c in cols]
    return summed.astype(float)


def _market_wide(market: pd.DataFrame, prefix: str) -> pd.DataFrame:
    if market.empty:
        return pd.DataFrame(dtype=float)
    keys = system_keys(market, prefix)
    wide = market[[prefix + k for k in keys]].apply(pd.to_numeric, errors="coerce").astype(float)
    wide.columns = keys
    wide.index = _dates(market).rename("date")
    return wide


def backlog_units_by_system(market: pd.DataFrame) -> pd.DataFrame:
    """NVIDIA's order backlog per system (systems, not GPUs) at the end of each month."""
    return _market_wide(market, "backlog_units_")


def rental_by_system(market: pd.DataFrame) -> pd.DataFrame:
    """Rental price per GPU-hour per system (NaN while a system is not available)."""
    return _market_wide(market, "rental_usd_per_gpu_hour_")


def nvidia_revenue_usd(market: pd.DataFrame) -> pd.Series:
    """NVIDIA's revenue in each month (USD)."""
    if market.empty:
        return pd.Series(dtype=float)
    return pd.Series(market["nvidia_revenue_usd"].astype(float).to_numpy(), index=_dates(market).rename("date"))


def event_rows(events: pd.DataFrame, up_to_month: str | None = None) -> pd.DataFrame:
    """Events dated up to `up_to_month` ("YYYY-MM"), newest first (same month: latest logged first).

    The model may log an event dated in the future (e.g. a roadmap slip decided early); it appears when the race
    reaches its month, so the table reads as "what has happened so far".
    """
    if events.empty:
        return pd.DataFrame(columns=EVENT_TABLE_COLUMNS)
    rows = events.assign(month=events["date"].astype(str).str[:7], _order=range(len(events)))
    if up_to_month is not None:
        rows = rows[rows["month"] <= up_to_month]
    rows = rows.sort_values(["month", "_order"], ascending=[False, False])
    rows = rows.assign(gpus=rows["gpus"].fillna(0).astype(int), system=rows["system"].fillna("").astype(str),
                       detail=rows["detail"].fillna("").astype(str))
    return rows[EVENT_TABLE_COLUMNS].reset_index(drop=True)


def headline(snap: Snapshot) -> dict[str, str]:
    """A few numbers for the status card, by the outcomes module's conventions: the H100e leader this month and its
    share of all compute, the largest cluster of a named agent (the rest of the market, an aggregate, never leads),
    and NVIDIA's revenue this month."""
    if not snap.started or snap.agents.empty:
        return {}
    standing = O.standings(snap.agents, at="end")
    named = standing[O.is_named(standing["kind"])]
    leader = named.iloc[0]
    largest = named.sort_values(["largest_cluster_gpus", "agent"], ascending=[False, True]).iloc[0]
    out = {
        "H100e leader": f"{leader['agent']} ({leader['h100e'] / 1e6:.2f} M H100e, {leader['share']:.0%} of all)",
        "largest cluster": f"{largest['agent']} ({largest['largest_cluster_gpus']:,.0f} GPUs)",
    }
    revenue = O.revenue(snap.market, "month")
    if len(revenue):
        out["NVIDIA revenue this month"] = f"${revenue['nvidia_revenue_usd'].iloc[-1] / 1e9:.1f} B"
    return out
