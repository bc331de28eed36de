"""The live run as the page shows it: the model's tables so far, the chart series, and the outcomes.

`live_run(model).snapshot()` reads the model through its public tables only (`agents_frame`, `market_frame`,
`events_frame`, `time_index`, `n_months`, `current_date`) and only the DESIGN.md columns, so the app keeps working
while the market's internals change. It is incremental: each month only the new rows are added to the series, so a
month costs the same at the end of the race as at its start; the whole agents table in the results schema
(`model.results.conform`: dates as timestamps) is made only when asked for (CSV downloads, clusters at scale). Every
outcome the page states comes from `model.results.outcomes` or equals it: firsts, clusters at scale and revenue are
its functions, called on the whole run so far whenever a new row could change them; a month's standings (leader,
shares) and record holders depend on that month's rows only and are computed here from them with numpy
(`month_standing`, `month_records`: outcomes' pandas calls cost most of a month's budget), and `test_viz_data`
checks them equal to `outcomes.standings` and `outcomes.records` on the whole table every month.

A `Snapshot` is immutable and shared by every component of one month (one per model and month, however many
components ask); the page never reads the model directly.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from model.hardware import SYSTEM_KEYS
from model.results import conform
from model.results import outcomes as O
from model.results.schema import DATE_DTYPE
from model.viz.names import KIND_ORDER

PER_AGENT = ("h100e", "largest_cluster_gpus", "frontier_run_days")
FIRST_TYPES = frozenset(O.FIRST_EVENTS)
STANDING_DTYPES = {"largest_cluster_gpus": "int64"}  # the other `outcomes.STANDING_COLUMNS` are float64


def month_standing(date: pd.Timestamp, agents: np.ndarray, kinds: np.ndarray, h100e: np.ndarray,
                   columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """`outcomes.standings(agents_table, at=date)` for one month's rows given as arrays (table order): the same
    frame, made with numpy (a month's standings by pandas' groupby and sort cost ~6 ms, most of a month's budget;
    `test_viz_data` checks the two are equal every month). `columns`: the `STANDING_COLUMNS` the table has."""
    total = h100e.sum()
    share = h100e / total if total > 0 else np.full(len(h100e), np.nan)
    aggregate = np.isin(kinds, list(O.AGGREGATE_KINDS))
    # outcomes' order: named first, most H100e first, then name; a stable sort keeps table order among equals
    order = np.lexsort((agents, -h100e, aggregate))
    rank = pd.array(np.where(aggregate[order], 0, np.cumsum(~aggregate[order])), dtype="Int64")
    rank[aggregate[order]] = pd.NA
    out = {"run": np.zeros(len(order), dtype="int64"), "date": pd.Series(np.full(len(order), date), dtype=DATE_DTYPE),
           "agent": pd.Series(agents[order], dtype="str"), "kind": pd.Series(kinds[order], dtype="str"),
           "h100e": h100e[order], "share": share[order], "rank": rank}
    out.update({c: v[order].astype(STANDING_DTYPES.get(c, "float64")) for c, v in columns.items()})
    return pd.DataFrame(out)


def month_records(date: pd.Timestamp, agents: np.ndarray, kinds: np.ndarray,
                  columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """`outcomes.records(agents_table, at=date)` for one month's rows given as arrays: per measure the named agent
    with the record (ties: name order) and its value; a measure no named agent has a value for has no row."""
    named = ~np.isin(kinds, list(O.AGGREGATE_KINDS))
    rows = []
    for measure, largest in O.RECORD_MEASURES.items():
        if measure not in columns:
            continue
        values = columns[measure].astype(float)
        have = np.flatnonzero(named & ~np.isnan(values))
        if not len(have):
            continue
        best = have[np.lexsort((agents[have], -values[have] if largest else values[have]))[0]]
        rows.append((measure, agents[best], float(values[best])))
    return pd.DataFrame({"run": np.zeros(len(rows), dtype="int64"),
                         "date": pd.Series([date] * len(rows), dtype=DATE_DTYPE),
                         "measure": pd.Series([r[0] for r in rows], dtype="str" if rows else object),
                         "agent": pd.Series([r[1] for r in rows], dtype="str" if rows else object),
                         "value": pd.Series([r[2] for r in rows], dtype=float)})


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
    agents_source: Callable[[], pd.DataFrame] = field(repr=False)  # the agents table so far, made when asked for
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
    def agents(self) -> pd.DataFrame:
        """The agents table so far (results schema), made when asked for (the app draws from the series)."""
        return self.agents_source()

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

    @cached_property
    def vendor_shares(self) -> tuple[tuple[str, ...], np.ndarray]:
        """(vendors, months x vendors): each vendor's share of all H100e online, as `outcomes.compute_shares(by=
        "vendor")` (GPUs of each system x the catalog's H100e per GPU, summed by the catalog's vendor) on the
        series; NaN while nothing is online. Vendors in catalog order (NVIDIA first)."""
        facts = O.system_facts(list(self.systems))
        vendors = tuple(dict.fromkeys(facts["vendor"]))
        if self.gpus_by_system is None or not len(self.gpus_by_system):
            return vendors, np.empty((0, len(vendors)))
        h100e = np.asarray(self.gpus_by_system, dtype=float) * facts["h100e_per_gpu"].to_numpy(dtype=float)
        of = facts["vendor"].to_numpy()
        per = np.column_stack([h100e[:, of == v].sum(axis=1) for v in vendors])
        total = per.sum(axis=1, keepdims=True)
        return vendors, per / np.where(total > 0, total, np.nan)

    def truncated(self, months_done: int) -> Snapshot:
        """This run's series as they were after `months_done` months (the baseline overlay of a shorter run)."""
        n = min(months_done, self.months_done)
        cut = (lambda a: a[:n]) if n < self.months_done else (lambda a: a)
        return Snapshot(n, self.n_months, self.start_month, self.agents_source, self.market_rows, self.events,
                        self.months[:n], self.agent_names, self.kinds, self.systems,
                        {k: cut(v) for k, v in self.per_agent.items()}, cut(self.share), cut(self.gpus_by_system),
                        cut(self.backlog_gpus), cut(self.rental), cut(self.revenue_usd))


class LiveRun:
    """One model's tables and series, grown month by month (see the module docstring)."""

    def __init__(self, model):
        self._model = weakref.ref(model)
        self._lock = threading.RLock()  # the agents table is made under it, also while a month is read
        self.n_months = int(model.n_months)
        self.start_month = add_months(str(model.current_date)[:7], -int(model.time_index))
        self._market = self._events = None  # the market table as given; the events so far (results schema)
        self._agent_chunks: list[pd.DataFrame] = []  # the agents table's rows as the model gave them, month by month
        self._agents_made: tuple[int, pd.DataFrame] = (0, pd.DataFrame())  # (chunks, agents table of them)
        self._first_agents = pd.DataFrame()  # the first month's rows (results schema), what outcomes.firsts reads
        self._rows = {"agents": 0, "market": 0, "events": 0}
        self._months: list[str] = []
        self._agent_index: dict[str, int] = {}
        self._kinds: dict[str, str] = {}
        self._systems: tuple[str, ...] = SYSTEM_KEYS  # the catalog until the first month's table says which
        self._gpus_per_system = np.empty(0)
        self._standing_columns: tuple[str, ...] = ()
        self._per_agent: dict[str, list[np.ndarray]] = {c: [] for c in PER_AGENT}
        self._share: list[np.ndarray] = []
        self._gpus_by_system: list[np.ndarray] = []
        self._backlog: list[np.ndarray] = []
        self._rental: list[np.ndarray] = []
        self._revenue: list[float] = []
        self._standing = self._records = self._firsts = self._clusters = self._revenue_year = None
        self._event_dates = np.empty(0, dtype="datetime64[ns]")
        self._event_is_first = np.empty(0, dtype=bool)
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
            months = np.array([str(d)[:7] for d in written["date"]], dtype=object)
            whole = months <= last
            self._ingest(written.iloc[:int(whole.sum())], months[whole], market, events, months_done)
            self._snapshot = self._make_snapshot(months_done)
            return self._snapshot

    def agents_table(self, chunks: int | None = None) -> pd.DataFrame:
        """The agents table (results schema) of the first `chunks` months read (all: None), made when asked for
        (downloads, clusters at scale) and grown from the last one made, not converted every month."""
        with self._lock:
            chunks = len(self._agent_chunks) if chunks is None else chunks
            made, table = self._agents_made
            if made == chunks:
                return table
            if made > chunks or not made:
                made, table = 0, None
            new = conform("agents", pd.concat(self._agent_chunks[made:chunks], ignore_index=True))
            table = new if table is None else pd.concat([table, new], ignore_index=True)
            if chunks == len(self._agent_chunks):
                self._agents_made = (chunks, table)
            return table

    def _ingest(self, agents: pd.DataFrame, months: np.ndarray, market: pd.DataFrame, events: pd.DataFrame,
                months_done: int) -> None:
        """Add the new rows: `agents` as the model gave them (whole months), `months` their "YYYY-MM"."""
        new_market = market.iloc[self._rows["market"]:].reset_index(drop=True)
        new_events = events.iloc[self._rows["events"]:].reset_index(drop=True)
        new_events = conform("events", new_events) if len(new_events) or self._events is None else self._events.head(0)
        self._rows = {"agents": self._rows["agents"] + len(agents), "market": len(market), "events": len(events)}
        if not self._agent_index:
            self._first_rows(agents)
        if len(agents):
            self._agent_chunks.append(agents.reset_index(drop=True))
        if self._events is None:
            self._events = new_events
        elif len(new_events):
            self._events = pd.concat([self._events, new_events], ignore_index=True)
        if len(new_events):
            self._event_dates = np.concatenate([self._event_dates, new_events["date"].to_numpy()])
            self._event_is_first = np.concatenate([self._event_is_first,
                                                   new_events["event"].isin(FIRST_TYPES).to_numpy()])
        self._market = market
        self._add_agent_series(agents, months)
        self._add_market_series(new_market)
        if self._revenue_year is None or new_market["date"].astype(str).str[5:7].eq("12").any():
            # changes only when a year completes
            self._revenue_year = O.revenue(conform("market", market), "calendar_year")
        last_month = add_months(self.start_month, months_done - 1)
        self._update_firsts(last_month)
        self._update_clusters(agents)

    def _first_rows(self, rows: pd.DataFrame) -> None:
        first = rows.drop_duplicates("agent")
        rank = {k: i for i, k in enumerate(KIND_ORDER)}
        order = sorted(range(len(first)), key=lambda i: (rank.get(first["kind"].iloc[i], len(rank)), i))
        self._agent_index = {first["agent"].iloc[i]: j for j, i in enumerate(order)}
        self._kinds = dict(zip(first["agent"], first["kind"], strict=True))
        self._systems = tuple(c.removeprefix("gpus_online_") for c in rows.columns if c.startswith("gpus_online_"))
        self._gpus_per_system = O.system_facts(self._systems)["gpus_per_system"].to_numpy(dtype=float)
        self._standing_columns = tuple(c for c in O.STANDING_COLUMNS if c in rows.columns)
        self._first_agents = conform("agents", rows.head(len(first)).reset_index(drop=True))
        month0 = rows[rows["date"] == rows["date"].min()]
        self._at_start = frozenset(k for k in self._systems if month0[f"gpus_online_{k}"].sum() > 0)

    def _add_agent_series(self, rows: pd.DataFrame, months: np.ndarray) -> None:
        """Each new month's row of every series, and the standings and records of the last one, in numpy: the
        same numbers as outcomes.standings, records and generation_mix on the whole table (tested)."""
        if not len(rows):
            return
        new_months = list(dict.fromkeys(months))
        pos = {m: i for i, m in enumerate(new_months)}
        r = np.array([pos[m] for m in months])
        agents = rows["agent"].to_numpy(dtype=object)
        c = np.array([self._agent_index[a] for a in agents])
        n = len(self._agent_index)
        for column in PER_AGENT:
            matrix = np.full((len(new_months), n), np.nan)
            matrix[r, c] = rows[column].to_numpy(dtype=float)
            self._per_agent[column].extend(matrix)
        h100e = rows["h100e"].to_numpy(dtype=float)
        totals = np.zeros(len(new_months))
        np.add.at(totals, r, h100e)
        share = np.full((len(new_months), n), np.nan)
        share[r, c] = h100e / np.where(totals > 0, totals, np.nan)[r]  # outcomes.standings' share
        self._share.extend(share)
        # the `gpus` of outcomes.generation_mix (all agents)
        by_month = np.zeros((len(new_months), len(self._systems)))
        np.add.at(by_month, r, rows[[f"gpus_online_{k}" for k in self._systems]].to_numpy(dtype=float))
        self._gpus_by_system.extend(by_month)
        self._months.extend(new_months)
        latest = r == len(new_months) - 1
        date = _timestamp(new_months[-1])
        kinds = rows["kind"].to_numpy(dtype=object)[latest]
        columns = {col: rows[col].to_numpy()[latest] for col in self._standing_columns}
        self._standing = month_standing(date, agents[latest], kinds, h100e[latest], columns)
        self._records = month_records(date, agents[latest], kinds, columns)

    def _add_market_series(self, rows: pd.DataFrame) -> None:
        # outcomes.backlog's `backlog_gpus` (units x the catalog's GPUs per system, its `system_facts`), on raw rows
        per = self._gpus_per_system
        self._backlog.extend(rows[[f"backlog_units_{k}" for k in self._systems]].to_numpy(dtype=float) * per)
        self._rental.extend(rows[[f"rental_usd_per_gpu_hour_{k}" for k in self._systems]].to_numpy(dtype=float))
        self._revenue.extend(rows["nvidia_revenue_usd"].to_numpy(dtype=float))

    def _update_firsts(self, last_month: str) -> None:
        """Call outcomes.firsts when a milestone of the months so far could change them: one of an (event, system)
        that has no first yet (a later milestone of one that has cannot be earlier than it)."""
        shown = self._event_is_first & (self._event_dates <= np.datetime64(_timestamp(last_month)))
        if self._firsts is not None and int(shown.sum()) == self._firsts_seen:
            return
        milestones = self._events[shown]
        new = milestones.iloc[self._firsts_seen:]
        decided = set() if self._firsts is None else set(zip(self._firsts["event"], self._firsts["system"],
                                                             strict=True))
        if self._firsts is None or not set(zip(new["event"], new["system"], strict=True)) <= decided:
            self._firsts = O.firsts(milestones, self._first_agents)
        self._firsts_seen = len(milestones)

    def _update_clusters(self, rows: pd.DataFrame) -> None:
        """Clusters at scale change only when a new row reaches a threshold not reached yet."""
        reached = set() if self._clusters is None else set(self._clusters["threshold_gpus"])
        open_thresholds = [t for t in O.CLUSTER_THRESHOLDS_GPUS if t not in reached]
        if self._clusters is None or (open_thresholds and len(rows)
                                      and rows["largest_cluster_gpus"].max() >= min(open_thresholds)):
            self._clusters = O.clusters_at_scale(self.agents_table())

    def _make_snapshot(self, months_done: int) -> Snapshot:
        names = tuple(sorted(self._agent_index, key=self._agent_index.get))
        n_agents, n_systems = len(names), len(self._systems)

        def stack(rows: list[np.ndarray], width: int) -> np.ndarray:
            return np.vstack(rows) if rows else np.empty((0, width))

        events = self._events
        cut = np.datetime64(_timestamp(add_months(self.start_month, months_done - 1)))
        if events is not None and len(events) and (self._event_dates > cut).any():  # some logged ahead
            events = events[self._event_dates <= cut]
        chunks = len(self._agent_chunks)
        return Snapshot(
            months_done=months_done, n_months=self.n_months, start_month=self.start_month,
            agents_source=lambda: self.agents_table(chunks), market_rows=_or_empty(self._market),
            events=_or_empty(events),
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
