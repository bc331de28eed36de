"""MarketModel: the Mesa 3.5 model of the race, one step per calendar month.

Time is Mesa's: the step that simulates month t (counted from the scenario's `start`) runs at `model.time` t + 1,
and `model.steps` counts the months simulated. Order within a month: contracts announced for the month are signed
(scheduled events, at time t + 0.5); every buyer, in a seeded random order, accrues budget, finishes and plans power
and orders; NVIDIA ships; every buyer, again in a seeded random order, retires old GPUs, takes deliveries and places
them into sites; labs start and finish training runs and sign contracts; the month's rows are collected.
"""

from __future__ import annotations

import math

import pandas as pd

from model.capability.build import capability_table
from model.capability.table import CapabilityTable
from model.hardware.systems import SYSTEM_KEYS, VENDORS, systems
from model.market.agents import Buyer, Lab, Provider, RestOfMarket
from model.market.calendar import date_of, month_index, year_of
from model.market.contracts import HOURS_PER_YEAR, Contract, ContractBook, contract_from_terms
from model.market.events import EVENT_COLUMNS, EventLog
from model.market.foundry import Foundry
from model.market.power import PowerOutlook
from model.market.pricing import rental_usd_per_gpu_hour
from model.market.supplier import PLAN_AHEAD_MONTHS, Supplier
from model.market.tables import AGENT_ROW_NAME, agent_columns, agent_row, agent_rows_frame, market_reporters
from model.scenario.mesa_core import DataCollector, Model
from model.scenario.mesa_scenario import MarketScenario
from model.scenario.schema import Contract as AnnouncedContract
from model.scenario.schema import Scenario

__all__ = ["EVENT_COLUMNS", "MarketModel"]


