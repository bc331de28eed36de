"""A buyer's power under construction: when to start building, how much, and when it comes online.

A buyer builds when the power it will need by the time a build started now is surely done (lead time, worst delay
and a buffer) exceeds what it has or is building, within the grid connections it can get per year. Those follow the
buyer's sourced figures, then grow as the sourced outlook for data-centre power grows (`PowerOutlook`). Builds
arrive after the lead time plus a random delay; finished power grows the buyer's campuses (the fleet's sites) phase
by phase: a campus can take one phase a year, of the size the outlook allows that year.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from model.scenario.schema import PowerOutlook as OutlookTerms
from model.scenario.schema import by_year


class PowerOutlook:
    """The sourced outlook for data-centre power (GW by year, geometric between anchors and beyond the last two):
    how fast grid connections and on-site generation grow, and how large a phase one campus can add in a year."""

    def __init__(self, terms: OutlookTerms):
        self.terms = terms
        years = sorted(int(y) for y in terms.datacenter_gw)
        self._years = np.array(years, dtype=float)
        self._log_gw = np.log([terms.datacenter_gw[str(y)] for y in years])
        self._gw: dict[int, float] = {}  # by year: asked every month by every buyer (per instance, dies with it)

    def gw(self, year: int) -> float:
        if year not in self._gw:
            self._gw[year] = _geometric(self._years, self._log_gw, year)
        return self._gw[year]

    def additions_gw(self, year: int) -> float:
        """Data-centre power added during `year`."""
        return max(self.gw(year) - self.gw(year - 1), 1e-9)

    def growth_of_additions(self, year: int, base_year: int) -> float:
        """How many times the additions of `base_year` can be added in `year`."""
        return self.additions_gw(year) / self.additions_gw(base_year)

    def campus_phase_mw(self, year: int) -> float:
        """The power one campus can add in a year: the sourced phase sizes (geometric between them), after the last
        one scaled as the outlook grows."""
        table = self.terms.campus_phase_mw
        years = sorted(int(y) for y in table)
        if year >= years[-1]:
            return table[str(years[-1])] * self.gw(year) / self.gw(years[-1])
        return _geometric(np.array(years, dtype=float), np.log([table[str(y)] for y in years]), year)


def _geometric(years: np.ndarray, log_values: np.ndarray, year: float) -> float:
    """A value by year, geometric between anchors and, beyond them, along the nearest two (flat with one)."""
    if len(years) == 1:
        return float(np.exp(log_values[0]))
    i = int(np.clip(np.searchsorted(years, year) - 1, 0, len(years) - 2))
    slope = (log_values[i + 1] - log_values[i]) / (years[i + 1] - years[i])
    return float(np.exp(log_values[i] + slope * (year - years[i])))


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
    outlook: PowerOutlook | None = None  # after the buyer's last sourced year, allowances grow with it
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
        """MW of construction the buyer can start in `year`: a number, or a table by year; after the last year
        given, that year's value grows as the outlook's yearly additions do (a flat number: from the outlook's
        first year). Plus grid connections funded by contracts."""
        extra = self.contract_allowance_mw_by_year.get(year, 0.0)
        base = by_year(self.add_mw_per_year, year)
        if self.outlook is not None:
            table = self.add_mw_per_year
            last = max(int(y) for y in table) if isinstance(table, dict) and table else \
                min(int(y) for y in self.outlook.terms.datacenter_gw)
            if year > last:
                base *= self.outlook.growth_of_additions(year, last)
        return base + extra

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
