"""A lab's frontier training runs: the next run follows the frontier trend or, when that does not fit in the longest
run the lab will start on the best cluster it can reach, the largest run that does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from model.scenario.schema import Frontier

DAYS_PER_MONTH = 30.4


class RunStart(NamedTuple):
    flop: float
    days: float


@dataclass
class FrontierRuns:
    """One lab's runs, one at a time. `days(system, gpus, flop)` is the capability table's frontier lookup."""

    terms: Frontier
    flop_factor: float  # this lab's frontier relative to the trend
    start_after_2024_01_months: int  # the scenario's start, in months after January 2024 (the trend's anchor)
    days: Callable[[str, int, float], float | None]
    run_end_month: int | None = None
    last_run_flop: float = 0.0

    @property
    def running(self) -> bool:
        return self.run_end_month is not None

    def finish_due(self, t: int) -> float | None:
        """The FLOP of a run that ends by month t (it is then over), else None."""
        if self.run_end_month is not None and t >= self.run_end_month:
            self.run_end_month = None
            return self.last_run_flop
        return None

    def trend_flop(self, t: int) -> float:
        """The frontier trend in month t (`flop_2024` x this lab's factor, growing `growth_per_year`)."""
        terms = self.terms
        months_since_2024 = t + self.start_after_2024_01_months
        return terms.flop_2024 * self.flop_factor * terms.growth_per_year ** (months_since_2024 / 12)

    def start(self, t: int, system: str, gpus: int) -> RunStart | None:
        """Start the next run on a cluster: the trend, or the largest run that fits within `max_run_days`; none when
        it would not be `min_run_growth` times the last one."""
        terms = self.terms
        limit = terms.max_run_days
        flop = self.trend_flop(t)
        days = self.days(system, gpus, flop)
        if days is not None and days > limit:  # the trend does not fit: the largest run that does
            flop *= limit / days
            days = self.days(system, gpus, flop)
        # (5% over the limit: within the interpolation between the run sizes the performance model is asked on)
        if days is None or days > limit * 1.05 or flop < terms.min_run_growth * self.last_run_flop:
            return None
        self.last_run_flop = flop
        self.run_end_month = t + max(1, round(days / DAYS_PER_MONTH))
        return RunStart(flop, days)
