"""The events table: what happened to whom, and when (deliveries, firsts, contracts, training runs, slips)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

import pandas as pd

EVENT_COLUMNS = ["date", "agent", "event", "system", "gpus", "detail"]
FIRSTS = ("first_delivery", "first_online", "first_cluster_at_scale")


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

    def skip(self, systems: Iterable[str]) -> None:
        """Systems already deployed at the start raise no firsts (the race is about generations that arrive)."""
        for k in systems:
            self.reached.update((event, k) for event in FIRSTS)

    def first(self, event: str, system: str, gpus: int, detail: str = "") -> bool:
        """Record the event if it is this agent's first of its kind for the system; whether it was."""
        if (event, system) in self.reached:
            return False
        self.reached.add((event, system))
        self.record(event, system, gpus, detail)
        return True
