"""MarketModel: one step = one calendar month (Mesa 3.5)."""

from __future__ import annotations

import mesa
import pandas as pd

from model.hardware.systems import SYSTEM_KEYS, systems
from model.market import capability
from model.market.agents import Builder, Lab
from model.market.supplier import Supplier, month_index
from model.scenario.mesa_scenario import MarketScenario

EVENT_COLUMNS = ["date", "agent", "event", "system", "gpus", "detail"]


class MarketModel(mesa.Model):
    """The AI infrastructure market, one step per calendar month, built from a `MarketScenario`."""

    def __init__(self, scenario: MarketScenario | None = None):
        scenario = scenario if scenario is not None else MarketScenario(rng=0)
        super().__init__(scenario=scenario)
        params = scenario.resolved_params()
        self.params = params
        self.start = params["start"]
        self.end = params["end"]
        self.n_months = month_index(self.end, self.start) + 1
        self.system_keys = tuple(k for k in SYSTEM_KEYS if k in systems())
        self.time_index = 0
        self.events: list[dict] = []
        self.agent_rows: list[dict] = []
        self.market_rows: list[dict] = []
        self.supplier = Supplier(self, params["supplier"])
        kinds = params["kinds"]
        self.builders: dict[str, Builder] = {}
        for kind in ("hyperscaler", "neocloud", "other"):
            for name, p in params.get(kind, {}).items():
                self.builders[name] = Builder(self, name, kind, p, kinds[kind])
        for name, p in params.get("lab", {}).items():
            self.builders[name] = Lab(self, name, p, kinds["lab"])
        for name, p in params.get("lab", {}).items():
            self.builders[name].hosts = [self.builders[h] for h in p.get("hosts", [])]
        self.contracts = sorted(params.get("contracts", []), key=lambda c: c["date"])

    @classmethod
    def from_params(cls, params: dict, seed: int = 0) -> MarketModel:
        """A model from an already resolved parameter tree and a seed."""
        return cls(MarketScenario(params=params, rng=seed))

    @property
    def current_date(self) -> str:
        """First day of the month the next step simulates (after the last step: the month after the end)."""
        return self.start_date_of(self.time_index)

    def agents_frame(self) -> pd.DataFrame:
        """The agents table so far (DESIGN.md columns)."""
        return pd.DataFrame(self.agent_rows)

    def market_frame(self) -> pd.DataFrame:
        """The market table so far (DESIGN.md columns)."""
        return pd.DataFrame(self.market_rows)

    def events_frame(self) -> pd.DataFrame:
        """The events so far (DESIGN.md columns)."""
        return pd.DataFrame(self.events, columns=EVENT_COLUMNS)

    @property
    def year(self) -> int:
        y0, m0 = map(int, self.start.split("-"))
        return y0 + (m0 - 1 + self.time_index) // 12

    def start_date_of(self, t: int) -> str:
        y0, m0 = map(int, self.start.split("-"))
        m = m0 - 1 + t
        return f"{y0 + m // 12:04d}-{m % 12 + 1:02d}-01"

    def event(self, date, agent, event, system, gpus, detail=""):
        self.events.append(
            {"date": date, "agent": agent, "event": event, "system": system or "", "gpus": int(gpus), "detail": detail}
        )

    def event_now(self, agent, event, system, gpus, detail=""):
        self.event(self.start_date_of(self.time_index), agent, event, system, gpus, detail)

    def _sign_contracts(self) -> None:
        ym = self.start_date_of(self.time_index)[:7]
        for c in self.contracts:
            if c["date"] == ym:
                prov, lab = self.builders[c["provider"]], self.builders[c["lab"]]
                prov.contract_backlog += c["value_usd_bn"] * 1e9
                if isinstance(lab, Lab) and prov not in lab.hosts:
                    lab.hosts.append(prov)
                self.event_now(c["lab"], "contract_signed", None, 0, f"{c['provider']} ${c['value_usd_bn']}B")

    def step(self) -> None:
        t = self.time_index
        self._sign_contracts()
        order = list(self.builders.values())
        for i in self.rng.permutation(len(order)):  # random order each month (ties)
            order[i].step()
        self.supplier.step()
        for b in self.builders.values():
            b.advance_deliveries(t)
        self._collect()
        self.time_index += 1
        if self.time_index >= self.n_months:
            self.running = False

    def _collect(self) -> None:
        date = self.start_date_of(self.time_index)
        ref = self.params["reference_frontier_flop"]
        for b in self.builders.values():
            k, g = b.accessible_cluster() if isinstance(b, Lab) else b.largest_cluster()
            row = {"date": date, "agent": b.name, "kind": b.kind, "gpus_online": int(sum(b.online.values()))}
            for key in self.system_keys:
                row[f"gpus_online_{key}"] = int(b.online[key])
            row.update(
                h100e=b.h100e(),
                power_mw_online=b.power_online,
                power_mw_used=b.mw_used(),
                largest_cluster_gpus=int(g),
                capex_usd_cumulative=b.capex,
                frontier_run_days=capability.frontier_run_days(k, g, ref) if k else None,
            )
            self.agent_rows.append(row)
        sup = self.supplier
        mrow = {"date": date, "nvidia_revenue_usd": sup.revenue_month}
        for key in self.system_keys:
            mrow[f"units_shipped_{key}"] = int(sup.shipped_month[key])
        for key in self.system_keys:
            mrow[f"backlog_units_{key}"] = sup.backlog(key)
        for key in self.system_keys:
            mrow[f"rental_usd_per_gpu_hour_{key}"] = self.rental(key) if sup.available(key, self.time_index) else None
        self.market_rows.append(mrow)

    def rental(self, key: str) -> float:
        """Cost-recovery rental plus a scarcity premium when backlog exceeds months of output (documented rule)."""
        p = self.params["rental"]
        s = systems()[key]
        sup = self.supplier
        per_gpu = sup.price(key, self.time_index) / s.gpus_per_system
        base = per_gpu / (p["amortization_years"] * 8760 * p["utilization"]) * (1 + p["margin"])
        out = max(sup.shipped_month[key], 1)
        return base * (1 + p["scarcity_premium"] * min(1.0, sup.backlog(key) / (out * p["scarcity_backlog_months"])))

    def run(self) -> None:
        while self.running:
            self.step()
