"""The live run as the page shows it: the model's tables so far, the chart series, and the outcomes.

`live_run(model).snapshot()` reads the model through its public tables only (`agents_frame`, `market_frame`,
`events_frame`, `time_index`, `n_months`, `current_date`) and only the DESIGN.md columns, so the app keeps working
while the market's internals change. It is incremental: each month only the new rows are brought to the results
schema (`model.results.conform`: dates as timestamps) and added to the series, so a month costs the same at the end
of the race as at its start. Every outcome the page states — leader and shares, firsts, clusters at scale, record
holders, revenue — comes from `model.results.outcomes`, called on the new rows (positions at a date depend on that
date's rows only) or, for firsts and clusters at scale, on the whole run so far whenever a new row could change them.

A `Snapshot` is immutable and shared by every component of one month (one per model and month, however many
components ask); the page never reads the model directly.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from model.hardware import SYSTEM_KEYS
from model.results import conform
from model.results import outcomes as O
from model.viz.names import KIND_ORDER

PER_AGENT = ("h100e", "largest_cluster_gpus", "frontier_run_days")
FIRST_TYPES = frozenset(O.FIRST_EVENTS)


def add_months(month: str, n: int) -> str:
    """"YYYY-MM" plus n months."""
    year, mon = map(int, month[:7].split("-"))
    m = mon - 1 + n
    return f"{year + m // 12:04d}-{m % 12 + 1:02d}"


def _timestamp(month: str) -> pd.Timestamp:
    return pd.Timestamp(f"{month}-01")


def _or_empty(frame: pd.DataFrame | None) -> pd.DataFrame:
    return pd.DataFrame() if frame is None else frame


def _months(dates: pd.Series) -> np.ndarray:
    """Timestamps as "YYYY-MM"."""
    return dates.dt.strftime("%Y-%m").to_numpy()


@dataclass(frozen=True)
class Snapshot:
    """The run after `months_done` months: tables (results schema), series (one row per month) and outcomes."""

    months_done: int
    n_months: int
    start_month: str  # "YYYY-MM", the first simulated month
    agents: pd.DataFrame = field(repr=False)
    market_rows: pd.DataFrame = field(repr=False)  # the market table as the model gives it (see `market`)
    events: pd.DataFrame = field(repr=False)  # events dated up to `month` (the model may log some ahead)
    months: tuple[str, ...] = ()  # "YYYY-MM" of each simulated month
    agent_names: tuple[str, ...] = ()  # kind order: hyperscalers, neoclouds, labs, the rest
    kinds: dict[str, str] = field(default_factory=dict)
    systems: tuple[str, ...] = ()  # catalog keys, table order
    per_agent: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # column -> months x agents
    share: np.ndarray = field(default=None, repr=False)  # months x agents: share of all H100e (outcomes.standings)
    gpus_by_system: np.ndarray = field(default=None, repr=False)  # months x systems (outcomes.generation_mix)
    backlog_gpus: np.ndarray = field(default=None, repr=False)  # months x systems (outcomes.backlog)
    rental: np.ndarray = field(default=None, repr=False)  # months x systems, USD per GPU-hour (NaN: not shipping)
    revenue_usd: np.ndarray = field(default=None, repr=False)  # per month
    standing: pd.DataFrame = field(default=None, repr=False)  # outcomes.standings at the latest month
    records: pd.DataFrame = field(default=None, repr=False)  # outcomes.records at the latest month
    firsts: pd.DataFrame = field(default=None, repr=False)  # outcomes.firsts so far
    clusters: pd.DataFrame = field(default=None, repr=False)  # outcomes.clusters_at_scale so far
    revenue_years: pd.DataFrame = field(default=None, repr=False)  # outcomes.revenue per full calendar year
    systems_at_start: frozenset[str] = frozenset()  # systems some agent already runs in the first month

    @property
    def month(self) -> str:
        """The month the page has reached ("YYYY-MM"); the start month before the first step."""
        return add_months(self.start_month, max(self.months_done - 1, 0))

    @property
    def end_month(self) -> str:
        return add_months(self.start_month, self.n_months - 1)

    @property
    def started(self) -> bool:
        return self.months_done > 0

    @property
    def finished(self) -> bool:
        return self.months_done >= self.n_months

    @cached_property
    def market(self) -> pd.DataFrame:
        """The market table so far (results schema), converted when asked for (the app draws from the series)."""
        return conform("market", self.market_rows.iloc[:self.months_done].reset_index(drop=True))

    @cached_property
    def dates(self) -> list[str]:
        """ISO first days of the simulated months, for chart axes."""
        return [f"{m}-01" for m in self.months]

    def agents_with_data(self, column: str) -> list[str]:
        """Agents (kind order) with a positive value of `column` in some month so far."""
        values = self.share if column == "share" else self.per_agent[column]
        if values is None or not len(values):
            return []
        has = np.nan_to_num(values, nan=0.0).max(axis=0) > 0
        return [a for a, h in zip(self.agent_names, has, strict=True) if h]

    def truncated(self, months_done: int) -> Snapshot:
        """This run's series as they were after `months_done` months (the baseline overlay of a shorter run)."""
        n = min(months_done, self.months_done)
        cut = (lambda a: a[:n]) if n < self.months_done else (lambda a: a)
        return Snapshot(n, self.n_months, self.start_month, self.agents, self.market_rows, self.events,
                        self.months[:n], self.agent_names, self.kinds, self.systems,
                        {k: cut(v) for k, v in self.per_agent.items()}, cut(self.share), cut(self.gpus_by_system),
                        cut(self.backlog_gpus), cut(self.rental), cut(self.revenue_usd))


