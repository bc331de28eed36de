"""An accelerator vendor as an agent (NVIDIA, AMD, Google's TPUs made with Broadcom, AWS's Trainium): a roadmap
that can slip (the catalog's dates), a production ramp, its part of the CoWoS and HBM capacity all vendors share
(`model.market.foundry`), an order book allocated pro rata, launch-premium pricing and revenue booked on shipment.
Every vendor follows the same rules; what differs is data: its systems, its reserved capacity, who may order (a chip
not sold to others has one buyer, its owner) and, for NVIDIA, its share of a rack's price, the networking sold with
it and its public strategic ties.

Allocation policy (documented because it decides who gets scarce early units): each month a system's output is
split across its open orders in proportion to (units still outstanding)^`order_size_exponent` — above 1, NVIDIA
favours its largest customers when output is scarce — one open order per buyer and system (new orders add to it),
whole systems by largest remainder, ties broken by the model's seeded generator. While a system ramps (before its
volume date) NVIDIA also weighs who asked first and who it is tied to (the scenario's `[allocation]`): an order's
weight grows with the months it has waited (pre-orders placed early are served early), and a buyer with a public
strategic relationship with NVIDIA (an equity stake, an investment, a capacity agreement) counts more. Capacity is
split across systems in proportion to the wafers (and HBM) their backlogs need, each system capped by its ramp.
Revenue is the vendor's part of what buyers pay (for NVIDIA its share of a rack's price, plus networking sold with
it; for the others the price paid).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from model.hardware.systems import System, systems
from model.market.calendar import date_of, month_index
from model.market.foundry import Foundry, Need
from model.market.pricing import system_price_usd
from model.scenario.mesa_core import Agent
from model.scenario.schema import Allocation
from model.scenario.schema import Supplier as SupplierParams

PLAN_AHEAD_MONTHS = 24  # a vendor's output is projected this far beyond the run, for waits that end after it


class Consignee(Protocol):
    """What NVIDIA needs of a buyer: a name to keep its order under, and somewhere to deliver to."""

    name: str

    def receive(self, system: str, units: int, paid_usd: float, month: int) -> None: ...

    def cancel(self, system: str, units: int, usd: float) -> None:
        """`units` on order will never ship (made, then stopped by an export rule): the money is free again."""


@dataclass
class Order:
    """A buyer's open order for one system: units still to ship and what they will cost (priced when ordered)."""

    consignee: Consignee
    system: str
    units_outstanding: int
    usd_outstanding: float
    opened_month: int = 0  # when the buyer first asked (the order stays open while units are outstanding)


