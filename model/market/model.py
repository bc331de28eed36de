"""MarketModel: the Mesa 3.5 model of the race, one step per calendar month.

Order within a month: contracts announced this month are signed; every buyer (in a seeded random order) accrues
budget, finishes and plans power, and orders; NVIDIA ships; every buyer takes deliveries, integrates, places GPUs
into sites and retires old ones; labs start and finish training runs; the month's rows are collected.
"""

from __future__ import annotations

import mesa
import numpy as np
import pandas as pd
from mesa.agentset import AgentSet
from mesa.datacollection import DataCollector

from model.capability.build import capability_table
from model.capability.table import CapabilityTable
from model.hardware.systems import SYSTEM_KEYS, systems
from model.market.agents import Buyer, Lab, Provider, RestOfMarket
from model.market.calendar import date_of, month_index, year_of
from model.market.contracts import Contract, contract_from_terms
from model.market.supplier import Supplier
from model.scenario.mesa_scenario import MarketScenario
from model.scenario.schema import Scenario

EVENT_COLUMNS = ["date", "agent", "event", "system", "gpus", "detail"]
BUYER_KINDS = ("hyperscaler", "neocloud", "lab", "other")


class MarketModel(mesa.Model):
    """The AI infrastructure market, one step per calendar month, built from a `MarketScenario`."""

    def __init__(self, scenario: MarketScenario | None = None, capability: CapabilityTable | None = None):
        """`capability`: the scenario's capability table (what the performance model says about each system); by
        default the one `model.capability.build` keeps for this scenario in the process."""
        scenario = scenario if scenario is not None else MarketScenario(rng=0)
        super().__init__(scenario=scenario)
        spec = scenario.resolved()
        self.spec = spec
        self.capability = capability if capability is not None else capability_table(spec)
        self.start: str = spec.start
        self.end: str = spec.end
        self.n_months = month_index(self.end, self.start) + 1
        self.system_keys = tuple(k for k in SYSTEM_KEYS if k in systems())
        self.time_index = 0
        points = spec.max_campus_mw
        self._max_campus_mw = np.interp(np.arange(self.n_months), [month_index(d, self.start) for d in points],
                                        list(points.values()))
        self.events: list[dict] = []
        self.supplier = Supplier(self, spec.supplier)
        kinds = spec.kinds
        self.buyers: dict[str, Buyer] = {}
        for kind, cls in (("hyperscaler", Provider), ("neocloud", Provider), ("other", RestOfMarket)):
            for name, p in getattr(spec, kind).items():
                self.buyers[name] = cls(self, name, kind, p, getattr(kinds, kind))
        for name, p in spec.lab.items():
            self.buyers[name] = Lab(self, name, p, kinds.lab)
        self.providers = [b for b in self.buyers.values() if isinstance(b, Provider)]
        self.buyer_set = AgentSet(list(self.buyers.values()), random=self.random)
        deployed = {k for b in self.buyers.values() for k, g in b.start_fleet.items() if g > 0}
        for buyer in self.buyers.values():
            buyer.skip_firsts(deployed)
        self.announced = sorted(spec.contracts, key=lambda c: c.date)
        self.contracts: list[Contract] = []
        self._utilisation: tuple[tuple[int, int, int], float] = ((-1, -1, -1), 0.0)
        self.datacollector = DataCollector(
            model_reporters=self._market_reporters(),
            tables={"agents": self.agent_columns()},
        )

    # -- construction helpers -----------------------------------------------------------------------------------
    @classmethod
    def from_params(cls, params: Scenario | dict, seed: int = 0,
                    capability: CapabilityTable | None = None) -> MarketModel:
        """A model from a validated scenario (or a resolved parameter tree, validated here) and a seed."""
        return cls(MarketScenario(params=params, rng=seed), capability)

    def agent_columns(self) -> list[str]:
        return (["date", "agent", "kind", "gpus_online"] + [f"gpus_online_{k}" for k in self.system_keys]
                + ["h100e", "power_mw_online", "power_mw_used", "largest_cluster_gpus", "capex_usd_cumulative",
                   "frontier_run_days"])

    def _market_reporters(self) -> dict:
        sup = self.supplier
        reporters = {"date": lambda m: m.date_of(m.time_index),
                     "nvidia_revenue_usd": lambda m: sup.revenue_month_usd}
        for k in self.system_keys:
            reporters[f"units_shipped_{k}"] = lambda m, k=k: int(sup.shipped_month[k])
        for k in self.system_keys:
            reporters[f"backlog_units_{k}"] = lambda m, k=k: int(sup.backlog_units(k))
        for k in self.system_keys:
            reporters[f"rental_usd_per_gpu_hour_{k}"] = (
                lambda m, k=k: m.rental_usd_per_gpu_hour(k) if sup.shipping(k, m.time_index) else None)
        return reporters

    # -- time and events ----------------------------------------------------------------------------------------
    def date_of(self, t: int) -> str:
        return date_of(self.start, t)

    @property
    def current_date(self) -> str:
        """First day of the month the next step simulates (after the last step: the month after the end)."""
        return self.date_of(self.time_index)

    @property
    def year(self) -> int:
        return year_of(self.start, self.time_index)

    def year_at(self, t: int) -> int:
        return year_of(self.start, t)

    def max_campus_mw(self) -> float:
        """Largest campus anyone can power in the current month (grid connections grow over time)."""
        return float(self._max_campus_mw[min(max(self.time_index, 0), self.n_months - 1)])

    def add_event(self, date: str, agent: str, event: str, system: str | None, gpus: int, detail: str = "") -> None:
        self.events.append({"date": date, "agent": agent, "event": event, "system": system or "",
                            "gpus": int(gpus), "detail": detail})

    def add_event_now(self, agent: str, event: str, system: str | None, gpus: int, detail: str = "") -> None:
        self.add_event(self.current_date, agent, event, system, gpus, detail)

    # -- market-wide quantities agents consult -------------------------------------------------------------------
    def newest_shipping(self, t: int) -> str:
        shipping = [k for k in self.system_keys if self.supplier.shipping(k, t)]
        return max(shipping, key=lambda k: self.supplier.first[k])

    def best_usd_per_facility_mw(self, t: int, pue: float) -> float:
        """What a MW of facility power costs to fill with the newest shipping system (sizes power builds)."""
        k = self.newest_shipping(t)
        return self.supplier.price_usd(k, t) / (systems()[k].system_power_kw * pue / 1000.0)

    def smallest_system_facility_mw(self, pue: float) -> float:
        """Facility MW of the smallest system in the catalog: a site with less free power is full."""
        return min(systems()[k].system_power_kw for k in self.system_keys) * pue / 1000.0

    def named_monthly_budget_usd(self, year: int) -> float:
        """NVIDIA-system spending of every named buyer this month, however funded (the rest of the market is sized
        against it)."""
        return sum(b.monthly_spending_usd(year) for b in self.buyers.values() if b.kind != "other")

    def contracted_utilisation(self) -> float:
        """Share of the providers' online compute (H100e) that labs hold under active contracts this month."""
        t = self.time_index
        key = (t, len(self.contracts), sum(b.placements for b in self.providers))
        if self._utilisation[0] != key:
            catalog = systems()
            held = sum(c.gpus * catalog[c.system].h100e_per_gpu for c in self.contracts if c.active(t))
            online = sum(b.h100e() for b in self.providers)
            self._utilisation = (key, min(1.0, held / online) if online else 0.0)
        return self._utilisation[1]

    def rental_usd_per_gpu_hour(self, k: str) -> float:
        """Cost-recovery rental (today's system price over its amortisation at a target utilisation, plus margin
        and power) with a scarcity premium. Scarcity is the larger of two signals: the months of output the system's
        backlog represents (orders waiting), and how far the share of provider capacity that labs hold under
        contract exceeds the target utilisation (capacity spoken for)."""
        p = self.spec.rental
        s = systems()[k]
        t = self.time_index
        per_gpu = self.supplier.price_usd(k, t) / s.gpus_per_system
        capital = per_gpu / (p.amortization_years * 8760 * p.utilization) * (1 + p.margin)
        power = s.system_power_kw_per_gpu * p.pue * p.usd_per_kwh
        output = max(self.supplier.shipped_month[k], 1)
        backlog = min(1.0, self.supplier.backlog_units(k) / (output * p.scarcity_backlog_months))
        held = max(0.0, self.contracted_utilisation() - p.utilization) / (1 - p.utilization)
        return (capital + power) * (1 + p.scarcity_premium * max(backlog, min(held, 1.0)))

    # -- contracts ----------------------------------------------------------------------------------------------
    def _sign_contracts(self) -> None:
        ym = self.current_date[:7]
        t = self.time_index
        while self.announced and self.announced[0].date <= ym:
            c = self.announced.pop(0)
            signed = month_index(c.date, self.start)  # before 0: signed before the run, backlog at the start
            system = self.newest_shipping(t)
            start = month_index(c.start or c.date, self.start)
            contract = contract_from_terms(c.lab, c.provider, signed, start, c.duration_years,
                                           c.value_usd_bn * 1e9, system, self.rental_usd_per_gpu_hour(system))
            self.sign_contract(contract, f"{c.provider}: ${c.value_usd_bn:g}B over {c.duration_years:g} "
                               "years (announced)", event=signed >= 0)

    def sign_contract(self, contract: Contract, detail: str, event: bool = True) -> None:
        self.contracts.append(contract)
        self.buyers[contract.provider].contracts_as_provider.append(contract)
        lab = self.buyers[contract.lab]
        if isinstance(lab, Lab):
            lab.contracts.append(contract)
        if contract.lab in self.spec.deliver_contracts_of:
            self.buyers[contract.provider].fund_contract(contract)
            detail += ", delivered on schedule"
        if event:
            self.add_event_now(contract.lab, "contract_signed", contract.system, contract.gpus, detail)

    # -- the month ----------------------------------------------------------------------------------------------
    def step(self) -> None:
        self._sign_contracts()
        self.buyer_set.shuffle_do("step")  # a seeded random order each month
        self.supplier.step()
        self.buyer_set.shuffle_do("advance")  # seeded too: who reaches a milestone first in a month is not list order
        self._collect()
        self.time_index += 1
        if self.time_index >= self.n_months:
            self.running = False

    def run(self) -> None:
        while self.running:
            self.step()

    # -- tables -------------------------------------------------------------------------------------------------
    def _collect(self) -> None:
        date = self.current_date
        for b in self.buyers.values():
            online = b.gpus_online()
            k, g = b.accessible_cluster()
            row = {"date": date, "agent": b.name, "kind": b.kind, "gpus_online": int(sum(online.values()))}
            row.update({f"gpus_online_{key}": int(online[key]) for key in self.system_keys})
            row.update(h100e=b.h100e(), power_mw_online=b.power_online_mw(), power_mw_used=b.power_used_mw(),
                       largest_cluster_gpus=int(g), capex_usd_cumulative=b.capex_usd,
                       frontier_run_days=self.capability.reference_run_days(k, g) if k else None)
            self.datacollector.add_table_row("agents", row)
        self.datacollector.collect(self)

    def agents_frame(self) -> pd.DataFrame:
        """The agents table so far (DESIGN.md columns)."""
        df = self.datacollector.get_table_dataframe("agents")
        return df.astype({"frontier_run_days": float}) if len(df) else df

    def market_frame(self) -> pd.DataFrame:
        """The market table so far (DESIGN.md columns)."""
        return self.datacollector.get_model_vars_dataframe().reset_index(drop=True)

    def events_frame(self) -> pd.DataFrame:
        """The events so far (DESIGN.md columns)."""
        return pd.DataFrame(self.events, columns=EVENT_COLUMNS)