class LiveRun:
    """One model's tables and series, grown month by month (see the module docstring)."""

    def __init__(self, model):
        self._model = weakref.ref(model)
        self._lock = threading.Lock()
        self.n_months = int(model.n_months)
        self.start_month = add_months(str(model.current_date)[:7], -int(model.time_index))
        self._agents = self._market = self._events = None  # the tables so far (results schema)
        self._rows = {"agents": 0, "market": 0, "events": 0}
        self._months: list[str] = []
        self._agent_index: dict[str, int] = {}
        self._kinds: dict[str, str] = {}
        self._systems: tuple[str, ...] = SYSTEM_KEYS  # the catalog until the first month's table says which
        self._gpus_per_system = np.empty(0)
        self._per_agent: dict[str, list[np.ndarray]] = {c: [] for c in PER_AGENT}
        self._share: list[np.ndarray] = []
        self._gpus_by_system: list[np.ndarray] = []
        self._backlog: list[np.ndarray] = []
        self._rental: list[np.ndarray] = []
        self._revenue: list[float] = []
        self._standing = self._records = self._firsts = self._clusters = self._revenue_year = None
        self._firsts_seen = 0
        self._at_start: frozenset[str] = frozenset()
        self._snapshot = self._make_snapshot(0)

    # -- reading the model ----------------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The run as of the model's current month (computed once per month)."""
        model = self._model()
        if model is None or int(model.time_index) == self._snapshot.months_done:
            return self._snapshot
        with self._lock:
            months_done = int(model.time_index)
            if months_done == self._snapshot.months_done:
                return self._snapshot
            # Mesa's play loop steps the model in one thread while the page may render in another (a click, a chart
            # scrolled into view): a read that meets a month being written is dropped, the next render catches up.
            try:
                agents, market, events = model.agents_frame(), model.market_frame(), model.events_frame()
            except (ValueError, IndexError, RuntimeError):  # a table grew while pandas read it
                return self._snapshot
            if int(model.time_index) != months_done or len(market) != months_done:
                return self._snapshot
            last = add_months(self.start_month, months_done - 1)
            written = agents.iloc[self._rows["agents"]:]
            agents = agents.iloc[:self._rows["agents"] + int((written["date"].astype(str).str[:7] <= last).sum())]
            self._ingest(agents, market, events, months_done)
            self._snapshot = self._make_snapshot(months_done)
            return self._snapshot

    def _ingest(self, agents: pd.DataFrame, market: pd.DataFrame, events: pd.DataFrame, months_done: int) -> None:
        new_agents = conform("agents", agents.iloc[self._rows["agents"]:].reset_index(drop=True))
        new_market = market.iloc[self._rows["market"]:].reset_index(drop=True)
        new_events = events.iloc[self._rows["events"]:].reset_index(drop=True)
        new_events = conform("events", new_events) if len(new_events) or self._events is None else self._events.head(0)
        self._rows = {"agents": len(agents), "market": len(market), "events": len(events)}
        if self._agents is None:
            self._first_rows(new_agents)
            self._agents, self._events = new_agents, new_events
        else:
            self._agents = pd.concat([self._agents, new_agents], ignore_index=True)
            if len(new_events):
                self._events = pd.concat([self._events, new_events], ignore_index=True)
        self._market = market
        self._add_agent_series(new_agents)
        self._add_market_series(new_market)
        last_month = add_months(self.start_month, months_done - 1)
        latest = new_agents[new_agents["date"] == _timestamp(last_month)]
        self._records = O.records(latest, at="end")
        if self._revenue_year is None or new_market["date"].astype(str).str[5:7].eq("12").any():
            # changes only when a year completes
            self._revenue_year = O.revenue(conform("market", market), "calendar_year")
        self._update_firsts(last_month)
        self._update_clusters(new_agents)

    def _first_rows(self, rows: pd.DataFrame) -> None:
        first = rows.drop_duplicates("agent")
        rank = {k: i for i, k in enumerate(KIND_ORDER)}
        order = sorted(range(len(first)), key=lambda i: (rank.get(first["kind"].iloc[i], len(rank)), i))
        self._agent_index = {first["agent"].iloc[i]: j for j, i in enumerate(order)}
        self._kinds = dict(zip(first["agent"], first["kind"], strict=True))
        self._systems = tuple(c.removeprefix("gpus_online_") for c in rows.columns if c.startswith("gpus_online_"))
        self._gpus_per_system = O.system_facts(self._systems)["gpus_per_system"].to_numpy(dtype=float)
        month0 = rows[rows["date"] == rows["date"].min()]
        self._at_start = frozenset(k for k in self._systems if month0[f"gpus_online_{k}"].sum() > 0)

    def _add_agent_series(self, rows: pd.DataFrame) -> None:
        months = _months(rows["date"])
        new_months = list(dict.fromkeys(months))
        pos = {m: i for i, m in enumerate(new_months)}
        r = np.array([pos[m] for m in months])
        c = np.array([self._agent_index[a] for a in rows["agent"]])
        n = len(self._agent_index)
        for column in PER_AGENT:
            matrix = np.full((len(new_months), n), np.nan)
            matrix[r, c] = rows[column].to_numpy(dtype=float)
            self._per_agent[column].extend(matrix)
        share = np.full((len(new_months), n), np.nan)
        standing = O.standings(rows, at="all")
        self._standing = standing[standing["date"] == standing["date"].max()].reset_index(drop=True)
        share[[pos[m] for m in _months(standing["date"])], [self._agent_index[a] for a in standing["agent"]]] = (
            standing["share"].to_numpy(dtype=float))
        self._share.extend(share)
        # the `gpus` of outcomes.generation_mix (all agents), summed here on the new rows: a twentieth of its cost
        cols = [f"gpus_online_{k}" for k in self._systems]
        by_month = rows.assign(_m=months).groupby("_m", sort=False)[cols].sum()
        self._gpus_by_system.extend(by_month.loc[new_months].to_numpy(dtype=float))
        self._months.extend(new_months)

    def _add_market_series(self, rows: pd.DataFrame) -> None:
        # outcomes.backlog's `backlog_gpus` (units x the catalog's GPUs per system, its `system_facts`), on raw rows
        per = self._gpus_per_system
        self._backlog.extend(rows[[f"backlog_units_{k}" for k in self._systems]].to_numpy(dtype=float) * per)
        self._rental.extend(rows[[f"rental_usd_per_gpu_hour_{k}" for k in self._systems]].to_numpy(dtype=float))
        self._revenue.extend(rows["nvidia_revenue_usd"].to_numpy(dtype=float))

    def _update_firsts(self, last_month: str) -> None:
        """Call outcomes.firsts when a milestone of the months so far could change them: one of an (event, system)
        that has no first yet (a later milestone of one that has cannot be earlier than it)."""
        events = self._events
        milestones = events[events["event"].isin(FIRST_TYPES) & (events["date"] <= _timestamp(last_month))]
        if self._firsts is not None and len(milestones) == self._firsts_seen:
            return
        new = milestones.iloc[self._firsts_seen:]
        decided = set() if self._firsts is None else set(zip(self._firsts["event"], self._firsts["system"],
                                                             strict=True))
        if self._firsts is None or not set(zip(new["event"], new["system"], strict=True)) <= decided:
            self._firsts = O.firsts(milestones, self._agents.head(len(self._agent_index)))
        self._firsts_seen = len(milestones)

    def _update_clusters(self, rows: pd.DataFrame) -> None:
        """Clusters at scale change only when a new row reaches a threshold not reached yet."""
        reached = set() if self._clusters is None else set(self._clusters["threshold_gpus"])
        open_thresholds = [t for t in O.CLUSTER_THRESHOLDS_GPUS if t not in reached]
        if self._clusters is None or (open_thresholds and rows["largest_cluster_gpus"].max() >= min(open_thresholds)):
            self._clusters = O.clusters_at_scale(self._agents)

    def _make_snapshot(self, months_done: int) -> Snapshot:
        names = tuple(sorted(self._agent_index, key=self._agent_index.get))
        n_agents, n_systems = len(names), len(self._systems)

        def stack(rows: list[np.ndarray], width: int) -> np.ndarray:
            return np.vstack(rows) if rows else np.empty((0, width))

        events = self._events
        if events is not None and len(events):
            events = events[events["date"] <= _timestamp(add_months(self.start_month, months_done - 1))]
        return Snapshot(
            months_done=months_done, n_months=self.n_months, start_month=self.start_month,
            agents=_or_empty(self._agents), market_rows=_or_empty(self._market), events=_or_empty(events),
            months=tuple(self._months), agent_names=names, kinds=dict(self._kinds),
            systems=self._systems,
            per_agent={c: stack(v, n_agents) for c, v in self._per_agent.items()},
            share=stack(self._share, n_agents), gpus_by_system=stack(self._gpus_by_system, n_systems),
            backlog_gpus=stack(self._backlog, n_systems), rental=stack(self._rental, n_systems),
            revenue_usd=np.asarray(self._revenue, dtype=float), standing=self._standing, records=self._records,
            firsts=self._firsts, clusters=self._clusters, revenue_years=self._revenue_year,
            systems_at_start=self._at_start,
        )


_RUNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_RUNS_LOCK = threading.Lock()


def live_run(model) -> LiveRun:
    """The model's `LiveRun`, made on first use and kept as long as the model lives (a reset is a new model)."""
    with _RUNS_LOCK:
        run = _RUNS.get(model)
        if run is None:
            run = _RUNS[model] = LiveRun(model)
        return run


def snapshot(model) -> Snapshot:
    return live_run(model).snapshot()
