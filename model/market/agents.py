"""The buyers: providers (hyperscalers, neoclouds), labs and the rest of the market.

Every buyer has a capex budget, datacenter sites with power online, construction under way, orders at NVIDIA,
systems in transit and in integration, and GPUs online. Each month it (1) accrues budget and financing, (2) finishes
and starts power builds, (3) orders the system its performance model says delivers most for its money and spare
power — or pre-orders the next generation when that is enough better and close enough — and, after NVIDIA ships,
(4) takes deliveries, integrates them and places them into sites with free power.
"""

from __future__ import annotations

import math

import mesa

from model.hardware.systems import systems
from model.market.calendar import month_index
from model.market.contracts import Contract, contract_from_terms
from model.market.sites import Batch, Build, Site
from model.scenario.schema import KindBase, NeocloudKind, by_year


def best_cluster(model, options: list[tuple[str, int]]) -> tuple[str | None, int]:
    """The (system, GPUs) option that trains the scenario's reference frontier run fastest; options on which it
    does not fit rank by H100-equivalents. (None, 0) when there is nothing."""
    biggest: dict[str, int] = {}
    for k, g in options:  # per pacing system only the biggest cluster can be the best
        if g > biggest.get(k, 0):
            biggest[k] = g
    options = list(biggest.items())
    if not options:
        return None, 0
    def rank(option: tuple[str, int]) -> tuple[bool, float, float]:
        k, g = option
        days = model.capability.reference_run_days(k, g)
        return days is not None, -(days or 0.0), g * systems()[k].h100e_per_gpu

    return max(options, key=rank)