class Supplier(Agent):
    """A vendor: ships systems to buyers' orders under roadmap, ramp and packaging/memory limits. Buyers call it
    (`place_order`, and what they see: prices, waits, what ships); it calls back only through `Consignee.receive`.
    Each month the model asks every vendor what it needs (`need`), the foundry splits the shared capacity, and
    each vendor ships what its part makes (`ship`)."""

    def __init__(self, model, params: SupplierParams, foundry: Foundry, vendor: str = "NVIDIA",
                 keys: tuple[str, ...] | None = None, allocation: Allocation | None = None,
                 share_of_price: Mapping[str, float] | None = None, attach_revenue_fraction: float = 0.0,
                 owner: str | None = None, rng: np.random.Generator | None = None):
        """`keys`: the vendor's systems (default: every catalog system of `vendor`); `share_of_price`: the vendor's
        revenue per system over what the buyer pays (default 1); `attach_revenue_fraction`: revenue sold with the
        systems (NVIDIA's networking); `owner`: the one buyer of the vendor's systems not sold to others (Google
        for its TPUs, AWS for Trainium; None: nobody may order them)."""
        super().__init__(model)
        self.owner = owner
        self.vendor = vendor
        self.name = vendor.lower()
        self.p = params
        self.allocation = allocation or Allocation(partner_weight=0.0, order_age_weight_per_month=0.0)
        self._partner_since = {name: month_index(since, model.start)
                               for name, since in self.allocation.partners.items()}
        catalog = systems()
        self.keys = list(keys if keys is not None else (k for k in catalog if catalog[k].vendor == vendor))
        self.share_of_price = {k: (share_of_price or {}).get(k, 1.0) for k in self.keys}
        self.attach_revenue_fraction = attach_revenue_fraction
        self.foundry = foundry
        self.first: dict[str, int] = {}
        self.volume: dict[str, int] = {}
        # the last month a system is made (TPU v4, v5e: production ended); made to the end of the run otherwise
        self.last: dict[str, int] = {k: month_index(catalog[k].last_shipment, model.start)
                                     if catalog[k].last_shipment else 10**9 for k in self.keys}
        self.volume_announced: dict[str, int] = {}  # the volume date buyers expect until the first racks ship
        for k in self.keys:
            delay, volume_delay = params.delays_months(k)  # scenario inputs, e.g. a Rubin delay
            first = month_index(catalog[k].first_shipment, model.start) + delay
            # a ramp that slips (first racks on time, volume late), e.g. GB200's rack problems in early 2025
            volume = month_index(catalog[k].volume, model.start) + delay + volume_delay
            slip = 0
            if (catalog[k].status != "dropped" and catalog[k].first_shipment >= params.slip_after
                    and k not in params.on_time):
                slip = int(self.rng.choice(params.slip_months, p=params.slip_probs))
                if slip and first < model.n_months:  # no events dated after the run
                    model.add_event(date_of(model.start, max(first, 0)), self.name, "roadmap_slip", k, 0,
                                    f"{slip} months")
            self.first[k] = first + slip
            self.volume[k] = max(volume + slip, first + slip + 1)
            # a ramp problem shows when the first racks ship (GB200's did): until then buyers expect the plan
            self.volume_announced[k] = max(volume - volume_delay + slip, first + slip + 1)
        # what the vendor and its buyers plan on: its reservations (it may get more when others leave some unused and
        # the scenario lets a share of that move: supplier.unused_reservation_transfer_share, 0 in the baseline)
        self.wafers_per_month = foundry.reserved(vendor, "cowos_wafers")
        self.hbm_tb_per_month = foundry.reserved(vendor, "hbm_tb")
        self._wanted_gpus: dict[str, float] = {}
        self._cum_output_gpus = {k: self._cumulative_expected_output(k) for k in self.keys}
        self._cum_output_gpus_announced = {k: self._cumulative_expected_output(k, self.volume_announced[k])
                                           if self.volume_announced[k] != self.volume[k] else self._cum_output_gpus[k]
                                           for k in self.keys}
        self.orders: dict[str, dict[str, Order]] = {k: {} for k in self.keys}
        self._backlog = dict.fromkeys(self.keys, 0)
        self._prices: dict[tuple[str, int], float] = {}  # (system, month) -> price: a fixed path once slips are drawn
        self._waits: dict[tuple[str, int, int, int], float] = {}  # a month's answers (buyers ask them repeatedly)
        self.shipped_month = dict.fromkeys(self.keys, 0)  # units (systems) shipped this month
        self.units_shipped_total = dict.fromkeys(self.keys, 0)
        self.units_stranded_total = dict.fromkeys(self.keys, 0)  # made for orders an export rule stopped (unsold)
        self.stranded_usd_total = 0.0  # what the stranded units would have sold for
        self._stranding: set[str] = set()  # systems whose packaged output is stranded this month
        self.units_ordered_total = dict.fromkeys(self.keys, 0)
        self.revenue_month_usd = 0.0
        self.revenue_total_usd = 0.0
        self.paid_month_usd = 0.0  # what buyers paid for the systems shipped this month (spending on the vendor)
        self.paid_total_usd = 0.0

    # -- what buyers see ------------------------------------------------------------------------------------------
    def orderable(self, k: str, t: int, lookahead_months: int) -> bool:
        """Shipping now, or first shipment within the buyer's planning lookahead (pre-orders); never after the
        system's last month of production."""
        return systems()[k].status != "dropped" and self.first[k] - t <= lookahead_months and t <= self.last[k]

    def may_order(self, buyer: str, k: str) -> bool:
        """Whether a buyer may order system k: anyone if the vendor sells it to others, else its owner only; and
        under export controls, a system made for one market (HGX H20: China) only by buyers there, who may order
        nothing else (`export_market` of the catalog and of the buyer)."""
        market = getattr(self.model, "export_market_of", {}).get(buyer)
        if systems()[k].export_market != market:
            return False
        return self.p.sold_to_others(k) or buyer == self.owner

    def shipping(self, k: str, t: int) -> bool:
        return systems()[k].status != "dropped" and self.first[k] <= t <= self.last[k]

    def price_usd(self, k: str, t: int, buyer: str | None = None) -> float:
        """Price per system: a launch premium decaying with age, a steady decline, floored at the catalog low. The
        owner of custom chips (Google for its TPUs, AWS for Trainium) pays what its systems cost to make, the
        catalog low (chips at what the owner pays its design partner and foundry, plus the server around them),
        whoever else it sells to: no vendor margin stands between it and its own chips."""
        if buyer is not None and buyer == self.owner:
            return systems()[k].price_usd_low
        key = (k, t)
        if key not in self._prices:
            self._prices[key] = system_price_usd(systems()[k], t - self.first[k], self.p)
        return self._prices[key]

    def backlog_units(self, k: str) -> int:
        """Units ordered and not yet shipped (kept as a running count: buyers ask for it every month)."""
        return self._backlog[k]

    def ramp_fraction(self, k: str, t: int, volume: int | None = None) -> float:
        """Share of total capacity a system may use: geometric from first shipment to 1 at volume (its actual
        volume date unless `volume` is given)."""
        volume = self.volume[k] if volume is None else volume
        if t < self.first[k] or t > self.last[k]:  # not yet, or no longer, made
            return 0.0
        if t >= volume:
            return 1.0
        f0 = self.p.ramp_first_month_fraction
        return f0 ** (1 - (t - self.first[k]) / (volume - self.first[k]))

    def capacity_gpus(self, k: str, t: int) -> float:
        """GPUs of system k the vendor's whole reserved capacity could make in month t (CoWoS and HBM bound, before
        sharing between its systems)."""
        s = systems()[k]
        t = min(max(t, 0), len(self.wafers_per_month) - 1)
        by_wafers = self.wafers_per_month[t] * self.p.gpus_per_wafer[k]
        by_hbm = self.hbm_tb_per_month[t] * 1000.0 / s.hbm_gb
        return min(by_wafers, by_hbm)

    def _cumulative_expected_output(self, k: str, volume: int | None = None) -> np.ndarray:
        """Cumulative GPUs of system k buyers expect the vendor to make, month by month: its ramp-capped capacity
        times the share of capacity a system is expected to get (`expected_share_of_capacity`)."""
        share = self.p.expected_share_of_capacity
        monthly = [share * self.ramp_fraction(k, m, volume) * self.capacity_gpus(k, m)
                   for m in range(len(self.wafers_per_month))]
        return np.cumsum(monthly)

    def expected_wait_months(self, k: str, t: int, extra_units: int = 0) -> float:
        """Months until a new order would be filled: the orders ahead (the backlog) must be made first, at the
        output buyers expect along the system's ramp; before first shipment the wait runs from then."""
        key = (k, t, self._backlog[k], extra_units)
        if key not in self._waits:
            if len(self._waits) > 4096:
                self._waits.clear()
            self._waits[key] = self._wait_months(k, t, extra_units)
        return self._waits[key]

    def _wait_months(self, k: str, t: int, extra_units: int) -> float:
        cum = self._cum_output_gpus[k] if t >= self.first[k] else self._cum_output_gpus_announced[k]
        start = min(max(t, self.first[k]), len(cum) - 1)
        made_before = cum[start - 1] if start > 0 else 0.0
        queue = (self.backlog_units(k) + extra_units) * systems()[k].gpus_per_system
        done = int(np.searchsorted(cum, made_before + queue))
        if done >= len(cum):  # beyond the horizon: continue at the last month's rate
            rate = max(cum[-1] - (cum[-2] if len(cum) > 1 else 0.0), 1.0)  # a one-month horizon has one month
            return len(cum) - t + (made_before + queue - cum[-1]) / rate
        return max(0, done - t) if queue > 0 else max(0, self.first[k] - t)

    # -- orders -----------------------------------------------------------------------------------------------
    def place_order(self, buyer: Consignee, k: str, units: int, unit_price_usd: float) -> None:
        """Add `units` systems at `unit_price_usd` to the buyer's open order for system k."""
        if units <= 0:
            return
        if not self.may_order(buyer.name, k):
            raise ValueError(f"{buyer.name} may not order {k}: {self.vendor} sells it to {self.owner} only")
        order = self.orders[k].get(buyer.name)
        if order is None:
            order = self.orders[k][buyer.name] = Order(buyer, k, 0, 0.0, self.model.month)
        order.units_outstanding += units
        order.usd_outstanding += units * unit_price_usd
        self.units_ordered_total[k] += units
        self._backlog[k] += units

    def launch_priority(self, order: Order, t: int) -> float:
        """How much more than its size an order weighs while its system ramps: (1 + partner weight if the buyer
        has a public tie with NVIDIA by month t) x (1 + age weight x months the order has waited)."""
        a = self.allocation
        since = self._partner_since.get(order.consignee.name)
        partner = 1.0 + (a.partner_weight if since is not None and since <= t else 0.0)
        return partner * (1.0 + a.order_age_weight_per_month * max(0, t - order.opened_month))

    def withdraw(self, buyer: Consignee, k: str, units: int) -> float:
        """Take up to `units` systems off the buyer's open order for system k (a buyer moving its order to another
        system of the same rack family); returns what they would have cost."""
        order = self.orders[k].get(buyer.name)
        if order is None or units <= 0:
            return 0.0
        units = min(units, order.units_outstanding)
        usd = order.usd_outstanding * units / order.units_outstanding
        order.units_outstanding -= units
        order.usd_outstanding -= usd
        self.units_ordered_total[k] -= units
        self._backlog[k] -= units
        if order.units_outstanding == 0:
            del self.orders[k][buyer.name]
        return usd

    # -- the monthly step -------------------------------------------------------------------------------------
    def need(self, t: int) -> Need:
        """CoWoS wafers and HBM the vendor needs this month: for each system with open orders that ships, its
        backlog up to what its ramp allows of the vendor's reserved capacity."""
        catalog = systems()
        self._wanted_gpus = {}
        self._stranding = {k for k in self.keys if self.stranded_in_pipeline(k, t)}
        for k in self.keys:
            if self.orders[k] and (self.shipping(k, t) or k in self._stranding):
                self._wanted_gpus[k] = min(self.backlog_units(k) * catalog[k].gpus_per_system,
                                           self.ramp_fraction(k, min(t, self.last[k])) * self.capacity_gpus(k, t))
        wafers = sum(g / self.p.gpus_per_wafer[k] for k, g in self._wanted_gpus.items())
        hbm_tb = sum(g * catalog[k].hbm_gb / 1000.0 for k, g in self._wanted_gpus.items())
        return Need(wafers, hbm_tb)

    def stranded_in_pipeline(self, k: str, t: int) -> bool:
        """Whether month t's output of system k was packaged for orders an export rule has since stopped: the
        system is made for an export market and its sales ended within the packaging-to-shipment lag (the H20's
        licence requirement of April 2025 took effect at once, on chips already in the pipeline). Planned ends of
        production strand nothing: the vendor stops packaging ahead of them."""
        lag = self.p.packaging_to_shipment_months
        return bool(systems()[k].export_market) and self.last[k] < t <= self.last[k] + lag

    def ship(self, t: int, need: Need, given: Need) -> None:
        """Make and ship what the capacity given this month allows (every system scaled alike), allocated across
        open orders."""
        catalog = systems()
        scale = min(1.0, given.cowos_wafers / need.cowos_wafers if need.cowos_wafers else 1.0,
                    given.hbm_tb / need.hbm_tb if need.hbm_tb else 1.0)
        self.revenue_month_usd = 0.0
        self.paid_month_usd = 0.0
        for k in self.keys:
            self.shipped_month[k] = 0
            if k in self._wanted_gpus:
                self.allocate(catalog[k], int(self._wanted_gpus[k] * scale // catalog[k].gpus_per_system), t)
        self.revenue_month_usd *= 1 + self.attach_revenue_fraction
        self.revenue_total_usd += self.revenue_month_usd

    def step(self) -> None:
        """A vendor alone (no other vendor competing for capacity): its reservation plus the transferable share of
        what others leave."""
        t = self.model.month
        need = self.need(t)
        self.ship(t, need, self.foundry.allocate(t, {self.vendor: need})[self.vendor])

    def allocate(self, s: System, units: int, t: int) -> None:
        """Pro rata by units outstanding^exponent, capped at each order, whole systems by largest remainder."""
        orders = list(self.orders[s.key].values())
        outstanding = np.array([o.units_outstanding for o in orders], dtype=float)
        units = min(units, int(outstanding.sum()))
        if units <= 0:
            return
        weight = outstanding ** self.p.order_size_exponent
        if t < self.volume[s.key]:  # launch volume: who asked first and who NVIDIA is tied to count too
            weight = weight * np.array([self.launch_priority(o, t) for o in orders])
        exact = np.zeros_like(outstanding)
        open_ = np.ones(len(orders), dtype=bool)
        left_exact = float(units)
        while left_exact > 1e-9 and open_.any():  # water-fill: shares above an order's size go to the others
            share = np.where(open_, weight, 0.0)
            add = left_exact * share / share.sum()
            exact = np.minimum(exact + add, outstanding)
            left_exact = units - exact.sum()
            open_ = exact < outstanding - 1e-9
        give = np.floor(exact + 1e-9).astype(int)
        left = units - int(give.sum())
        if left:
            remainder = np.where(give < outstanding, exact - give, -1.0) + self.rng.random(len(orders)) * 1e-9
            give[np.argsort(-remainder)[:left]] += 1
        stranded = s.key in self._stranding
        for order, n in zip(orders, give, strict=True):
            n = int(min(n, order.units_outstanding))
            if n <= 0:
                continue
            paid = order.usd_outstanding * n / order.units_outstanding
            order.units_outstanding -= n
            order.usd_outstanding -= paid
            self._backlog[s.key] -= n
            if stranded:  # made, never sold: no revenue, the buyer's money is free again
                self.units_ordered_total[s.key] -= n
                self.units_stranded_total[s.key] += n
                self.stranded_usd_total += paid
                order.consignee.cancel(s.key, n, paid)
                if order.units_outstanding == 0:
                    del self.orders[s.key][order.consignee.name]
                continue
            self.shipped_month[s.key] += n
            self.units_shipped_total[s.key] += n
            self.revenue_month_usd += paid * self.share_of_price[s.key]
            self.paid_month_usd += paid
            self.paid_total_usd += paid
            order.consignee.receive(s.key, n, paid, t)
            if order.units_outstanding == 0:
                del self.orders[s.key][order.consignee.name]
