"""What a buyer orders from NVIDIA: each system on offer is scored by what it delivers per dollar (the capability
table's value per GPU for the buyer's mix of training and serving), discounted by the wait for it; the cash on
hand is split across systems by score^sharpness, each order bounded by the power free when it would arrive."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from model.capability.table import CapabilityTable
from model.hardware.systems import systems
from model.market.money import Treasury
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


class Procurement:
    """The buyer's order book at NVIDIA, from its side: what it ordered, pre-ordered and still has on order."""

    def __init__(self, buyer: Consignee, supplier: Supplier, capability: CapabilityTable, treasury: Treasury,
                 terms: ProcurementTerms, system_keys: tuple[str, ...],
                 spare_mw: Callable[[str, int], float], first: Callable[[str, str, int, str], bool],
                 month_of: Callable[[int], str]):
        self.buyer, self.supplier, self.capability, self.treasury = buyer, supplier, capability, treasury
        self.terms = terms
        self.system_keys = system_keys
        self.spare_mw = spare_mw  # facility MW free when an order of a system placed in a month would arrive
        self.first = first  # (event, system, gpus, detail) -> whether this was the buyer's first such event
        self.month_of = month_of  # model month -> "YYYY-MM..." (the software era and the jobs public then)
        self.ordered = dict.fromkeys(system_keys, 0)  # GPUs
        self.preordered = dict.fromkeys(system_keys, 0)  # GPUs ordered before the system shipped
        self.on_order_units = dict.fromkeys(system_keys, 0)  # systems ordered and not yet shipped
        self._value: dict[tuple[str, int, int], float] = {}

    def value_per_gpu(self, k: str, t: int, arrival_month: int | None = None) -> float:
        """What one GPU of system k delivers, in H100s, on the buyer's mix of training and serving, as the
        buyer's performance model sees it in month t: the workloads public then, on the software of the month
        the GPUs would arrive (default t; software keeps improving while an order waits)."""
        arrival = t if arrival_month is None else arrival_month
        if (k, t, arrival) not in self._value:
            self._value[(k, t, arrival)] = self.capability.value_per_gpu(
                k, self.terms.training_weight, self.month_of(t), self.month_of(arrival))
        return self._value[(k, t, arrival)]

    def score(self, k: str, t: int) -> float:
        """H100-value per dollar of system k ordered now, discounted by the months until it would arrive."""
        sup = self.supplier
        wait = sup.expected_wait_months(k, t)
        value_usd = self.value_per_gpu(k, t, t + round(wait)) / sup.price_usd(k, t)
        return value_usd * systems()[k].gpus_per_system * math.exp(-wait / self.terms.wait_tau_months)

    def procure(self, t: int) -> None:
        """Spend the cash on hand across the systems on offer, in proportion to score^sharpness (a near-argmax that
        still spreads orders when systems are close), each order bounded by the power free when it would arrive.
        Systems not yet shipping can be pre-ordered within the buyer's lookahead."""
        cash = self.treasury.cash_usd()
        if cash <= 0:
            return
        sup, terms = self.supplier, self.terms
        scores = {k: self.score(k, t) for k in self.system_keys
                  if sup.orderable(k, t, terms.preorder_lookahead_months)}
        if not scores:
            return
        top = max(scores.values())
        weights = {k: (v / top) ** terms.choice_sharpness for k, v in scores.items() if v > 0}
        weights = {k: w for k, w in weights.items() if w >= terms.choice_min_weight}
        total = sum(weights.values())
        best_now = max((k for k in weights if sup.shipping(k, t)), key=weights.get, default=None)
        for k, w in sorted(weights.items(), key=lambda kw: -kw[1]):
            s = systems()[k]
            price = sup.price_usd(k, t)
            units = int(cash * w / total // price)
            spare_mw = self.spare_mw(k, t)
            if spare_mw != math.inf:
                units = min(units, int(spare_mw * 1000.0 // (s.system_power_kw * terms.pue)))
            if units <= 0:
                continue
            self.order(k, units, price)
            if not sup.shipping(k, t):
                self.preordered[k] += units * s.gpus_per_system
                if best_now and w > weights[best_now]:
                    self.first("preorder", k, units * s.gpus_per_system,
                               f"pre-orders {k} ahead of {best_now}, which ships now")

    def order(self, k: str, units: int, unit_price_usd: float) -> None:
        self.supplier.place_order(self.buyer, k, units, unit_price_usd)
        self.treasury.commit(units * unit_price_usd)
        self.on_order_units[k] += units
        self.ordered[k] += units * systems()[k].gpus_per_system

    def shipped(self, k: str, units: int) -> None:
        self.on_order_units[k] -= units

    def on_order_kw(self) -> float:
        """Facility kW of the systems on order (not yet shipped)."""
        catalog = systems()
        on_order = 0.0
        for k, units in self.on_order_units.items():
            if units:
                on_order += units * catalog[k].system_power_kw * self.terms.pue
        return on_order