class Buyer(mesa.Agent):
    """Anything that buys, powers and runs NVIDIA systems."""

    def __init__(self, model, name: str, kind: str, p, kp: KindBase):
        super().__init__(model)
        self.name, self.kind, self.p, self.kp = name, kind, p, kp
        keys = model.system_keys
        self.pue = kp.pue
        self.sites: list[Site] = []
        self.open_sites: list[Site] = []  # sites with free power (placement looks only here)
        self.pipeline: list[Build] = []
        self.in_transit: list[tuple[str, int, int]] = []  # (system, gpus, arrival month)
        self.integrating: list[tuple[str, int, int]] = []  # (system, gpus, ready month)
        self.delivered = dict.fromkeys(keys, 0)  # GPUs
        self.ordered = dict.fromkeys(keys, 0)  # GPUs ordered
        self.preordered = dict.fromkeys(keys, 0)  # GPUs ordered before the system shipped
        self.retired = dict.fromkeys(keys, 0)
        self.start_fleet = dict.fromkeys(keys, 0)
        self.budget_cum_usd = 0.0
        self.budget_lapsed_usd = 0.0
        self.debt_usd = 0.0  # borrowed against contract backlog (neoclouds); once raised, it stays raised
        self.contract_funding_usd = 0.0  # customers' money for contracts delivered on schedule
        self.committed_usd = 0.0  # value of every order placed
        self.capex_usd = 0.0  # paid on shipment
        self.build_started_mw_by_year: dict[int, float] = {}
        self.contract_allowance_mw_by_year: dict[int, float] = {}
        self.contracts_as_provider: list[Contract] = []
        self.firsts: set[tuple[str, str]] = set()
        self.value_cache: dict[str, float] = {}
        self.placements = 0  # changes whenever GPUs go online or retire (keys the cluster cache)
        self._largest_cache: tuple[tuple[int, int], tuple[str | None, int]] = ((-1, -1), (None, 0))
        self._clusters_cache: tuple[tuple[int, int], list[tuple[str, int]]] = ((-1, -1), [])
        self._budget_by_year: dict[int, float] = {}
        self._start_state(p, kp)

    def _start_state(self, p, kp: KindBase) -> None:
        """Power, construction and fleet at the start. Sites that exist at the start are of the size campuses had
        then (`start_site_mw`); power under construction arrives evenly over one lead time. The starting fleet is
        online from the start."""
        start_site = kp.start_site_mw
        mw = getattr(p, "power_mw_start", 0.0)
        while mw > 1e-9:
            size = min(mw, start_site)
            self._new_site(size)
            mw -= size
        building = getattr(p, "power_mw_under_construction", 0.0)
        lead = max(1, round(kp.construction_lead_months * self.model.spec.power_lead_time_multiplier))
        for month in range(lead):
            self.pipeline.append(Build(building / lead, -1, month))
        for k, gpus in p.fleet_start.items():
            self.start_fleet[k] += int(gpus)
            self.integrating.append((k, int(gpus), 0))
        self.place_ready(month=0, online_month=-kp.fleet_start_age_months, events=False)

    def skip_firsts(self, already_deployed: set[str]) -> None:
        """The race is about generations that arrive during the run: systems some buyer already runs at the start
        raise no first_delivery, first_online or first_cluster_at_scale events for anyone."""
        for k in already_deployed:
            self.firsts.update({("first_delivery", k), ("first_online", k), ("first_cluster_at_scale", k)})

    # -- money --------------------------------------------------------------------------------------------------
    def annual_capex_usd(self, year: int) -> float:
        """Capex by calendar year (actuals and guidance), growing after the last year given."""
        return by_year(self.p.capex_usd_bn, year, self.kp.capex_growth_after_guidance) * 1e9

    def monthly_budget_usd(self, year: int) -> float:
        """The month's share of capex that goes to NVIDIA systems and is funded by the buyer itself (for a
        neocloud, the equity-funded part; the rest it borrows against contracts, see `accrue`)."""
        if year not in self._budget_by_year:
            share = self.p.systems_share(self.kp)
            own = self.kp.equity_funded_share if isinstance(self.kp, NeocloudKind) else 1.0
            self._budget_by_year[year] = self.annual_capex_usd(year) * share * own * self.kp.capex_multiplier / 12
        return self._budget_by_year[year]

    def monthly_spending_usd(self, year: int) -> float:
        """The month's NVIDIA-system spending in the capex plan, equity- and debt-funded alike."""
        share = self.p.systems_share(self.kp)
        return self.annual_capex_usd(year) * share * self.kp.capex_multiplier / 12

    def accrue(self, year: int) -> None:
        """Add the month's budget. Capex that could not be placed does not pile up without end: uncommitted budget
        beyond `budget_carry_months` of spending lapses (guidance is cut, as CoreWeave's was in 2025)."""
        monthly = self.monthly_budget_usd(year)
        self.budget_cum_usd += monthly
        carry = self.kp.budget_carry_months * monthly
        excess = self.budget_cum_usd + self.financing_usd - self.committed_usd - carry
        excess = min(excess, self.budget_cum_usd)
        if excess > 0:
            self.budget_cum_usd -= excess
            self.budget_lapsed_usd += excess
        multiple = self.kp.debt_multiple_of_backlog if isinstance(self.kp, NeocloudKind) else 0.0
        if multiple:
            t = self.model.time_index
            closed = t - self.kp.financing_lag_months  # debt against a contract closes months after signing
            backlog = sum(c.remaining_value_usd(t) for c in self.contracts_as_provider if c.signed_month <= closed)
            self.debt_usd = max(self.debt_usd, multiple * backlog)

    @property
    def financing_usd(self) -> float:
        """Money beyond the capex budget: debt plus contract funding."""
        return self.debt_usd + self.contract_funding_usd

    def cash_usd(self) -> float:
        return self.budget_cum_usd + self.financing_usd - self.committed_usd

    # -- power --------------------------------------------------------------------------------------------------
    def _add_power(self, mw: float) -> None:
        """New power tops up the newest campus to the largest campus buildable now, then opens new sites."""
        max_site = min(self.kp.max_site_mw, self.model.max_campus_mw())
        if self.sites and self.sites[-1].mw < max_site:
            top = min(mw, max_site - self.sites[-1].mw)
            self.sites[-1].mw += top
            if self.sites[-1] not in self.open_sites:
                self.open_sites.append(self.sites[-1])
            mw -= top
        while mw > 1e-9:
            size = min(mw, max_site)
            self._new_site(size)
            mw -= size

    def _new_site(self, mw: float) -> None:
        site = Site(f"{self.name}-{len(self.sites) + 1}", mw)
        self.sites.append(site)
        self.open_sites.append(site)

    def power_online_mw(self) -> float:
        return sum(s.mw for s in self.sites)

    def power_used_mw(self) -> float:
        return sum(s.used_mw for s in self.sites)

    def _facility_kw_per_gpu(self, k: str) -> float:
        return systems()[k].system_power_kw_per_gpu * self.pue

    def power_committed_mw(self) -> float:
        """Facility MW for everything online, integrating, in transit or on order."""
        waiting = sum(g * self._facility_kw_per_gpu(k) for k, g, _ in self.integrating + self.in_transit)
        on_order = 0.0
        for k, orders in self.model.supplier.orders.items():
            order = orders.get(self.name)
            if order is not None:
                on_order += order.units_outstanding * systems()[k].system_power_kw * self.pue
        return self.power_used_mw() + (waiting + on_order) / 1000.0

    def power_by_mw(self, month: float) -> float:
        """Facility MW online by `month`: sites now plus builds ready by then."""
        return self.power_online_mw() + sum(b.mw for b in self.pipeline if b.ready_month <= month)

    def lead_months(self) -> tuple[int, int]:
        slow = self.model.spec.power_lead_time_multiplier
        return (round(self.kp.construction_lead_months * slow),
                round(self.kp.construction_delay_max_months * slow))

    def build_allowance_mw(self, year: int) -> float:
        """MW of construction the buyer can start in `year`: a number, or a table by year (the last year's value
        carries forward)."""
        extra = self.contract_allowance_mw_by_year.get(year, 0.0)
        return by_year(self.p.power_add_mw_per_year, year) + extra

    def fund_contract(self, contract: Contract) -> None:
        """A contract delivered on schedule: the customer's commitment funds the systems it needs (like project
        finance or prepayment, it does not lapse) and the grid connections for them, spread over the years until
        the contract starts."""
        s = systems()[contract.system]
        t = self.model.time_index
        price_per_gpu = self.model.supplier.price_usd(contract.system, t) / s.gpus_per_system
        self.contract_funding_usd += contract.gpus * price_per_gpu
        mw = contract.gpus * s.system_power_kw_per_gpu * self.pue / 1000.0
        years = range(self.model.year_at(t), self.model.year_at(max(contract.start_month, t)) + 1)
        for year in years:
            self.contract_allowance_mw_by_year[year] = self.contract_allowance_mw_by_year.get(year, 0.0) + mw / len(
                years)

    def finish_builds(self, t: int) -> None:
        for build in [b for b in self.pipeline if b.ready_month <= t]:
            self._add_power(build.mw)
        self.pipeline = [b for b in self.pipeline if b.ready_month > t]

    def plan_power(self, t: int, year: int) -> None:
        """Start construction when the power this buyer will need by the time a build started now is surely done
        (lead time, worst delay and a buffer) exceeds what it has or is building. Starts per year are bounded by the
        grid connections it can get (`power_add_mw_per_year`)."""
        if self.kp.power_unconstrained:
            return
        lead, delay_max = self.lead_months()
        usd_per_mw = self.model.best_usd_per_facility_mw(t, self.pue)
        horizon = lead + delay_max + self.kp.power_buffer_months
        spend_ahead = self.cash_usd() + sum(self.monthly_budget_usd(self.model.year_at(t + i))
                                            for i in range(1, horizon + 1))
        need = self.power_committed_mw() + spend_ahead / usd_per_mw
        gap = need - self.power_online_mw() - sum(b.mw for b in self.pipeline)
        allowance = self.build_allowance_mw(year) - self.build_started_mw_by_year.get(year, 0.0)
        mw = min(gap, allowance)
        if mw < self.kp.min_build_mw:
            return
        delay = int(self.model.rng.integers(0, delay_max + 1))
        self.pipeline.append(Build(mw, t, t + lead + delay))
        self.build_started_mw_by_year[year] = self.build_started_mw_by_year.get(year, 0.0) + mw

    # -- procurement --------------------------------------------------------------------------------------------
    def value_per_gpu(self, k: str) -> float:
        """What one GPU of system k delivers, in H100s, on the buyer's mix of training and serving."""
        if k not in self.value_cache:
            self.value_cache[k] = self.model.capability.value_per_gpu(k, self.kp.training_weight)
        return self.value_cache[k]

    def score(self, k: str, t: int) -> float:
        """H100-value per dollar of system k ordered now, discounted by the months until it would arrive."""
        sup = self.model.supplier
        wait = sup.expected_wait_months(k, t)
        return self.value_per_gpu(k) / sup.price_usd(k, t) * systems()[k].gpus_per_system * math.exp(
            -wait / self.kp.wait_tau_months)

    def spare_mw(self, k: str, t: int) -> float:
        """Facility MW free when an order of system k placed now would come online."""
        if self.kp.power_unconstrained:
            return math.inf
        ready = t + self.model.supplier.expected_wait_months(k, t) + self.kp.integration_lag_months
        return max(0.0, self.power_by_mw(ready) - self.power_committed_mw())

    def procure(self, t: int) -> None:
        """Spend the cash on hand across the systems on offer, in proportion to score^sharpness (a near-argmax that
        still spreads orders when systems are close), each order bounded by the power free when it would arrive.
        Systems not yet shipping can be pre-ordered within the buyer's lookahead."""
        cash = self.cash_usd()
        if cash <= 0:
            return
        sup = self.model.supplier
        look = self.kp.preorder_lookahead_months
        scores = {k: self.score(k, t) for k in self.model.system_keys if sup.orderable(k, t, look)}
        if not scores:
            return
        top = max(scores.values())
        sharp = self.model.spec.choice_sharpness
        weights = {k: (v / top) ** sharp for k, v in scores.items() if v > 0}
        weights = {k: w for k, w in weights.items() if w >= self.model.spec.choice_min_weight}
        total = sum(weights.values())
        best_now = max((k for k in weights if sup.shipping(k, t)), key=weights.get, default=None)
        for k, w in sorted(weights.items(), key=lambda kw: -kw[1]):
            s = systems()[k]
            price = sup.price_usd(k, t)
            units = int(cash * w / total // price)
            spare_mw = self.spare_mw(k, t)
            if spare_mw != math.inf:
                units = min(units, int(spare_mw * 1000.0 // (s.system_power_kw * self.pue)))
            if units <= 0:
                continue
            sup.place_order(self, k, units, price)
            self.committed_usd += units * price
            self.ordered[k] += units * s.gpus_per_system
            if not sup.shipping(k, t):
                self.preordered[k] += units * s.gpus_per_system
                if ("preorder", k) not in self.firsts and best_now and w > weights[best_now]:
                    self.firsts.add(("preorder", k))
                    self.model.add_event_now(self.name, "preorder", k, units * s.gpus_per_system,
                                             f"pre-orders {k} ahead of {best_now}, which ships now")

    # -- deliveries and deployment -----------------------------------------------------------------------------
    def receive(self, k: str, units: int, paid_usd: float, t: int) -> None:
        """NVIDIA shipped `units` systems: pay, and they arrive after the transit time."""
        self.capex_usd += paid_usd
        gpus = units * systems()[k].gpus_per_system
        self.in_transit.append((k, gpus, t + self.model.spec.transit_months))

    def take_deliveries(self, t: int) -> None:
        arrived = [x for x in self.in_transit if x[2] <= t]
        if not arrived:
            return
        self.in_transit = [x for x in self.in_transit if x[2] > t]
        lag = self.kp.integration_lag_months
        for k, gpus, _ in arrived:
            self.delivered[k] += gpus
            self._first("first_delivery", k, gpus)
            if self.integrating and self.integrating[-1][0] == k and self.integrating[-1][2] == t + lag:
                self.integrating[-1] = (k, self.integrating[-1][1] + gpus, t + lag)  # one batch per system and month
            else:
                self.integrating.append((k, gpus, t + lag))

    def place_ready(self, month: int, online_month: int | None = None, events: bool = True) -> None:
        """Integrated GPUs go online in sites with free power: first where the same system already runs (to grow
        one training cluster), then the site with most free power. What does not fit waits for power."""
        online_month = month if online_month is None else online_month
        if not self.open_sites and not self.kp.power_unconstrained:
            return  # nowhere to put anything: everything waits for power
        waiting = []
        for k, gpus, ready in self.integrating:
            if ready > month:
                waiting.append((k, gpus, ready))
                continue
            left = self._place(k, gpus, online_month)
            placed = gpus - left
            if placed and events:
                self._first("first_online", k, placed)
            if left:
                waiting.append((k, left, ready))
        self.integrating = waiting

    def _place(self, k: str, gpus: int, online_month: int) -> int:
        """Place up to `gpus` GPUs of system k; return how many found no power."""
        s = systems()[k]
        kw = self._facility_kw_per_gpu(k)
        unit_mw = kw * s.gpus_per_system / 1000.0
        fabric = self.model.spec.fabric_max_gpus
        arch = s.architecture
        while gpus > 0:
            fits = [site for site in self.open_sites if site.free_mw() >= unit_mw]
            if not fits:
                if not self.kp.power_unconstrained:
                    break
                self._add_power(gpus * kw / 1000.0)  # the rest of the market builds what it needs
                continue
            site = max(fits, key=lambda x: (min(x.gpus_of_architecture(arch), fabric), x.free_mw()))
            n = min(int(site.free_mw() // unit_mw) * s.gpus_per_system, gpus)
            site.add(Batch(k, n, online_month, kw))
            self.placements += 1
            gpus -= n
        smallest_unit_mw = self.model.smallest_system_facility_mw(self.pue)
        self.open_sites = [site for site in self.open_sites if site.free_mw() >= smallest_unit_mw]
        return gpus

    def retire(self, t: int) -> None:
        cutoff = t - round(self.kp.gpu_lifetime_years * 12)
        for site in self.sites:
            retired = site.retire_older_than(cutoff)
            self.placements += len(retired)
            for b in retired:
                self.retired[b.system] += b.gpus
            if retired and site not in self.open_sites:
                self.open_sites.append(site)

    def check_at_scale(self) -> None:
        threshold = self.model.spec.at_scale_gpus
        for k, g in self.system_clusters().items():
            if g >= threshold:
                self._first("first_cluster_at_scale", k, g)

    def _first(self, event: str, k: str, gpus: int) -> None:
        if (event, k) not in self.firsts:
            self.firsts.add((event, k))
            self.model.add_event_now(self.name, event, k, gpus)

    # -- what the tables report ---------------------------------------------------------------------------------
    def gpus_online(self) -> dict[str, int]:
        out = dict.fromkeys(self.model.system_keys, 0)
        for site in self.sites:
            for k, g in site.gpus_by_system.items():
                out[k] += g
        return out

    def h100e(self) -> float:
        catalog = systems()
        return sum(g * catalog[k].h100e_per_gpu for k, g in self.gpus_online().items())

    def system_clusters(self) -> dict[str, int]:
        """Largest number of GPUs of each system in one site, bounded by the scale-out fabric (for 'at scale')."""
        fabric = self.model.spec.fabric_max_gpus
        out: dict[str, int] = {}
        for site in self.sites:
            for k, g in site.gpus_by_system.items():
                if g > out.get(k, 0):
                    out[k] = min(g, fabric)
        return out

    def clusters(self) -> list[tuple[str, int]]:
        """Training clusters: the GPUs of one architecture (Hopper, Blackwell, ...) in one site, bounded by the
        fabric, each paced by its slowest system on the reference training job (a synchronous job runs at the pace
        of its slowest GPUs)."""
        key = (self.model.time_index, self.placements)
        if self._clusters_cache[0] == key:
            return self._clusters_cache[1]
        fabric = self.model.spec.fabric_max_gpus
        training_ratio = self.model.capability.training_ratio
        catalog = systems()
        out = []
        for site in self.sites:
            by_arch: dict[str, list[str]] = {}
            for k, g in site.gpus_by_system.items():
                if g > 0:
                    by_arch.setdefault(catalog[k].architecture, []).append(k)
            for members in by_arch.values():
                pace = min(members, key=training_ratio)
                out.append((pace, min(sum(site.gpus_by_system[k] for k in members), fabric)))
        self._clusters_cache = (key, out)
        return out

    def largest_cluster(self) -> tuple[str | None, int]:
        """(system, GPUs) of this buyer's most capable training cluster: the one that trains the scenario's
        reference frontier run fastest (by the performance model), else the most H100-equivalents."""
        key = (self.model.time_index, self.placements)
        if self._largest_cache[0] != key:
            self._largest_cache = (key, best_cluster(self.model, self.clusters()))
        return self._largest_cache[1]

    def accessible_cluster(self) -> tuple[str | None, int]:
        return self.largest_cluster()

    # -- the monthly step ---------------------------------------------------------------------------------------
    def step(self) -> None:
        t, year = self.model.time_index, self.model.year
        self.accrue(year)
        self.finish_builds(t)
        self.procure(t)
        self.plan_power(t, year)

    def advance(self) -> None:
        """After NVIDIA ships: deliveries, integration, placement, retirement, at-scale events."""
        t = self.model.time_index
        self.retire(t)
        self.take_deliveries(t)
        self.place_ready(t)
        self.check_at_scale()


class Provider(Buyer):
    """A hyperscaler or neocloud: sells capacity to labs under contracts and to the market by the hour."""

    def contracted_h100e(self, t: int, excluding: str | None = None) -> float:
        """Compute (H100e) sold under contracts that are signed and not over, those of `excluding` left out."""
        return sum(c.h100e for c in self.contracts_as_provider if c.end_month > t and c.lab != excluding)

    def offer(self, t: int) -> tuple[str, int, float] | None:
        """What this provider can offer a lab now: its largest cluster less the compute already sold under
        contracts (running or yet to start), at the rental price of that system; None if nothing is free."""
        k, g = self.largest_cluster()
        if k is None:
            return None
        free = int(g - self.contracted_h100e(t) / systems()[k].h100e_per_gpu)
        return (k, free, self.model.rental_usd_per_gpu_hour(k)) if free > 0 else None


class RestOfMarket(Buyer):
    """Enterprises, sovereign AI, other clouds and consumer internet firms, as one buyer whose NVIDIA spend is a
    sourced share of the total; power is not modelled for it (many small sites)."""

    def monthly_budget_usd(self, year: int) -> float:
        if year not in self._budget_by_year:
            share = by_year(self.p.share_of_nvidia_demand, year)
            named = self.model.named_monthly_budget_usd(year)
            self._budget_by_year[year] = named * share / (1 - share) * self.kp.capex_multiplier
        return self._budget_by_year[year]


class Lab(Buyer):
    """A frontier lab: trains ever larger models on the largest cluster it can reach — its own (xAI-style) or
    one its providers run for it under contract."""

    def __init__(self, model, name: str, p, kp):
        super().__init__(model, name, "lab", p, kp)
        self.contracts: list[Contract] = []
        self.run_end_month: int | None = None
        self.last_run_flop = 0.0
        self.flop_factor = p.frontier_flop_factor

    def hosted_clusters(self, t: int) -> list[tuple[str, int]]:
        """Every cluster of every provider the lab can use: a partner host (such as Azure for OpenAI) lends its
        clusters less the compute other labs hold there under contract; a contract gives at most the compute it
        covers (in H100e) in any one of the provider's clusters."""
        catalog = systems()
        hosts = self.p.hosts
        own: dict[str, float] = {}
        for c in self.contracts:
            if c.active(t):
                own[c.provider] = own.get(c.provider, 0.0) + c.h100e
        out = []
        for name in dict.fromkeys([*hosts, *own]):
            provider = self.model.buyers[name]
            others = provider.contracted_h100e(t, excluding=self.name) if name in hosts else 0.0
            for k, g in provider.clusters():
                per_gpu = catalog[k].h100e_per_gpu
                limit = g - others / per_gpu if name in hosts else own[name] / per_gpu
                out.append((k, int(max(0.0, min(g, limit)))))
        return out

    def accessible_cluster(self) -> tuple[str | None, int]:
        """The most capable cluster the lab can train on: its own or one a provider runs for it."""
        return best_cluster(self.model, [*self.clusters(), *self.hosted_clusters(self.model.time_index)])

    def train(self) -> None:
        """Finish a run that is due; start the next one on the most capable cluster the lab can reach. A run
        follows the frontier trend (`frontier.flop_2024` x this lab's factor, growing `growth_per_year`), or, when
        the cluster cannot do that within `max_run_days`, the largest run it can; a run not `min_run_growth`
        times the last one is not worth starting."""
        t = self.model.time_index
        params = self.model.spec.frontier
        if self.run_end_month is not None and t >= self.run_end_month:
            self.model.add_event_now(self.name, "training_run_finished", "", 0, f"{self.last_run_flop:.2e} FLOP")
            self.run_end_month = None
        if self.run_end_month is not None:
            return
        k, g = self.accessible_cluster()
        if k is None:
            return
        limit = params.max_run_days
        since_2024 = t + month_index(self.model.start, "2024-01")  # the trend is anchored in January 2024
        flop = params.flop_2024 * self.flop_factor * params.growth_per_year ** (since_2024 / 12)
        days = self.model.capability.frontier_run_days(k, g, flop)
        if days is not None and days > limit:  # the trend does not fit: the largest run that does
            flop *= limit / days
            days = self.model.capability.frontier_run_days(k, g, flop)
        # (5% over the limit is within the rounding of the FLOP grid the performance model is asked on)
        if days is None or days > limit * 1.05 or flop < params.min_run_growth * self.last_run_flop:
            return
        self.last_run_flop = flop
        self.run_end_month = t + max(1, round(days / 30.4))
        self.model.add_event_now(self.name, "training_run_started", k, g, f"{flop:.2e} FLOP, {days:.0f} days")

    def annual_compute_budget_usd(self, year: int) -> float:
        """What the lab can spend a year on NVIDIA capacity it rents: revenue x compute spend per revenue dollar x
        the NVIDIA share of its compute (revenue by year from the scenario, then growing)."""
        revenue = by_year(self.p.revenue_usd_bn, year, self.kp.revenue_growth_after)
        return revenue * 1e9 * self.kp.compute_spend_per_revenue * self.p.nvidia_share_of_compute

    def seek_capacity(self) -> None:
        """Each quarter, budget not yet committed to contracts buys capacity: the lab asks every provider for an
        offer (its largest free cluster and price) and signs with the one that gives the largest cluster in H100s for
        the money, for `contract_years`. Contracts then count as the provider's backlog (what neoclouds borrow on)."""
        t = self.model.time_index
        if t % self.kp.contracting_interval_months:
            return
        budget = self.annual_compute_budget_usd(self.model.year)
        headroom = budget - sum(c.annual_cost_usd for c in self.contracts if c.end_month > t)
        if headroom < self.kp.min_contract_usd_bn * 1e9 / self.kp.contract_years:
            return
        best: tuple[float, Provider, str, int, float] | None = None
        hosts = self.p.hosts
        for provider in self.model.providers:
            if provider.name in hosts:
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
        years = self.kp.contract_years
        value = gpus * 8760.0 * price * years
        self.model.sign_contract(contract_from_terms(self.name, provider.name, t, t, years, value, k, price, gpus),
                                 f"{provider.name}: ${value / 1e9:.1f}B over {years:g} years (offer)")

    def advance(self) -> None:
        super().advance()
        self.train()
        self.seek_capacity()
