"""What a buyer orders from the vendors: each system on offer to it (those sold to others, and its own vendor's if it
owns one, as Google its TPUs) is scored by what it delivers per dollar of full cost (the capability table's value
per GPU on the buyer's fixed mix of training and serving, times the scenario's software discount where a vendor's
software is known to lag), discounted by the wait until it could run (the vendor's queue, and a fit-out when the
system needs liquid-cooled space the buyer does not have); the cash on hand is split across systems by
score^sharpness, each order bounded by the power (of its cooling) free when it would arrive, and money one system
cannot take goes to the next.

What a system costs the buyer is its full cost of ownership, not its price alone: the price, the facility its power
needs (critical IT MW x the cost to build a MW) and the energy it draws over its service life. A cheap chip that
needs more power per unit of work needs more data centre and more electricity, which its price does not show."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from model.capability.table import CapabilityTable
from model.hardware.systems import systems
from model.market.money import Treasury
from model.market.pricing import HOURS_PER_YEAR
from model.market.supplier import Consignee, Supplier


@dataclass(frozen=True)
class ProcurementTerms:
    """How a kind of buyer chooses (scenario values)."""

    training_weight: float  # share of training (vs serving) in the buyer's use
    wait_tau_months: float  # patience: a month's wait costs 1/tau of the value
    preorder_lookahead_months: int  # how far ahead of first shipment it pre-orders
    choice_sharpness: float  # orders split by score^sharpness
    choice_min_weight: float  # systems below this weight (after ^sharpness) get nothing
    pue: float
    software_ahead_months: int  # a buyer counts on software improving until arrival, at most this far ahead
    facility_usd_per_mw: float  # what a MW of critical IT load costs to build
    usd_per_kwh: float  # the price of the energy its systems draw
    service_life_years: float  # how long the buyer runs a system (energy is paid over it)


def ownership_cost_usd(price_usd: float, system_power_kw: float, terms: ProcurementTerms) -> float:
    """A system's full cost to its owner: its price, the facility for its power (critical IT MW x the cost to
    build a MW) and the energy it draws at full power over its service life (facility power, PUE included)."""
    facility = system_power_kw / 1000.0 * terms.facility_usd_per_mw
    energy = system_power_kw * terms.pue * HOURS_PER_YEAR * terms.service_life_years * terms.usd_per_kwh
    return price_usd + facility + energy


class Procurement:
    """The buyer's order book at the vendors, from its side: what it ordered, pre-ordered and still has on order."""

    def __init__(self, buyer: Consignee, supplier: Supplier | Callable[[str], Supplier], capability: CapabilityTable,
                 treasury: Treasury,
                 terms: ProcurementTerms, system_keys: tuple[str, ...],
                 spare_mw: Callable[[str, int], float], first: Callable[[str, str, int, str], bool],
                 month_of: Callable[[int], str],
                 ready_wait: Callable[[str, int, float], float] = lambda k, t, wait: wait,
                 cluster_gpus: Callable[[str], int | None] = lambda k: None,
                 candidates: tuple[str, ...] | None = None,
                 discount: Callable[[str, int], float] = lambda k, t: 1.0):
        """`supplier`: one vendor, or the vendor of each system; `candidates`: the systems the buyer may order
        (default: every one of `system_keys` its vendor lets it order); `discount`: (system, month) -> the share of
        its modelled performance the buyer counts on (software maturity)."""
        self.buyer, self.capability, self.treasury = buyer, capability, treasury
        self.supplier_of: Callable[[str], Supplier] = supplier if callable(supplier) else (lambda k: supplier)
        self.terms = terms
        self.system_keys = system_keys
        self.candidates = tuple(k for k in (candidates if candidates is not None else system_keys)
                                if self.supplier_of(k).may_order(buyer.name, k))
        self.discount = discount
        self.spare_mw = spare_mw  # facility MW free when an order of a system placed in a month would arrive
        self.first = first  # (event, system, gpus, detail) -> whether this was the buyer's first such event
        self.month_of = month_of  # model month -> "YYYY-MM..." (the software era and the jobs public then)
        self.ready_wait = ready_wait  # (system, month, NVIDIA's wait) -> months until it could run (site readiness)
        self.cluster_gpus = cluster_gpus  # system -> GPUs of the buyer's cluster its GPUs would join (None: none)
        self.ordered = dict.fromkeys(system_keys, 0)  # GPUs
        self.preordered = dict.fromkeys(system_keys, 0)  # GPUs ordered before the system shipped
        self.on_order_units = dict.fromkeys(system_keys, 0)  # systems ordered and not yet shipped
        self._value: dict[tuple[str, int, int], float] = {}
        self._scores: dict[tuple, float] = {}  # a month's scores (asked again while switching and ordering)
        self.liquid_share = 0.0  # share of the last month's choice that needs liquid cooling, sites assumed ready
        self.usd_per_facility_mw: float | None = None  # what the last month's choice costs per facility MW (power)
        self.is_liquid: dict[str, bool] = dict.fromkeys(system_keys, False)  # set by the buyer

    def value_per_gpu(self, k: str, t: int, arrival_month: int | None = None) -> float:
        """What one GPU of system k delivers, in H100s, on the buyer's mix of training and serving, as the
        buyer's performance model sees it in month t: the workloads public then, on the software of the month
        the GPUs would arrive (default t; software keeps improving while an order waits), training at the scale
        of the buyer's cluster the GPUs would join (what it already runs of the same architecture)."""
        arrival = t if arrival_month is None else arrival_month
        key = (k, t, arrival, self.cluster_gpus(k))
        if key not in self._value:
            if len(self._value) > 4096:
                self._value.clear()
            self._value[key] = self.discount(k, arrival) * self.capability.value_per_gpu(
                k, self.terms.training_weight, self.month_of(t), self.month_of(arrival), cluster_gpus=key[3])
        return self._value[key]

    def score(self, k: str, t: int, sites_ready: bool = False) -> float:
        """H100-value per dollar of full cost of ownership of system k ordered now (`cost_per_gpu_usd`), discounted
        by the months until it could run (the vendor's wait, and the site's readiness unless `sites_ready`)."""
        sup = self.supplier_of(k)
        key = (k, t, sites_ready, sup.backlog_units(k), tuple(self.on_order_units.values()))
        if key in self._scores:
            return self._scores[key]
        if len(self._scores) > 1024:
            self._scores.clear()
        wait = sup.expected_wait_months(k, t)
        if not sites_ready:
            wait = self.ready_wait(k, t, wait)
        software_month = t + min(round(wait), self.terms.software_ahead_months)
        value_usd = self.value_per_gpu(k, t, software_month) / self.cost_per_gpu_usd(k, t)
        score = value_usd * math.exp(-wait / self.terms.wait_tau_months)
        self._scores[key] = score
        return score

    def price_usd(self, k: str, t: int) -> float:
        """What this buyer pays per system k ordered now (an owner pays its own chips' cost: `Supplier.price_usd`)."""
        return self.supplier_of(k).price_usd(k, t, self.buyer.name)

    def cost_per_gpu_usd(self, k: str, t: int) -> float:
        """What one GPU of system k ordered now costs the buyer to own (`ownership_cost_usd`)."""
        s = systems()[k]
        price = self.price_usd(k, t)
        return ownership_cost_usd(price, s.system_power_kw, self.terms) / s.gpus_per_system

    def _weights(self, scores: dict[str, float]) -> dict[str, float]:
        top = max(scores.values())
        if top <= 0:
            return {}
        weights = {k: (v / top) ** self.terms.choice_sharpness for k, v in scores.items() if v > 0}
        return {k: w for k, w in weights.items() if w >= self.terms.choice_min_weight}

    def procure(self, t: int) -> None:
        """Spend the cash on hand across the systems on offer, in proportion to score^sharpness (a near-argmax that
        still spreads orders when systems are close), each order bounded by the power free when it would arrive.
        Systems not yet shipping can be pre-ordered within the buyer's lookahead."""
        self.switch_orders(t)
        cash = self.treasury.cash_usd()
        if cash <= 0:
            return
        terms = self.terms
        offered = self.offered(t)
        if not offered:
            return
        cash = self.fill_reservation(t, offered, cash)
        if cash <= 0:
            return
        wanted = self._weights({k: self.score(k, t, sites_ready=True) for k in offered})
        if wanted:  # what the buyer would buy if its sites were ready: it fits out space for that share
            self.liquid_share = sum(w for k, w in wanted.items() if self.is_liquid[k]) / sum(wanted.values())
            # and builds power for it: money is split by weight, so a dollar buys the weighted MW per dollar
            mw_per_usd = sum(w * systems()[k].system_power_kw * terms.pue / 1000.0 / self.price_usd(k, t)
                             for k, w in wanted.items()) / sum(wanted.values())
            self.usd_per_facility_mw = 1.0 / mw_per_usd
        weights = self._weights({k: self.score(k, t) for k in offered})
        total = sum(weights.values())
        best_now = max((k for k in weights if self.supplier_of(k).shipping(k, t)), key=weights.get, default=None)
        for k, w in sorted(weights.items(), key=lambda kw: -kw[1]):  # what one cannot take flows to the next
            s = systems()[k]
            sup = self.supplier_of(k)
            price = self.price_usd(k, t)
            units = int(cash * w / total // price)
            total -= w
            spare_mw = self.spare_mw(k, t)
            if spare_mw != math.inf:
                units = min(units, int(spare_mw * 1000.0 // (s.system_power_kw * terms.pue)))
            if units <= 0:
                continue
            self.order(k, units, price)
            cash -= units * price
            if not sup.shipping(k, t):
                self.preordered[k] += units * s.gpus_per_system
                if best_now and w > weights[best_now]:
                    self.first("preorder", k, units * s.gpus_per_system,
                               f"pre-orders {k} ahead of {best_now}, which ships now")

    def fill_reservation(self, t: int, offered: list[str], cash: float) -> float:
        """An owner of custom chips (Google's TPUs, AWS's Trainium) first keeps the CoWoS its vendor reserved for
        it busy: its vendor's long-term agreements are booked ahead and paid for, so the chip programme's volume is
        planned, not re-chosen against NVIDIA each month. It orders its own chips that ship now, best value per
        dollar first, until the open orders cover a month of the reservation (each system up to its ramp), within
        its cash and the power free when they arrive; returns the cash left."""
        catalog = systems()
        room_gpus: dict[str, float] = {}  # own systems shipping now whose open orders do not cover a month's output
        for k in offered:
            sup = self.supplier_of(k)
            if sup.owner == self.buyer.name and sup.p.owners_fill_reservation and sup.shipping(k, t):
                room = (sup.ramp_fraction(k, t) * sup.capacity_gpus(k, t)
                        - sup.backlog_units(k) * catalog[k].gpus_per_system)
                if room > 0:
                    room_gpus[k] = room
        for sup in dict.fromkeys(self.supplier_of(k) for k in room_gpus):
            per_wafer = sup.p.gpus_per_wafer
            t_cap = min(max(t, 0), len(sup.wafers_per_month) - 1)
            free_wafers = sup.wafers_per_month[t_cap] - sum(
                sup.backlog_units(k) * catalog[k].gpus_per_system / per_wafer[k] for k in sup.keys)
            # best value per dollar first (not `score`: ordering changes its cache key, and waits barely differ
            # between one owner's chips sharing one reservation)
            mine = sorted((k for k in room_gpus if self.supplier_of(k) is sup),
                          key=lambda k: -self.value_per_gpu(k, t) / self.cost_per_gpu_usd(k, t))
            for k in mine:
                if free_wafers <= 0 or cash <= 0:
                    break
                s = catalog[k]
                price = self.price_usd(k, t)
                units = int(min(room_gpus[k], free_wafers * per_wafer[k]) // s.gpus_per_system)
                units = min(units, int(cash // price))
                spare_mw = self.spare_mw(k, t)
                if spare_mw != math.inf:
                    units = min(units, int(spare_mw * 1000.0 // (s.system_power_kw * self.terms.pue)))
                if units <= 0:
                    continue
                self.order(k, units, price)
                cash -= units * price
                free_wafers -= units * s.gpus_per_system / per_wafer[k]
        return cash

    def switch_orders(self, t: int) -> None:
        """Move open orders the buyer would no longer place at all (weight under `choice_min_weight` against the
        best system of the same vendor on offer) to the best system of that vendor on offer that fits the same sites
        (the same cooling: a GB300 rack goes where a GB200 rack was planned). Money committed stays committed; the
        vendor's queue is re-entered."""
        terms = self.terms
        open_orders = [k for k, u in self.on_order_units.items() if u > 0]
        if not open_orders:
            return
        vendors = {self.supplier_of(k) for k in open_orders}  # an order moves within one vendor's systems
        offered = [j for j in self.offered(t) if self.supplier_of(j) in vendors]
        scores = {k: self.score(k, t) for k in dict.fromkeys([*offered, *open_orders])}
        for k in open_orders:
            sup = self.supplier_of(k)
            family = [j for j in offered if self.is_liquid[j] == self.is_liquid[k] and scores[j] > 0
                      and self.supplier_of(j) is sup]
            best = max(family, key=scores.get, default=None)
            if best is None or best == k or (scores[k] / scores[best]) ** terms.choice_sharpness >= \
                    terms.choice_min_weight:
                continue
            price = self.price_usd(best, t)
            if self.value_per_gpu(best, t) / self.cost_per_gpu_usd(best, t) <= \
                    self.value_per_gpu(k, t) / self.cost_per_gpu_usd(k, t):
                continue  # only to a system worth more per dollar owned (never back to an older one)
            usd = sup.withdraw(self.buyer, k, self.on_order_units[k])
            if usd <= 0:
                continue
            gone = self.on_order_units[k]
            self.on_order_units[k] = 0
            self.ordered[k] -= gone * systems()[k].gpus_per_system
            self.preordered[k] -= min(self.preordered[k], gone * systems()[k].gpus_per_system)
            self.treasury.commit(-usd)
            units = int(usd // price)
            if units > 0:
                self.order(best, units, price)
                if not sup.shipping(best, t):
                    self.preordered[best] += units * systems()[best].gpus_per_system
                self.first("order_switched", best, units * systems()[best].gpus_per_system,
                           f"moves {gone} {k} on order to {units} {best}")

    def offered(self, t: int) -> list[str]:
        """The buyer's candidate systems it can order in month t (shipping, or within its pre-order lookahead)."""
        lookahead = self.terms.preorder_lookahead_months
        return [k for k in self.candidates if self.supplier_of(k).orderable(k, t, lookahead)]

    def order(self, k: str, units: int, unit_price_usd: float) -> None:
        self.supplier_of(k).place_order(self.buyer, k, units, unit_price_usd)
        self.treasury.commit(units * unit_price_usd)
        self.on_order_units[k] += units
        self.ordered[k] += units * systems()[k].gpus_per_system

    def shipped(self, k: str, units: int) -> None:
        self.on_order_units[k] -= units

    def cancelled(self, k: str, units: int) -> None:
        """Units on order that will never ship: they leave the order book as if never ordered."""
        self.on_order_units[k] -= units
        gpus = units * systems()[k].gpus_per_system
        self.ordered[k] -= gpus
        self.preordered[k] -= min(self.preordered[k], gpus)

    def on_order_kw(self) -> float:
        """Facility kW of the systems on order (not yet shipped)."""
        catalog = systems()
        on_order = 0.0
        for k, units in self.on_order_units.items():
            if units:
                on_order += units * catalog[k].system_power_kw * self.terms.pue
        return on_order
