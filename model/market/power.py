"""A buyer's power under construction: when to start building, how much, and when it comes online.

A buyer builds when the power it will need by the time a build started now is surely done (lead time, worst delay
and a buffer) exceeds what it has or is building, within the grid connections it can get per year. Builds arrive
after the lead time plus a random delay; finished power grows the buyer's campuses (the fleet's sites).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from model.scenario.schema import by_year


class Build(NamedTuple):
    """Power under construction: `mw` comes online in `ready_month` (lead time plus a drawn delay)."""

    mw: float
    started_month: int
    ready_month: int


@dataclass
class PowerPlan:
    """Construction pipeline and yearly build allowances of one buyer."""

    lead_months: int
    delay_max_months: int
    buffer_months: int
    min_build_mw: float
    add_mw_per_year: float | dict[str, float]  # grid connections the buyer can start per year
    pipeline: list[Build] = field(default_factory=list)
    started_mw_by_year: dict[int, float] = field(default_factory=dict)
    contract_allowance_mw_by_year: dict[int, float] = field(default_factory=dict)

    def start_under_construction(self, mw: float, lead_months: int) -> None:
        """Power under construction at the start arrives evenly over one lead time."""
        for month in range(lead_months):
            self.pipeline.append(Build(mw / lead_months, -1, month))

    def finished(self, t: int) -> list[Build]:
        """Builds ready by month t, taken out of the pipeline."""
        done = [b for b in self.pipeline if b.ready_month <= t]
        self.pipeline = [b for b in self.pipeline if b.ready_month > t]
        return done

    def building_mw(self) -> float:
        return sum(b.mw for b in self.pipeline)

    def ready_by_mw(self, month: float) -> float:
        """MW of builds that will be ready by `month`."""
        return sum(b.mw for b in self.pipeline if b.ready_month <= month)

    def horizon_months(self) -> int:
        """How far ahead a build started now is surely done (lead, worst delay, buffer)."""
        return self.lead_months + self.delay_max_months + self.buffer_months

    def allowance_mw(self, year: int) -> float:
        """MW of construction the buyer can start in `year`: a number, or a table by year (the last year's value
        carries forward), plus grid connections funded by contracts."""
        extra = self.contract_allowance_mw_by_year.get(year, 0.0)
        return by_year(self.add_mw_per_year, year) + extra

    def allow_for_contract(self, mw: float, years: range) -> None:
        """Grid connections for a contract delivered on schedule, spread over the years until it starts."""
        for year in years:
            self.contract_allowance_mw_by_year[year] = self.contract_allowance_mw_by_year.get(year, 0.0) + mw / len(
                years)

    def start(self, t: int, year: int, gap_mw: float, rng: np.random.Generator) -> float:
        """Start building the gap between need and what is online or building, within this year's allowance, with a
        delay drawn from `rng`; returns the MW started (0 when less than the smallest build)."""
        allowance = self.allowance_mw(year) - self.started_mw_by_year.get(year, 0.0)
        mw = min(gap_mw, allowance)
        if mw < self.min_build_mw:
            return 0.0
        delay = int(rng.integers(0, self.delay_max_months + 1))
        self.pipeline.append(Build(mw, t, t + self.lead_months + delay))
        self.started_mw_by_year[year] = self.started_mw_by_year.get(year, 0.0) + mw
        return mw
