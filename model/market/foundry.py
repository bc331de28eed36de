"""The shared inputs every accelerator vendor draws on: TSMC's CoWoS packaging (wafers a month) and HBM (TB a month),
and how a month's capacity is split between vendors.

Mechanism (documented because it decides who ships when capacity is short): each vendor has a reserved share of
both (long-term agreements booked a year ahead: TSMC's CoWoS allocation and the memory makers' HBM contracts, from
the public demand-share reports cited in the scenario, by calendar year, moving month by month so that each year
averages its sourced figure: `shares_by_month`); the part no modelled vendor reserves is
used by chips outside the model (other custom ASICs, FPGAs). Each month a vendor gets what it needs up to its
reservation; of what a vendor reserved and cannot use, the scenario's `unused_reservation_transfer_share` goes to
the vendors short of theirs, in proportion to what they lack (capacity follows demand and prepayment). So a vendor
that orders more than it reserved (a TPU surge) can take slack others leave, and a shortage of either input cuts
every vendor's reservation.

Why the transfer is a share, not all of it: the reserved shares are the public reports of what each vendor actually
took of the year's CoWoS and HBM, and a month's unused packaging or memory is not another vendor's product that
month: CoWoS comes in kinds (CoWoS-S for Hopper and most ASICs, CoWoS-L for Blackwell), HBM is qualified for one
product (stack height, speed), and wafers are started months before they are packaged. With all of it transferable,
each vendor's modelled share would drift from the sourced one wherever the model's demand for a vendor is off (the
model's TPU and Trainium buyers buy too few chips, README, Known limits, so NVIDIA took up to 40% more than its
sourced share in late 2025): the inputs would not hold. The baseline keeps them (share 0, an assumption;
`uncertainty.toml` sweeps 0-1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from model.market.calendar import month_index, year_of
from model.scenario.schema import Supplier as SupplierParams
from model.scenario.schema import by_year

RESOURCES = ("cowos_wafers", "hbm_tb")


class Need(NamedTuple):
    """What a vendor needs this month to make its wanted output: CoWoS wafers and HBM TB."""

    cowos_wafers: float
    hbm_tb: float


def anchored_series(points: Mapping[str, float], start: str, n_months: int, growth_multiplier: float) -> np.ndarray:
    """Monthly values interpolated between dated anchors; growth beyond the first anchor scaled by a multiplier."""
    xs = [month_index(d, start) for d in points]
    values = np.asarray(list(points.values()), dtype=float)
    sourced = np.interp(np.arange(n_months), xs, values)
    return values[0] + (sourced - values[0]) * growth_multiplier


def shares_by_month(table: Mapping[str, float], start: str, n_months: int) -> np.ndarray:
    """A vendor's reserved share month by month from its shares by calendar year (`by_year`): the share moves
    linearly between values at the years' middles rather than stepping each January (a year's share is an average
    over a year in which allocations shift month by month), and those middle values are solved so that each year's
    months average to its sourced share (interpolating the sourced shares themselves would give a year the mean
    (previous + 6 x its own + next) / 8 instead); flat before the first middle and after the last."""
    first, last = year_of(start, 0), year_of(start, n_months - 1)
    years = range(first - 1, last + 2)
    middles = [month_index(f"{y}-07", start) for y in years]  # 1 July: between the year's sixth and seventh months
    months = np.arange(n_months) + 0.5
    # how much each year's middle value weighs in each month (the interpolation is linear in the values); the years
    # around the simulated ones take their neighbour's value, so the share is flat beyond the middles
    weights = np.stack([np.interp(months, middles, unit) for unit in np.eye(len(middles))], axis=1)
    weights[:, 1] += weights[:, 0]
    weights[:, -2] += weights[:, -1]
    weights = weights[:, 1:-1]
    year_of_month = np.array([year_of(start, m) for m in range(n_months)])
    inside = range(first, last + 1)
    yearly_means = np.stack([weights[year_of_month == y].mean(axis=0) for y in inside])
    sourced = np.array([by_year(dict(table), y) for y in inside])
    return np.clip(weights @ np.linalg.solve(yearly_means, sourced), 0.0, 1.0)


def lagged(series: np.ndarray, months: int) -> np.ndarray:
    """`series` shifted `months` later: month t takes month t - months's value (the first value before the start)."""
    if months <= 0:
        return series
    return np.concatenate([np.full(min(months, len(series)), series[0]), series[:-months]])[:len(series)]


def water_fill(amount: float, lacking: np.ndarray) -> np.ndarray:
    """Split `amount` in proportion to what each lacks, none given more than it lacks (the excess goes to the
    others)."""
    given = np.zeros_like(lacking)
    left = amount
    open_ = lacking > 1e-12
    while left > 1e-9 and open_.any():
        share = np.where(open_, lacking, 0.0)
        given = np.minimum(given + left * share / share.sum(), lacking)
        left = amount - given.sum()
        open_ = given < lacking - 1e-9
    return given


class Foundry:
    """Total CoWoS and HBM capacity by month (the scenario's sourced anchors) and the vendors' reserved shares."""

    def __init__(self, params: SupplierParams, vendors: tuple[str, ...], start: str, horizon_months: int):
        growth = params.supply_growth_multiplier
        self.vendors = vendors
        self.transfer_share = params.unused_reservation_transfer_share
        # what ships in month t was packaged `packaging_to_shipment_months` earlier: the sourced series are dated by
        # packaging, so shipments follow them by the lag (flat before the first anchor, as the series is)
        lag = params.packaging_to_shipment_months
        self.total = {"cowos_wafers": lagged(anchored_series(params.cowos_wafers_per_month, start, horizon_months,
                                                             growth), lag),
                      "hbm_tb": lagged(anchored_series(params.hbm_tb_per_month, start, horizon_months, growth), lag)}
        tables = {"cowos_wafers": params.reserved_cowos_share, "hbm_tb": params.reserved_hbm_share}
        self.share = {r: {v: shares_by_month(tables[r].get(v, {}), start, horizon_months) for v in vendors}
                      for r in RESOURCES}
        self.used = {r: np.zeros(horizon_months) for r in RESOURCES}  # what the vendors were given, by month

    def months(self) -> int:
        return len(self.total["cowos_wafers"])

    def reserved(self, vendor: str, resource: str) -> np.ndarray:
        """A vendor's reserved capacity month by month (what it and its buyers plan on)."""
        return self.total[resource] * self.share[resource][vendor]

    def allocate(self, t: int, needs: Mapping[str, Need]) -> dict[str, Need]:
        """Month t's capacity given to each vendor: its need up to its reservation, then the transferable share of
        the reservations others leave unused, in proportion to what each still lacks. A vendor not in `needs` needs
        nothing this month."""
        t = min(max(t, 0), self.months() - 1)
        names = list(dict.fromkeys([*self.vendors, *needs]))
        given: dict[str, list[float]] = {v: [0.0, 0.0] for v in names}
        for i, r in enumerate(RESOURCES):
            want = np.array([needs[v][i] if v in needs else 0.0 for v in names])
            reserved = np.array([self.total[r][t] * self.share[r][v][t] for v in names])
            first = np.minimum(want, reserved)
            extra = water_fill(self.transfer_share * float((reserved - first).sum()), want - first)
            for j, v in enumerate(names):
                given[v][i] = float(first[j] + extra[j])
            self.used[r][t] = float((first + extra).sum())
        return {v: Need(*given[v]) for v in needs}
