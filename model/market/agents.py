"""The buyers: providers (hyperscalers, neoclouds), labs and the rest of the market, as Mesa agents made of parts.

A buyer is a treasury (`money`), a power plan (`power`), a fleet of sites and clusters (`fleet`), systems on their
way (`deliveries`), an order book at NVIDIA (`procurement`) and its firsts (`events`). Each month, in `step`, it
accrues budget and financing, finishes power builds, orders and plans new power; after NVIDIA ships, in `advance`,
it retires old GPUs, takes deliveries and places what finished integration into sites with free power. Providers
also offer capacity to labs; labs also train frontier models and sign contracts for capacity. Buyers call NVIDIA
(orders) and providers (offers); NVIDIA delivers back through `receive` only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from model.hardware.systems import systems
from model.market.calendar import month_index
from model.market.contracts import Contract, contract_from_terms
from model.market.cooling import LiquidCooling, needs_liquid
from model.market.deliveries import Inbound, Shipment, bring_up_schedule
from model.market.events import CLUSTER_SIZES_GPUS, Milestones
from model.market.fleet import Fleet
from model.market.money import (
    BudgetPlan,
    CapexPlan,
    ContractFunding,
    DebtTerms,
    Treasury,
    split_ledgers,
    within_year_weights,
)
from model.market.power import PowerPlan
from model.market.procurement import Procurement, ProcurementTerms
from model.market.sites import Cluster
from model.market.training import FrontierRuns
from model.scenario import schema
from model.scenario.mesa_core import Agent

NO_CLUSTER = Cluster(None, 0)  # type: ignore[arg-type]
SECONDS_PER_YEAR = 365.25 * 86400


def best_cluster(model, options: Iterable[tuple[str, int]]) -> Cluster:
    """The option that trains the scenario's reference frontier run fastest; options on which it does not fit rank
    by H100-equivalents. `NO_CLUSTER` when there is nothing."""
    biggest: dict[str, int] = {}
    for k, g in options:  # per pacing system only the biggest cluster can be the best (days fall with GPUs)
        if g > biggest.get(k, 0):
            biggest[k] = g
    if not biggest:
        return NO_CLUSTER
    reference_days = model.capability.reference_run_days
    catalog = systems()
    month = model.date_of(model.month)

    def rank(option: tuple[str, int]) -> tuple[bool, float, float]:
        k, g = option
        days = reference_days(k, g, month)
        return days is not None, -(days or 0.0), g * catalog[k].h100e_per_gpu

    return Cluster(*max(biggest.items(), key=rank))


class Buyer(Agent):
    """Anything that buys, powers and runs NVIDIA systems."""

    def __init__(self, model, name: str, kind: str, terms: schema.KindBase, plan: BudgetPlan, *,
                 debt: DebtTerms | None = None, add_mw_per_year: float | dict[str, float] = 0.0,
                 power_mw_start: float = 0.0, power_mw_under_construction: float = 0.0,
                 fleet_start: dict[str, int] | None = None):
        super().__init__(model)
        spec = model.spec
        keys = model.system_keys
        self.name, self.kind, self.terms = name, kind, terms
        self.milestones = Milestones(self._record_now)
        self.treasury = Treasury(plan, terms.budget_carry_months, debt)
        slow = spec.power_lead_time_multiplier
        self.power = PowerPlan(lead_months=round(terms.construction_lead_months * slow),
                               delay_max_months=round(terms.construction_delay_max_months * slow),
                               buffer_months=terms.power_buffer_months, min_build_mw=terms.min_build_mw,
                               add_mw_per_year=add_mw_per_year, outlook=model.power_outlook)
        self.fleet = Fleet(name, terms.pue, spec.fabric_max_gpus, terms.power_unconstrained, keys,
                           model.capability.training_ratio, round(terms.gpu_lifetime_years * 12))
        up = spec.bring_up
        self.inbound = Inbound(keys, spec.transit_months,
                               lambda k, gpus: bring_up_schedule(k, gpus, up.days_base, up.days_per_doubling),
                               lambda k, gpus: self.fleet.bring_up_batches(k, gpus, self.max_site_mw(),
                                                                           self.inbound.integrating))
        self.liquid = LiquidCooling(up.liquid_fitout_months)
        self._liquid_committed: tuple[tuple, float] = ((), 0.0)
        self.is_liquid = {k: needs_liquid(k, up.liquid_cooling_above_kw_per_rack) for k in keys}
        self.procurement = Procurement(
            self, model.supplier_of, model.capability, self.treasury,
            ProcurementTerms(terms.training_weight, terms.wait_tau_months, terms.preorder_lookahead_months,
                             spec.choice_sharpness, spec.choice_min_weight, terms.pue,
                             spec.valuation.software_ahead_months, spec.valuation.facility_usd_per_mw,
                             spec.rental.usd_per_kwh, terms.gpu_lifetime_years),
            keys, self.spare_mw, self.milestones.first, model.date_of, self.site_ready_wait_months,
            self.joining_cluster_gpus,
            discount=lambda k, t: spec.supplier.discount(k, model.year_at(t)))  # software maturity (issue 18)
        self.procurement.is_liquid = self.is_liquid
        self.start_fleet = dict.fromkeys(keys, 0)
        self._largest: tuple[tuple, Cluster] = ((), NO_CLUSTER)
        self._monthly_budgets: list[float] = []  # by month (a buyer's plan is fixed once built)
        self._campus_year: tuple[int, int, float] = (-1, -1, 0.0)  # (year, newest site, its MW as the year began)
        self._start_state(power_mw_start, power_mw_under_construction, fleet_start or {})

    def _start_state(self, power_mw_start: float, under_construction_mw: float, fleet_start: dict[str, int]) -> None:
        """Power, construction and fleet at the start. Sites that exist at the start are of the size campuses had
        then (`start_site_mw`); power under construction arrives evenly over one lead time. The starting fleet is
        online from the start, its liquid-cooled systems (a TPU v5e pod) in space already fitted for them."""
        mw = power_mw_start
        while mw > 1e-9:
            size = min(mw, self.terms.start_site_mw)
            self.fleet.new_site(size)
            mw -= size
        lead = max(1, round(self.terms.construction_lead_months * self.model.spec.power_lead_time_multiplier))
        self.power.start_under_construction(under_construction_mw, lead)
        for k, gpus in fleet_start.items():
            self.start_fleet[k] += gpus
            self.inbound.integrating.append(Shipment(k, gpus, 0))
            if self.is_liquid[k]:  # whole systems, as they are placed
                s = systems()[k]
                self.liquid.ready_mw += (math.ceil(gpus / s.gpus_per_system) * s.system_power_kw * self.terms.pue
                                         / 1000.0)
        self.place_ready(month=0, online_month=-self.terms.fleet_start_age_months, events=False)

    def _record_now(self, event: str, system: str, gpus: int, detail: str = "") -> None:
        self.model.add_event_now(self.name, event, system, gpus, detail)

    # -- what others read ---------------------------------------------------------------------------------------
    @property
    def capex_usd(self) -> float:
        return self.treasury.capex_usd

    @property
    def ordered(self) -> dict[str, int]:
        return self.procurement.ordered

    @property
    def preordered(self) -> dict[str, int]:
        return self.procurement.preordered

    @property
    def delivered(self) -> dict[str, int]:
        return self.inbound.delivered

    @property
    def retired(self) -> dict[str, int]:
        return self.fleet.retired

    @property
    def placements(self) -> int:
        return self.fleet.placements

    def gpus_online(self) -> dict[str, int]:
        return self.fleet.gpus_online()

    def h100e(self) -> float:
        return self.fleet.h100e()

    def h100e_delivered(self) -> float:
        """H100e the buyer has received: online, plus arrived and in bring-up or waiting for power or cooling (what
        an owner holds, as Epoch AI's chip-owner counts do; `h100e` is what runs)."""
        catalog = systems()
        return self.h100e() + sum(g * catalog[k].h100e_per_gpu for k, g, _ in self.inbound.integrating)

    def power_online_mw(self) -> float:
        return self.fleet.power_online_mw()

    def power_used_mw(self) -> float:
        return self.fleet.power_used_mw()

    def clusters(self) -> list[Cluster]:
        return self.fleet.clusters()

    def largest_cluster(self) -> Cluster:
        """This buyer's most capable training cluster: the one that trains the scenario's reference frontier run
        fastest (by the capability table), else the most H100-equivalents."""
        key = (self.fleet.placements, self.model.capability.software_era(self.model.date_of(self.model.month)))
        if self._largest[0] != key:
            self._largest = (key, best_cluster(self.model, self.fleet.largest_by_pace().items()))
        return self._largest[1]

    def accessible_cluster(self) -> Cluster:
        """The most capable cluster the buyer can train on."""
        return self.largest_cluster()

    def joining_cluster_gpus(self, k: str) -> int | None:
        """GPUs of this buyer's largest cluster of system k's architecture, which new GPUs of k would grow
        (placement fills the site where that architecture runs first); None when it runs none."""
        arch = systems()[k].architecture
        sizes = [g for pace, g in self.fleet.largest_by_pace().items() if systems()[pace].architecture == arch]
        return max(sizes) if sizes else None

    # -- compute under contract (as a customer) ---------------------------------------------------------------------
    def held_by_provider(self, t: int) -> dict[str, float]:
        """H100e this buyer is given this month under its active contracts, by provider: what each provider's
        online compute covers of them, in signing order (`ContractBook.delivered_h100e`), so no block is counted
        for two customers and none beyond what the provider runs."""
        book = self.model.contracts
        providers = dict.fromkeys(c.provider for c in book.of_lab(self.name, t) if c.active(t))
        held: dict[str, float] = {}
        for name in providers:
            provider = self.model.buyer(name)
            given = sum(h for c, h in book.delivered_h100e(name, t, provider.h100e()) if c.lab == self.name)
            if given > 0:
                held[name] = given
        return held

    def contracted_h100e_held(self) -> float:
        """H100e held under contracts this month (the agents table's `contracted_h100e`)."""
        return sum(self.held_by_provider(self.model.month).values())

    # -- power --------------------------------------------------------------------------------------------------
    def max_site_mw(self) -> float:
        """The largest new site this buyer can open now: one campus phase of the power outlook (or its kind's site
        size, where the kind has one: the rest of the market's many small sites)."""
        phase = self.model.power_outlook.campus_phase_mw(self.model.year)
        return phase if self.terms.max_site_mw is None else min(self.terms.max_site_mw, phase)

    def power_committed_mw(self) -> float:
        """Facility MW for everything online, integrating, in transit or on order."""
        kw = self.fleet.facility_kw_per_gpu
        waiting = sum(g * kw(k) for k, g, _ in self.inbound.waiting())
        return self.fleet.power_used_mw() + (waiting + self.procurement.on_order_kw()) / 1000.0

    def power_by_mw(self, month: float) -> float:
        """Facility MW online by `month`: sites now plus builds ready by then."""
        return self.fleet.power_online_mw() + self.power.ready_by_mw(month)

    def spare_mw(self, k: str, t: int) -> float:
        """Facility MW free, for a system of k's cooling, when an order of system k placed now would arrive.
        Liquid-cooled systems need space fitted for them, ready by then (unlimited when a fit-out started now
        would be ready in time); air-cooled systems use the power not fitted for liquid."""
        if self.terms.power_unconstrained:
            return math.inf
        ready = t + math.ceil(self.model.supplier_of(k).expected_wait_months(k, t))
        power = self.power_by_mw(ready)
        spare = power - self.power_committed_mw()
        liquid_committed = self.liquid_committed_mw()
        if self.is_liquid[k]:
            if ready >= t + self.liquid.fitout_months:
                return max(0.0, spare)
            return max(0.0, min(spare, min(self.liquid.ready_by_mw(ready), power) - liquid_committed))
        air = power - max(self.liquid.ready_by_mw(ready), liquid_committed)
        air_committed = self.power_committed_mw() - liquid_committed
        return max(0.0, min(spare, air - air_committed))

    # -- liquid cooling -----------------------------------------------------------------------------------------
    def liquid_committed_mw(self) -> float:
        """Facility MW of the liquid-cooled systems online, on the way and on order."""
        inbound, on_order = self.inbound, self.procurement.on_order_units
        key = (self.model.month, self.fleet.placements, len(inbound.integrating), len(inbound.in_transit),
               sum(g for _, g, _ in inbound.integrating), tuple(on_order.values()))
        if self._liquid_committed[0] != key:
            self._liquid_committed = (key, self._liquid_committed_mw())
        return self._liquid_committed[1]

    def _liquid_committed_mw(self) -> float:
        kw = self.fleet.facility_kw_per_gpu
        liquid = self.is_liquid
        online = sum(g * kw(k) for k, g in self.fleet.online.items() if g and liquid[k])
        waiting = sum(g * kw(k) for k, g, _ in self.inbound.waiting() if liquid[k])
        on_order = sum(u * systems()[k].system_power_kw * self.terms.pue
                       for k, u in self.procurement.on_order_units.items() if u and liquid[k])
        return (online + waiting + on_order) / 1000.0

    def liquid_used_mw(self) -> float:
        kw = self.fleet.facility_kw_per_gpu
        return sum(g * kw(k) for k, g in self.fleet.online.items() if g and self.is_liquid[k]) / 1000.0

    def site_ready_wait_months(self, k: str, t: int, wait_months: float) -> float:
        """Months until an order of system k placed now could go online, NVIDIA's wait and site readiness both:
        a liquid-cooled system with no fitted space free when it arrives waits for a fit-out started now."""
        if self.terms.power_unconstrained or not self.is_liquid[k]:
            return wait_months
        arrival = t + math.ceil(wait_months)
        unit_mw = systems()[k].system_power_kw * self.terms.pue / 1000.0
        if self.liquid.ready_by_mw(arrival) - self.liquid_committed_mw() >= unit_mw:
            return wait_months
        return max(wait_months, float(self.liquid.fitout_months))

    def plan_liquid(self, t: int) -> None:
        """Fit out space for liquid cooling (ready after the lead time) for the liquid-cooled systems online, on
        the way and on order, plus the share of the power free by then that the buyer would fill with liquid-cooled
        systems were its sites ready (its own scores: `Procurement.liquid_share`); only power that air-cooled
        systems do not use can be fitted."""
        if self.terms.power_unconstrained:
            return
        have = self.liquid.ready_mw + self.liquid.building_mw()
        committed = self.power_committed_mw()
        liquid_committed = self.liquid_committed_mw()
        by = self.power_by_mw(t + self.liquid.fitout_months)
        want = liquid_committed + self.procurement.liquid_share * max(0.0, by - committed)
        gap = want - have
        if gap <= 1e-9:
            return
        convertible = by - (committed - liquid_committed) - have
        self.liquid.start(t, min(gap, max(0.0, convertible)))

    def finish_builds(self, t: int) -> None:
        """Finished power grows the newest campus by up to one phase this year (multi-phase campuses reach several
        GW over the years where a buyer keeps building), the rest opens new campuses of at most one phase each."""
        mw = sum(build.mw for build in self.power.finished(t))
        if mw > 0:
            self._grow_campuses(mw)
        self.liquid.finish(t)

    def _grow_campuses(self, mw: float) -> None:
        """Add `mw` of finished power: up to one phase a year on the newest campus, the rest as new campuses."""
        year, phase = self.model.year, self.max_site_mw()
        sites = self.fleet.sites
        if sites:
            newest = sites[-1]
            if self._campus_year[:2] != (year, newest.seq):
                self._campus_year = (year, newest.seq, newest.mw)
            limit = self._campus_year[2] + phase
            if self.terms.max_site_mw is not None:
                limit = min(limit, self.terms.max_site_mw)
            top = min(mw, max(0.0, limit - newest.mw))
            if top > 0:
                self.fleet.add_power(top, limit)
                mw -= top
        if mw > 1e-9:
            self.fleet.add_power(mw, phase)
            newest = self.fleet.sites[-1]
            self._campus_year = (year, newest.seq, 0.0 if newest.mw <= phase else newest.mw)

    def plan_power(self, t: int, year: int) -> None:
        """Start construction when the power this buyer will need by the time a build started now is surely done
        exceeds what it has or is building (spending ahead over that horizon, at what a MW of the systems it chose
        last costs, or before it chose, of the newest NVIDIA system), within the grid connections it can get this
        year."""
        if self.terms.power_unconstrained:
            return
        usd_per_mw = self.procurement.usd_per_facility_mw or self.model.best_usd_per_facility_mw(t, self.terms.pue)
        spend_ahead = self.treasury.cash_usd() + sum(self._budgets_ahead(t))
        need = self.power_committed_mw() + spend_ahead / usd_per_mw
        gap = need - self.fleet.power_online_mw() - self.power.building_mw()
        self.power.start(t, year, gap, self.model.rng)

    def _monthly_budget(self, month: int) -> float:
        """The plan's budget of a month (any month, also beyond the run)."""
        self._budgets_ahead(max(0, month - self.power.horizon_months()))  # fills the budgets up to `month`
        return self._monthly_budgets[month]

    def _budgets_ahead(self, t: int) -> list[float]:
        """The monthly budgets of the months after t over which a build started in month t is surely done."""
        horizon = self.power.horizon_months()
        while len(self._monthly_budgets) < t + horizon + 1:
            month = len(self._monthly_budgets)
            self._monthly_budgets.append(self.treasury.monthly_budget_usd(self.model.year_at(month),
                                                                          self.model.month_of_year(month)))
        return self._monthly_budgets[t + 1:t + horizon + 1]

    def _advance_usd(self, t: int) -> float:
        """What orders waiting at NVIDIA may be paid from (`Treasury`): the budget of the months of the buyer's
        pre-order horizon after t, up to the value of its orders of systems that do not ship yet or whose backlog
        will take a month or more (they are paid when they ship)."""
        horizon = self.terms.preorder_lookahead_months
        if not horizon:
            return 0.0
        sup, p = self.model.supplier_of, self.procurement
        preordered = sum(units * p.price_usd(k, t) for k, units in p.on_order_units.items()
                         if units and (not sup(k).shipping(k, t) or sup(k).expected_wait_months(k, t) >= 1))
        if not preordered:
            return 0.0
        self._budgets_ahead(t + max(0, horizon - self.power.horizon_months()))  # fills the budgets that far
        return min(preordered, sum(self._monthly_budgets[t + 1:t + horizon + 1]))

    def fund_contract(self, contract: Contract) -> None:
        """A contract delivered on schedule: the customer's commitment funds the systems it needs (like project
        finance or prepayment, it does not lapse) and the grid connections for them, spread over the years until
        the contract starts."""
        s = systems()[contract.system]
        t = self.model.month
        price_per_gpu = self.procurement.price_usd(contract.system, t) / s.gpus_per_system
        self.treasury.fund(contract.gpus * price_per_gpu)
        mw = contract.gpus * s.system_power_kw_per_gpu * self.terms.pue / 1000.0
        self.power.allow_for_contract(mw, range(self.model.year_at(t), self.model.year_at(max(contract.start_month,
                                                                                              t)) + 1))

    # -- deliveries and deployment ------------------------------------------------------------------------------
    def receive(self, system: str, units: int, paid_usd: float, month: int) -> None:
        """NVIDIA shipped `units` systems: pay, and they arrive after the transit time."""
        self.treasury.pay(paid_usd)
        self.procurement.shipped(system, units)
        self.inbound.ship(system, units * systems()[system].gpus_per_system, month)

    def cancel(self, system: str, units: int, usd: float) -> None:
        """Units on order that will never ship (an export rule stopped them): the money committed is free again."""
        self.treasury.commit(-usd)
        self.procurement.cancelled(system, units)

    def take_deliveries(self, t: int) -> None:
        for k, gpus, _ in self.inbound.arrive(t):
            self.milestones.first("first_delivery", k, gpus)

    def place_ready(self, month: int, online_month: int | None = None, events: bool = True) -> None:
        """Integrated GPUs go online in sites with free power; what does not fit waits for power."""
        online_month = month if online_month is None else online_month
        if not self.fleet.has_open_sites() and not self.terms.power_unconstrained:
            return  # nowhere to put anything: everything waits for power
        max_site_mw = self.max_site_mw()
        waiting = []
        cooled = not self.terms.power_unconstrained
        for k, gpus, ready in self.inbound.integrating:
            if ready > month:
                waiting.append(Shipment(k, gpus, ready))
                continue
            fits = min(gpus, self._cooled_gpus(k)) if cooled else gpus
            left = (gpus - fits) + (self.fleet.place(k, fits, online_month, max_site_mw) if fits else 0)
            placed = gpus - left
            if placed and events:
                self.milestones.first("first_online", k, placed)
            if left:
                waiting.append(Shipment(k, left, ready))
        merged: dict[tuple[str, int], int] = {}  # ready GPUs waiting for power: one entry per system
        for k, gpus, ready in waiting:
            key = (k, max(ready, month))  # ready ones (waiting for power) as one entry; the rest keep their month
            merged[key] = merged.get(key, 0) + gpus
        self.inbound.integrating = [Shipment(k, g, ready) for (k, ready), g in merged.items()]

    def _cooled_gpus(self, k: str) -> int:
        """How many GPUs of system k the space fitted for their cooling can take now (whole systems)."""
        s = systems()[k]
        unit_mw = s.system_power_kw * self.terms.pue / 1000.0
        liquid_used = self.liquid_used_mw()
        if self.is_liquid[k]:
            free = min(self.liquid.ready_mw, self.fleet.power_online_mw()) - liquid_used
        else:
            air_used = self.fleet.power_used_mw() - liquid_used
            free = self.fleet.power_online_mw() - max(self.liquid.ready_mw, liquid_used) - air_used
        return max(0, int(free // unit_mw + 1e-9)) * s.gpus_per_system

    def check_at_scale(self) -> None:
        """A first cluster of a system with at least one of the fixed sizes (`CLUSTER_SIZES_GPUS`) or the
        scenario's `at_scale_gpus` in one site is an event (the aggregate's too; it is never first of the race)."""
        own = self.model.spec.at_scale_gpus
        sizes = tuple(sorted({*CLUSTER_SIZES_GPUS, own}))
        for (k, size), g in sorted(self.fleet.new_at_scale(sizes, self.milestones.reached_size).items()):
            self.milestones.first_at_size(k, g, size, own)

    # -- the monthly step ---------------------------------------------------------------------------------------
    def step(self) -> None:
        """Before NVIDIA ships: budget and financing, finished power, orders, new power."""
        t, year = self.model.month, self.model.year
        self.treasury.accrue(year, self._backlog_usd, self.model.month_of_year(t), self._advance_usd(t))
        self.invest(t)
        self.finish_builds(t)
        self.procurement.procure(t)
        self.plan_liquid(t)
        self.plan_power(t, year)

    def advance(self) -> None:
        """After NVIDIA ships: retirement, deliveries, integration, placement, at-scale events."""
        t = self.model.month
        self.fleet.retire(t)
        self.take_deliveries(t)
        self.place_ready(t)
        self.check_at_scale()

    def invest(self, t: int) -> None:
        """Money beyond the budget plan, once the month's budget and financing are in (providers: `Provider`)."""

    def _backlog_usd(self, lag_months: int) -> float:
        """Value yet to serve under this buyer's contracts as a provider, signed at least `lag_months` ago."""
        t = self.model.month
        return self.model.contracts.backlog_usd(self.name, t, signed_by=t - lag_months)


class Provider(Buyer):
    """A hyperscaler or neocloud: sells capacity to labs under contracts and to the market by the hour."""

    @classmethod
    def from_scenario(cls, model, name: str, kind: str, spec: schema.Provider, terms: schema.KindBase) -> Provider:
        neocloud = isinstance(terms, schema.NeocloudKind)
        own_share = terms.equity_funded_share if neocloud else 1.0
        debt = DebtTerms(terms.debt_multiple_of_backlog, terms.financing_lag_months) if neocloud else None
        plan = CapexPlan(spec.capex_usd_bn, terms.capex_growth_after_guidance, spec.systems_share(terms),
                         terms.capex_multiplier, own_share)
        provider = cls(model, name, kind, terms, plan, debt=debt, add_mw_per_year=spec.power_add_mw_per_year,
                       power_mw_start=spec.power_mw_start,
                       power_mw_under_construction=spec.power_mw_under_construction, fleet_start=spec.fleet_start)
        provider.funding = ContractFunding()  # compute funded by customers' commitments (`invest_against_backlog`)
        provider.demand_funding = ContractFunding()  # bought for demand beyond the plan (`invest_against_demand`)
        provider.last_guidance_year = max((int(y) for y in spec.capex_usd_bn), default=model.year_at(0) - 1)
        provider._raised_for_demand_usd: dict[int, float] = {}  # by year
        return provider

    # -- investment against the contract backlog -------------------------------------------------------------
    def invest(self, t: int) -> None:
        self.invest_against_backlog(t)
        self.invest_against_demand(t)

    def _horizon_months(self) -> int:
        """How far ahead compute bought now must be planned: the pre-order horizon, fitting liquid-cooled space
        and the kind's `backlog_margin_months`."""
        return (self.terms.preorder_lookahead_months + self.model.spec.bring_up.liquid_fitout_months
                + self.terms.backlog_margin_months)

    def _usd_per_h100e(self, t: int) -> tuple[str, float]:
        """The newest shipping system and what an H100e of it costs now."""
        k = self.model.newest_shipping(t)
        s = systems()[k]
        return k, self.model.supplier.price_usd(k, t) / s.gpus_per_system / s.h100e_per_gpu

    def _allow_power_for(self, k: str, h100e: float) -> None:
        s = systems()[k]
        mw = h100e / s.h100e_per_gpu * s.system_power_kw_per_gpu * self.terms.pue / 1000.0
        self.power.allow_for_contract(mw, range(self.model.year, self.model.year + 1))

    # -- investment against demand (after the guidance years) -----------------------------------------------------
    def invest_against_demand(self, t: int) -> None:
        """After its last year of capex guidance, a provider buys compute beyond its plan when what it has is used
        beyond the target utilisation (`rental.utilization`, where the rental price reaches cost-plus): the compute
        spoken for now (`MarketModel.spoken_for_h100e`: contracts active plus labs' demand they do not cover), at
        the provider's share of what providers can rent out, over the target, less what it can rent out of its
        fleet, what it has coming, its cash and what its plan buys until an order placed now would run. It raises
        the money (cash flow, debt) up to `demand_capex_max_share` of the year's planned capex, with grid
        connections for it. Capex after guidance so grows with the utilisation of what providers have, not at an
        assumed rate alone; a market below the target adds nothing."""
        model = self.model
        year = model.year
        if year <= self.last_guidance_year:
            return
        total_rentable = model.rentable_h100e()
        if total_rentable <= 0:
            return
        terms = self.terms
        share = terms.contract_capacity_share
        horizon = self._horizon_months()
        want = model.spoken_for_h100e(t) * self.h100e() * share / total_rentable / model.spec.rental.utilization
        k, usd_per_h100e = self._usd_per_h100e(t)
        planned = sum(self._monthly_budget(m) for m in range(t + 1, t + horizon + 1))  # the plan buys too
        gap = want - self.contract_cover_h100e(usd_per_h100e) - share * planned / usd_per_h100e
        room_usd = (terms.demand_capex_max_share * self.treasury.plan.annual_budget_usd(year)
                    - self._raised_for_demand_usd.get(year, 0.0))
        usd = min(gap * usd_per_h100e, room_usd)
        if usd < terms.min_funding_usd_bn * 1e9:
            return
        self._raised_for_demand_usd[year] = self._raised_for_demand_usd.get(year, 0.0) + usd
        self.demand_funding.fund(usd / usd_per_h100e, usd_per_h100e,
                                 max(self._ordered_h100e(), self.funding.next_mark_h100e))
        self.treasury.raise_for_demand(usd)
        self._allow_power_for(k, usd / usd_per_h100e)

    def invest_against_backlog(self, t: int) -> None:
        """Fund the compute contracted to run within the time an order takes to come online (pre-order horizon,
        fitting liquid-cooled space and the kind's `backlog_margin_months`) that the provider does not cover: the
        customers' commitments pay for it (prepayment, or debt raised against the contract), and grid connections
        for it are allowed this year. What covers contracts: the compute customers funded before, once
        (`ContractFunding`: as money not yet ordered, systems on the way or GPUs online), the kind's
        `contract_capacity_share` of the rest of the fleet (online, on the way and on order) and the cash not raised
        for contracts. Funded compute leaves the ledger as the contracts it serves end."""
        self.funding.release_beyond(self.contracted_h100e(t))
        due = self.model.contracts.due_h100e(self.name, t, t + self._horizon_months())
        if due <= 0:
            return
        k, usd_per_h100e = self._usd_per_h100e(t)
        gap = due - self.contract_cover_h100e(usd_per_h100e)
        if gap * usd_per_h100e < self.terms.min_funding_usd_bn * 1e9:
            return
        self.funding.fund(gap, usd_per_h100e, max(self._ordered_h100e(), self.demand_funding.next_mark_h100e))
        self.treasury.fund(gap * usd_per_h100e)
        self._allow_power_for(k, gap)

    def _ordered_h100e(self) -> float:
        """H100e ordered from NVIDIA so far (cumulative)."""
        catalog = systems()
        return sum(g * catalog[k].h100e_per_gpu for k, g in self.procurement.ordered.items() if g)

    def contract_cover_h100e(self, usd_per_h100e: float) -> float:
        """Compute (H100e) the provider can rent out from what it has: the compute bought with money raised for
        contracts or demand, once (`ContractFunding`), the kind's `contract_capacity_share` of the rest of its fleet
        (online, on the way, on order), and its own cash at `usd_per_h100e`."""
        catalog = systems()
        online = self.h100e()
        coming = sum(g * catalog[k].h100e_per_gpu for k, g, _ in self.inbound.waiting())
        coming += sum(u * catalog[k].gpus_per_system * catalog[k].h100e_per_gpu
                      for k, u in self.procurement.on_order_units.items() if u)
        fleet = self.fleet
        online_from_orders = sum(max(0, fleet.online[k] + fleet.retired[k] - self.start_fleet[k])
                                 * catalog[k].h100e_per_gpu for k in fleet.online)
        ledgers = (self.funding, self.demand_funding)
        funded_cash_usd, funded_coming, funded_online = split_ledgers(ledgers, self._ordered_h100e(),
                                                                      online_from_orders)
        own_fleet = max(0.0, online - funded_online) + max(0.0, coming - funded_coming)
        own_cash = max(0.0, self.treasury.cash_usd() - funded_cash_usd)
        funded = self.funding.h100e + self.demand_funding.h100e
        return funded + self.terms.contract_capacity_share * own_fleet + own_cash / usd_per_h100e

    def contracted_h100e(self, t: int, excluding: str | None = None) -> float:
        """Compute (H100e) sold under contracts that are signed and not over, those of `excluding` left out."""
        return self.model.contracts.sold_h100e(self.name, t, excluding)

    def given_h100e(self, t: int, excluding: str | None = None) -> float:
        """Compute (H100e) this provider gives this month under active contracts, those of `excluding` left out."""
        return sum(h for c, h in self.model.contracts.delivered_h100e(self.name, t, self.h100e())
                   if c.lab != excluding)

    def offer(self, t: int) -> tuple[str, int, float] | None:
        """What this provider can offer a lab now: its largest cluster less the compute already sold under
        contracts (running or yet to start), at the rental price of that system; None if nothing is free."""
        k, g = self.largest_cluster()
        if k is None:
            return None
        free = int(g - self.contracted_h100e(t) / systems()[k].h100e_per_gpu)
        return (k, free, self.model.rental_usd_per_gpu_hour(k)) if free > 0 else None


class RestOfMarket(Buyer):
    """Enterprises, sovereign AI, other clouds and consumer internet firms, as one buyer with a spending plan of its
    own (sourced by part: sovereign AI, China, the rest); power is not modelled for it (many small sites)."""

    @classmethod
    def from_scenario(cls, model, name: str, spec: schema.RestOfMarket, terms: schema.KindBase) -> RestOfMarket:
        plan = CapexPlan(spec.capex_usd_bn, terms.capex_growth_after_guidance, 1.0, terms.capex_multiplier)
        return cls(model, name, "other", terms, plan, fleet_start=spec.fleet_start)


class Lab(Buyer):
    """A frontier lab: trains ever larger models on the largest cluster it can reach — its own (xAI-style) or
    one its providers run for it under contract."""

    def __init__(self, model, name: str, spec: schema.Lab, terms: schema.LabKind, plan: BudgetPlan):
        super().__init__(model, name, "lab", terms, plan, add_mw_per_year=spec.power_add_mw_per_year,
                         power_mw_start=spec.power_mw_start,
                         power_mw_under_construction=spec.power_mw_under_construction, fleet_start=spec.fleet_start)
        self.spec = spec
        self._accessible: tuple[tuple, tuple[Cluster, str | None]] = ((), (NO_CLUSTER, None))
        self._revenue_weights: dict[int, list[float]] = {}  # year -> its months' shares of the year's revenue
        self._demand: tuple[int, float] = (-1, 0.0)  # (month, compute demand in H100e)
        self.runs = FrontierRuns(model.spec.frontier, spec.frontier_flop_factor, month_index(model.start, "2024-01"),
                                 self._frontier_run_days)

    def _frontier_run_days(self, system: str, gpus: int, flop: float) -> float | None:
        """Days for a run started this month: on the software of this month's era."""
        return self.model.capability.frontier_run_days(system, gpus, flop, self.model.date_of(self.model.month))

    @classmethod
    def from_scenario(cls, model, name: str, spec: schema.Lab, terms: schema.LabKind) -> Lab:
        plan = CapexPlan(spec.capex_usd_bn, terms.capex_growth_after_guidance, spec.systems_share(terms),
                         terms.capex_multiplier)
        return cls(model, name, spec, terms, plan)

    @property
    def contracts(self) -> list[Contract]:
        return self.model.contracts.of_lab(self.name, self.model.month)

    def hosted_clusters(self, t: int) -> list[tuple[Cluster, str]]:
        """Every cluster of every provider the lab can use, with its provider: a partner host (such as Azure for
        OpenAI, Google for Google DeepMind) lends a cluster up to what its fleet holds beyond the compute it gives
        other customers under contract (it serves those from the rest of its fleet first); a contract gives at
        most the compute the provider actually delivers on it (in H100e) in any one of the provider's clusters.
        A cluster another lab is training on this month is not available (`MarketModel.training_claims`)."""
        catalog = systems()
        hosts = self.spec.hosts
        held = self.held_by_provider(t)
        claims = self.model.training_claims
        out = []
        for name in dict.fromkeys([*hosts, *held]):
            provider = self.model.buyer(name)
            free_h100e = provider.h100e() - provider.given_h100e(t, excluding=self.name) if name in hosts else 0.0
            for k, g in provider.fleet.largest_by_pace().items():  # the rest are smaller of the same pace
                claim = claims.get((name, k))
                if claim is not None and claim[0] != self.name and claim[1] > t:
                    continue  # another lab trains there
                per_gpu = catalog[k].h100e_per_gpu
                limit = free_h100e / per_gpu if name in hosts else 0.0
                limit = max(limit, held.get(name, 0.0) / per_gpu)
                out.append((Cluster(k, int(max(0.0, min(g, limit)))), name))
        return out

    def _reach(self) -> tuple[Cluster, str | None]:
        """The most capable cluster the lab can train on and whose it is (None: its own)."""
        t = self.model.month
        contracts = self.model.contracts
        reachable = dict.fromkeys([*self.spec.hosts, *(c.provider for c in contracts.of_lab(self.name, t))])
        key = (t, len(contracts), self.fleet.placements, self.model.claims_version,
               tuple((self.model.buyer(name).fleet.placements, self.model.buyer(name).h100e()) for name in reachable))
        if self._accessible[0] != key:
            own = [(Cluster(k, g), None) for k, g in self.fleet.largest_by_pace().items()]
            options = [*own, *self.hosted_clusters(t)]
            best = best_cluster(self.model, [c for c, _ in options])
            owner = next((o for c, o in options if c == best), None)
            self._accessible = (key, (best, owner))
        return self._accessible[1]

    def accessible_cluster(self) -> Cluster:
        """The most capable cluster the lab can train on: its own or one a provider runs for it."""
        return self._reach()[0]

    def train(self) -> None:
        """Finish a run that is due; start the next one on the most capable cluster the lab can reach."""
        t = self.model.month
        finished = self.runs.finish_due(t)
        if finished is not None:
            self.model.add_event_now(self.name, "training_run_finished", "", 0, f"{finished:.2e} FLOP")
        if self.runs.running:
            return
        (k, g), owner = self._reach()
        if k is None:
            return
        run = self.runs.start(t, k, g)
        if run is not None and owner is not None:  # the provider's cluster is this lab's until the run ends
            self.model.claim_cluster(owner, k, self.name, self.runs.run_end_month)
        if run is not None:
            self.model.add_event_now(self.name, "training_run_started", k, g,
                                     f"{run.flop:.2e} FLOP, {run.days:.0f} days")

    def revenue_usd(self, year: int) -> float:
        """The lab's revenue in a year (by year from the scenario, then growing); 0 for a lab without revenue."""
        if not self.spec.revenue_usd_bn:
            return 0.0
        return schema.by_year(self.spec.revenue_usd_bn, year, self.terms.revenue_growth_after) * 1e9

    def revenue_rate_usd(self, t: int) -> float:
        """The lab's annualised revenue in month t: its yearly revenue along a path that grows through the year
        (`money.within_year_weights`), as run-rates do."""
        if not self.spec.revenue_usd_bn:
            return 0.0
        year, month = self.model.year_at(t), self.model.month_of_year(t)
        if year not in self._revenue_weights:
            first = min(int(y) for y in self.spec.revenue_usd_bn)
            self._revenue_weights[year] = within_year_weights(self.revenue_usd, year, first)
        return self.revenue_usd(year) * 12 * float(self._revenue_weights[year][month - 1])

    def compute_demand_h100e(self, t: int) -> float:
        """The NVIDIA compute (H100e) the lab needs in month t: serving its revenue's tokens (`[demand]`) plus
        training the frontier trend's run within the longest run it accepts, both at its NVIDIA share of compute.
        A lab without revenue rents nothing (it owns its compute or trains on other chips)."""
        if self._demand[0] != t:
            self._demand = (t, self._compute_demand_h100e(t))
        return self._demand[1]

    def demand_h100e_at(self, t: int) -> float:
        """`compute_demand_h100e` of any month (now or ahead), as the lab's revenue path and the trend give it."""
        return self.compute_demand_h100e(t) if t == self.model.month else self._compute_demand_h100e(t)

    def _compute_demand_h100e(self, t: int) -> float:
        revenue = self.revenue_rate_usd(t)
        if not revenue:
            return 0.0
        demand = self.model.spec.demand
        serving = revenue * demand.tokens_served_per_usd / SECONDS_PER_YEAR / demand.serving_tokens_per_s_per_h100
        frontier = self.model.spec.frontier
        h100_flops = systems()["hgx_h100"].bf16_dense_tflops * 1e12  # one H100e
        training = self.runs.trend_flop(t) / (frontier.max_run_days * 86400.0 * h100_flops * demand.training_mfu)
        return (serving + training) * self.spec.nvidia_share_of_compute

    def annual_compute_budget_usd(self, year: int) -> float:
        """What the lab can spend a year on NVIDIA capacity it rents: revenue x compute spend per revenue dollar x
        the NVIDIA share of its compute (revenue by year from the scenario, then growing)."""
        return self.revenue_usd(year) * self.terms.compute_spend_per_revenue * self.spec.nvidia_share_of_compute

    def seek_capacity(self) -> None:
        """Each quarter, budget not yet committed to contracts buys capacity: the lab asks every provider for an
        offer (its largest free cluster and price) and signs with the one that gives the largest cluster in H100s for
        the money, for `contract_years`. Contracts then count as the provider's backlog (what neoclouds borrow on)."""
        t = self.model.month
        terms = self.terms
        if t % terms.contracting_interval_months:
            return
        budget = self.annual_compute_budget_usd(self.model.year)
        headroom = budget - self.model.contracts.annual_cost_usd(self.name, t)
        if headroom < terms.min_contract_usd_bn * 1e9 / terms.contract_years:
            return
        best: tuple[float, Provider, str, int, float] | None = None
        for provider in self.model.providers:
            if provider.name in self.spec.hosts:
                continue  # a partner host's clusters are open to the lab already
            offer = provider.offer(t)
            if offer is None:
                continue
            k, free, price = offer
            gpus = int(min(free, headroom / (8760.0 * price)))
            score = gpus * systems()[k].h100e_per_gpu
            if gpus > 0 and (best is None or score > best[0]):
                best = (score, provider, k, gpus, price)
        if best is None:
            return
        _, provider, k, gpus, price = best
        years = terms.contract_years
        value = gpus * 8760.0 * price * years
        self.model.sign_contract(contract_from_terms(self.name, provider.name, t, t, years, value, k, price, gpus),
                                 f"{provider.name}: ${value / 1e9:.1f}B over {years:g} years (offer)")

    def advance(self) -> None:
        super().advance()
        self.train()
        self.seek_capacity()
