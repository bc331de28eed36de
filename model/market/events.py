"""The events table: what happened to whom, and when (deliveries, firsts, contracts, training runs, slips)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

import pandas as pd

EVENT_COLUMNS = ["date", "agent", "event", "system", "gpus", "detail"]
FIRSTS = ("first_delivery", "first_online", "first_cluster_at_scale")
# Cluster sizes every run reports firsts at, chosen independently of any story (round sizes analysts quote); each
# scenario adds its own `at_scale_gpus`. An event's detail says which: "10000 GPUs", or "4600 GPUs (at_scale_gpus)".
CLUSTER_SIZES_GPUS = (1_000, 10_000, 100_000)
SCENARIO_THRESHOLD_TAG = "(at_scale_gpus)"


def at_scale_detail(threshold_gpus: int, scenario_threshold_gpus: int) -> str:
    """The detail of a `first_cluster_at_scale` event: the size crossed, tagged when it is the scenario's own."""
    tag = f" {SCENARIO_THRESHOLD_TAG}" if threshold_gpus == scenario_threshold_gpus else ""
    return f"{threshold_gpus} GPUs{tag}"


class MarketEvent(NamedTuple):
    date: str  # first day of the month, "YYYY-MM-01"
    agent: str
    event: str
    system: str
    gpus: int
    detail: str


class EventLog:
    """Every event of a run, in the order they happened."""

    def __init__(self) -> None:
        self.events: list[MarketEvent] = []

    def add(self, date: str, agent: str, event: str, system: str | None, gpus: int, detail: str = "") -> None:
        self.events.append(MarketEvent(date, agent, event, system or "", int(gpus), detail))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.events, columns=EVENT_COLUMNS)


class Milestones:
    """An agent's firsts (first delivery, first online, first cluster at scale, first pre-order of each system):
    each is an event once."""

    def __init__(self, record: Callable[[str, str, int, str], None]):
        self.record = record  # (event, system, gpus, detail): adds the event, dated now
        self.reached: set[tuple[str, str]] = set()
        self.skipped: set[str] = set()  # systems running at the start: no firsts

    def skip(self, systems: Iterable[str]) -> None:
        """Systems already deployed at the start raise no firsts (the race is about generations that arrive)."""
        for k in systems:
            self.reached.update((event, k) for event in FIRSTS)
            self.skipped.add(k)

    def first_at_size(self, system: str, gpus: int, threshold_gpus: int, scenario_threshold_gpus: int) -> bool:
        """Record this agent's first cluster of `system` with at least `threshold_gpus` GPUs (once per size)."""
        key = ("first_cluster_at_scale", f"{system}@{threshold_gpus}")
        if system in self.skipped or key in self.reached:
            return False
        self.reached.add(key)
        self.record("first_cluster_at_scale", system, gpus, at_scale_detail(threshold_gpus, scenario_threshold_gpus))
        return True

    def reached_size(self, system: str, threshold_gpus: int) -> bool:
        return system in self.skipped or ("first_cluster_at_scale", f"{system}@{threshold_gpus}") in self.reached

    def first(self, event: str, system: str, gpus: int, detail: str = "") -> bool:
        """Record the event if it is this agent's first of its kind for the system; whether it was."""
        if (event, system) in self.reached:
            return False
        self.reached.add((event, system))
        self.record(event, system, gpus, detail)
        return True