class MarketModel(Model):
    """The AI infrastructure market, one step per calendar month, built from a `MarketScenario`."""

    def __init__(self, scenario: MarketScenario | None = None, capability: CapabilityTable | None = None):
        """`capability`: the scenario's capability table (what the performance model says about each system); by
        default the one `model.capability.build` keeps for this scenario in the process."""
        scenario = scenario if scenario is not None else MarketScenario(rng=0)
        super().__init__(scenario=scenario)
        spec = scenario.resolved()
        self.spec: Scenario = spec
        self.capability = capability if capability is not None else capability_table(spec)
        self.start: str = spec.start
        self.end: str = spec.end
        self.n_months = month_index(self.end, self.start) + 1
        self._years = [year_of(self.start, t) for t in range(self.n_months + 60)]  # plans look up to 5 years ahead
        self.system_keys = tuple(k for k in SYSTEM_KEYS if k in systems())  # every vendor's
        self.power_outlook = PowerOutlook(spec.power_outlook)
        self.event_log = EventLog()
        self.contracts = ContractBook()
        sup = spec.supplier
        self.foundry = Foundry(sup, VENDORS, self.start, self.n_months + PLAN_AHEAD_MONTHS)
        # NVIDIA draws from the model's generator (as when it was the only vendor); the others from their own,
        # spawned from it (seeded alike, and no draw of theirs moves NVIDIA's or the buyers'). Its strategic ties,
        # its share of a rack's price and its networking are NVIDIA's own.
        other_rngs = self.rng.spawn(len(VENDORS))
        self.suppliers = {v: Supplier(self, sup, self.foundry, v, allocation=spec.allocation if v == "NVIDIA" else None,
                                      share_of_price=sup.nvidia_share_of_system_price if v == "NVIDIA" else None,
                                      attach_revenue_fraction=sup.attach_revenue_fraction if v == "NVIDIA" else 0.0,
                                      owner=sup.owners.get(v),
                                      rng=None if v == "NVIDIA" else other_rngs[i])
                          for i, v in enumerate(VENDORS)}
        self.supplier = self.suppliers["NVIDIA"]
        self._supplier_of = {k: s for s in self.suppliers.values() for k in s.keys}
        kinds = spec.kinds
        # buyers under export controls (a market such as China) may order only the systems made for them
        self.export_market_of = {name: p.export_market for name, p in spec.other.items()}
        for kind in ("hyperscaler", "neocloud"):
            for name, p in getattr(spec, kind).items():
                Provider.from_scenario(self, name, kind, p, getattr(kinds, kind))
        for name, p in spec.other.items():
            rest = RestOfMarket.from_scenario(self, name, p, kinds.other)
            # its budget is sourced as NVIDIA spending (sovereign, China, enterprise), so it buys NVIDIA's systems
            rest.procurement.candidates = tuple(k for k in self.supplier.keys if self.supplier.may_order(name, k))
        for name, p in spec.lab.items():
            Lab.from_scenario(self, name, p, kinds.lab)
        self.buyers = self.agents.select(agent_type=Buyer)  # in creation order; shuffled each month
        self._by_name = {b.name: b for b in self.buyers}
        deployed = {k for b in self.buyers for k, g in b.start_fleet.items() if g > 0}
        for buyer in self.buyers:
            buyer.milestones.skip(deployed)
        self._announced: dict[int, list[AnnouncedContract]] = {}
        for c in sorted(spec.contracts, key=lambda c: c.date):
            self._announced.setdefault(max(0, month_index(c.date, self.start)), []).append(c)
        for month in self._announced:  # signed as the month opens (earlier ones: backlog at the start)
            self.schedule_event(self._sign_announced, at=month + 0.5)
        self._utilisation: tuple[tuple, float] = ((), 0.0)
        # (provider, pacing system) -> (lab, month its run ends): a provider's cluster trains one lab's run at a time
        self.training_claims: dict[tuple[str, str], tuple[str, int]] = {}
        self.claims_version = 0
        self._spoken_for: tuple[tuple[int, int], float] = ((-1, -1), 0.0)  # (month, contracts) -> H100e
        self._spoken_ahead: tuple[tuple[int, int, int], float] = ((-1, -1, -1), 0.0)  # (month, at, contracts)
        self._months_recorded = 0
        self.datacollector = DataCollector(model_reporters=market_reporters(self),
                                           agenttype_reporters={Buyer: {AGENT_ROW_NAME: agent_row}})

    @classmethod
    def from_params(cls, params: Scenario | dict, seed: int = 0,
                    capability: CapabilityTable | None = None) -> MarketModel:
        """A model from a validated scenario (or a resolved parameter tree, validated here) and a seed."""
        return cls(MarketScenario(params=params, rng=seed), capability)

    # -- time ---------------------------------------------------------------------------------------------------
    @property
    def month(self) -> int:
        """The month being simulated, counted from `start` (-1 before the first step)."""
        return math.ceil(self.time) - 1

    @property
    def year(self) -> int:
        return year_of(self.start, self.month)

    def year_at(self, t: int) -> int:
        """Calendar year of month t (any t, also beyond the run)."""
        if 0 <= t < len(self._years):
            return self._years[t]
        return year_of(self.start, t)

    def month_of_year(self, t: int) -> int:
        """Calendar month (1-12) of month t (any t)."""
        return int(date_of(self.start, t)[5:7])

    def date_of(self, t: int) -> str:
        return date_of(self.start, t)

    @property
    def months_recorded(self) -> int:
        """Months whose rows are all in the tables: the app may read the model from another thread while it steps,
        so a month counts once its collection is complete (not yet when Mesa counts the step)."""
        return self._months_recorded

    @property
    def time_index(self) -> int:
        """`months_recorded` (the name the app reads)."""
        return self.months_recorded

    @property
    def current_date(self) -> str:
        """First day of the month after the last one recorded (after the last step: the month after the end)."""
        return self.date_of(self.months_recorded)

    # -- agents and events --------------------------------------------------------------------------------------
    def buyer(self, name: str) -> Buyer:
        return self._by_name[name]

    @property
    def providers(self):
        """Hyperscalers and neoclouds, in scenario order."""
        return self.agents_by_type[Provider]

    def add_event(self, date: str, agent: str, event: str, system: str | None, gpus: int, detail: str = "") -> None:
        self.event_log.add(date, agent, event, system, gpus, detail)

    def add_event_now(self, agent: str, event: str, system: str | None, gpus: int, detail: str = "") -> None:
        self.add_event(self.date_of(self.month), agent, event, system, gpus, detail)

    # -- market-wide quantities agents consult -------------------------------------------------------------------
    def supplier_of(self, k: str) -> Supplier:
        """The vendor that makes system k."""
        return self._supplier_of[k]

    def newest_shipping(self, t: int) -> str:
        """NVIDIA's newest system shipping in month t (what contracts are priced in and power builds are sized for);
        before any ships (a roadmap delayed past the start), the first to ship."""
        sup = self.supplier
        shipping = [k for k in sup.keys if sup.shipping(k, t)]
        if not shipping:
            live = [k for k in sup.keys if sup.shipping(k, max(t, sup.first[k]))]
            return min(live, key=lambda k: sup.first[k])
        return max(shipping, key=lambda k: sup.first[k])

    def best_usd_per_facility_mw(self, t: int, pue: float) -> float:
        """What a MW of facility power costs to fill with the newest shipping system (sizes power builds)."""
        k = self.newest_shipping(t)
        return self.supplier.price_usd(k, t) / (systems()[k].system_power_kw * pue / 1000.0)

    def rental_utilisation(self) -> float:
        """Share of the compute providers can rent out (each provider's H100e online x its kind's
        `contract_capacity_share`) that is spoken for this month: held under active contracts, plus what labs
        need (`Lab.compute_demand_h100e`) beyond what their contracts give them. Above 1 when demand outruns it."""
        t = self.month
        rentable_by_provider = tuple(p.h100e() for p in self.providers)  # changes as GPUs go online and retire
        key = (t, len(self.contracts), rentable_by_provider)
        if self._utilisation[0] != key:
            if self._spoken_for[0] != key[:2]:  # only new months and new contracts change what is spoken for
                held = self.contracts.active_h100e(t)
                uncovered = 0.0
                for lab in self.agents_by_type.get(Lab, ()):
                    mine = sum(self.contracts.held_h100e_by_provider(lab.name, t).values())
                    uncovered += max(0.0, lab.compute_demand_h100e(t) - mine)
                self._spoken_for = (key[:2], held + uncovered)
            rentable = sum(h * p.terms.contract_capacity_share for h, p in zip(rentable_by_provider, self.providers,
                                                                                strict=True))
            self._utilisation = (key, self._spoken_for[1] / rentable if rentable else 1.0)
        return self._utilisation[1]

    def rentable_h100e(self) -> float:
        """Compute providers can rent out now: each one's H100e online x its kind's `contract_capacity_share`."""
        return sum(p.h100e() * p.terms.contract_capacity_share for p in self.providers)

    def spoken_for_h100e(self, at_month: int) -> float:
        """Compute (H100e) spoken for in month `at_month` (now or ahead) as far as it is known now: contracts signed
        by now and active then, plus labs' demand then (`Lab.compute_demand_h100e`, from their revenue path and the
        frontier trend) beyond what those contracts give them."""
        key = (self.month, at_month, len(self.contracts))
        if self._spoken_ahead[0] != key:
            t = self.month
            catalog = systems()
            held: dict[str, float] = {}
            for lab in self.agents_by_type.get(Lab, ()):
                held[lab.name] = sum(c.gpus * catalog[c.system].h100e_per_gpu
                                     for c in self.contracts.of_lab(lab.name, t) if c.active(at_month))
            uncovered = sum(max(0.0, lab.demand_h100e_at(at_month) - held[lab.name])
                            for lab in self.agents_by_type.get(Lab, ()))
            providers = {p.name for p in self.providers}
            others = sum(c.gpus * catalog[c.system].h100e_per_gpu for name in providers
                         for c in self.contracts.of_provider(name, t) if c.active(at_month) and c.lab not in held)
            self._spoken_ahead = (key, sum(held.values()) + others + uncovered)
        return self._spoken_ahead[1]

    def rental_usd_per_gpu_hour(self, k: str) -> float:
        """Rental price of system k this month (`model.market.pricing`)."""
        t = self.month
        sup = self.supplier_of(k)
        return rental_usd_per_gpu_hour(systems()[k], sup.price_usd(k, t), self.spec.rental, sup.backlog_units(k),
                                       sup.shipped_month[k], self.rental_utilisation())

    def claim_cluster(self, provider: str, system: str, lab: str, until_month: int) -> None:
        """A lab trains on a provider's largest cluster of `system` until `until_month`: no other lab can."""
        self.training_claims[(provider, system)] = (lab, until_month)
        self.claims_version += 1

    # -- contracts ----------------------------------------------------------------------------------------------
    def _sign_announced(self) -> None:
        """Sign the contracts announced for this month, in the system they name (else the newest NVIDIA system
        shipping): a value becomes GPUs at that system's rental price; GPUs are valued at it."""
        t = self.month
        for c in self._announced.pop(t, []):
            signed = month_index(c.date, self.start)  # before 0: signed before the run, backlog at the start
            system = c.system or self.newest_shipping(t)
            start = month_index(c.start or c.date, self.start)
            price = self.rental_usd_per_gpu_hour(system)
            if c.gpus is not None:
                value_usd = c.gpus * c.duration_years * HOURS_PER_YEAR * price
                size = f"{c.gpus:,} {system} GPUs"
            else:
                value_usd = c.value_usd_bn * 1e9
                size = f"${c.value_usd_bn:g}B"
            contract = contract_from_terms(c.lab, c.provider, signed, start, c.duration_years, value_usd, system,
                                           price, gpus=c.gpus)
            self.sign_contract(contract, f"{c.provider}: {size} over {c.duration_years:g} years (announced)",
                               event=signed >= 0)

    def sign_contract(self, contract: Contract, detail: str, event: bool = True) -> None:
        """Put a contract in the book; a lab whose contracts are delivered on schedule funds the provider's
        systems and grid connections for it."""
        self.contracts.add(contract)
        if contract.lab in self.spec.deliver_contracts_of:
            self.buyer(contract.provider).fund_contract(contract)
            detail += ", delivered on schedule"
        if event:
            self.add_event_now(contract.lab, "contract_signed", contract.system, contract.gpus, detail)

    # -- the month ----------------------------------------------------------------------------------------------
    def step(self) -> None:
        self.buyers.shuffle_do("step")  # a seeded random order each month
        self.supply()
        self.buyers.shuffle_do("advance")  # seeded too: who reaches a milestone first in a month is not list order
        self.datacollector.collect(self)
        self._months_recorded = self.steps
        if self.steps >= self.n_months:
            self.running = False

    def supply(self) -> None:
        """Every vendor ships: each says what CoWoS and HBM its orders need, the foundry splits the month's capacity
        (`model.market.foundry`), each makes and ships what its part allows."""
        t = self.month
        needs = {v: s.need(t) for v, s in self.suppliers.items()}
        given = self.foundry.allocate(t, needs)
        for v, s in self.suppliers.items():
            s.ship(t, needs[v], given[v])

    def run(self) -> None:
        while self.running:
            self.step()

    # -- tables -------------------------------------------------------------------------------------------------
    def agent_columns(self) -> list[str]:
        return agent_columns(self.system_keys)

    def agents_frame(self) -> pd.DataFrame:
        """The agents table so far (DESIGN.md columns)."""
        return agent_rows_frame(self)

    def market_frame(self) -> pd.DataFrame:
        """The market table so far (DESIGN.md columns)."""
        return self.datacollector.get_model_vars_dataframe().reset_index(drop=True)

    def events_frame(self) -> pd.DataFrame:
        """The events so far (DESIGN.md columns)."""
        return self.event_log.frame()
