"""Providers (hyperscalers, neoclouds), labs (optionally building their own, xAI-style) and the rest of the market."""

from __future__ import annotations

import math

import mesa

from model.hardware.systems import systems
from model.market import capability


class Builder(mesa.Agent):
    """Anything that buys, powers and runs NVIDIA systems."""

    def __init__(self, model, name: str, kind: str, p: dict, kp: dict):
        super().__init__(model)
        self.name, self.kind, self.p, self.kp = name, kind, p, kp
        keys = model.system_keys
        self.online = dict.fromkeys(keys, 0)  # GPUs
        self.integrating: list[list] = []  # [system, gpus, ready_month]
        self.in_transit: list[list] = []
        self.ordered = dict.fromkeys(keys, 0)
        self.delivered = dict.fromkeys(keys, 0)
        self.power_online = float(p.get("power_mw_start", 0.0))
        self.pipeline: list[list] = []  # [month_online, mw]
        self.capex = 0.0
        self.budget_cum = 0.0
        self.financing = 0.0
        self.contract_backlog = 0.0
        self.firsts: set = set()
        self.at_scale: set = set()

    # --- money -----------------------------------------------------------------------------------------------------
    def monthly_budget(self, year: int) -> float:
        b = self.p.get("capex_usd_bn", {})
        years = sorted(int(y) for y in b)
        if not years:
            return 0.0
        if year in years:
            annual = b[str(year)]
        elif year < years[0]:
            annual = b[str(years[0])]
        else:
            annual = b[str(years[-1])] * (1 + self.kp["capex_growth_after_guidance"]) ** (year - years[-1])
        share = self.p.get("ai_systems_share", self.kp["ai_systems_share"])
        return annual * 1e9 * share * self.kp.get("capex_multiplier", 1.0) / 12.0

    def cash(self) -> float:
        return self.budget_cum + self.financing - self.capex

    # --- power -----------------------------------------------------------------------------------------------------
    def pue(self) -> float:
        return self.kp["pue"]

    def mw_used(self) -> float:
        cat = systems()
        return sum(g * cat[k].system_power_kw_per_gpu for k, g in self.online.items()) * self.pue() / 1000.0

    def mw_committed(self) -> float:
        cat = systems()
        pend = sum(g * cat[k].system_power_kw_per_gpu for k, g, _ in self.integrating + self.in_transit)
        back = sum(u * cat[k].system_power_kw for k, u in self._backlog_units().items())
        return self.mw_used() + (pend + back) * self.pue() / 1000.0

    def _backlog_units(self) -> dict:
        sup = self.model.supplier
        return {k: sum(o[1] for o in sup.orders[k] if o[0] is self) for k in self.model.system_keys}

    def grow_power(self, t: int) -> None:
        add = self.p.get("power_add_mw_per_year", 0.0)
        if add:
            slow = self.model.params.get("power_lead_time_multiplier", 1.0)
            delay = int(self.model.rng.integers(0, round(self.kp["construction_delay_max_months"] * slow) + 1))
            self.pipeline.append([t + round(self.kp["construction_lead_months"] * slow) + delay, add / 12.0])
        ready = [x for x in self.pipeline if x[0] <= t]
        self.power_online += sum(x[1] for x in ready)
        self.pipeline = [x for x in self.pipeline if x[0] > t]

    # --- supply ----------------------------------------------------------------------------------------------------
    def receive(self, k: str, units: int, t: int) -> None:
        self.in_transit.append([k, units * systems()[k].gpus_per_system, t + self.model.params["transit_months"]])

    def advance_deliveries(self, t: int) -> None:
        arrived = [x for x in self.in_transit if x[2] <= t]
        self.in_transit = [x for x in self.in_transit if x[2] > t]
        for k, g, _ in arrived:
            self.delivered[k] += g
            self.integrating.append([k, g, t + self.kp["integration_lag_months"]])
            if ("d", k) not in self.firsts:
                self.firsts.add(("d", k))
                self.model.event_now(self.name, "first_delivery", k, g)
        cat = systems()
        still = []
        for item in self.integrating:
            k, g, ready = item
            need = g * cat[k].system_power_kw_per_gpu * self.pue() / 1000.0
            if ready <= t and self.mw_used() + need <= self.power_online + 1e-9:
                self.online[k] += g
                if ("o", k) not in self.firsts:
                    self.firsts.add(("o", k))
                    self.model.event_now(self.name, "first_online", k, g)
            else:
                still.append(item)
        self.integrating = still
        thr = self.model.params["at_scale_gpus"]
        for k in self.model.system_keys:
            c = self.cluster_gpus(k)
            if c >= thr and k not in self.at_scale:
                self.at_scale.add(k)
                self.model.event_now(self.name, "first_cluster_at_scale", k, c)

    def cluster_cap(self, k: str) -> int:
        s = systems()[k]
        site = self.kp["site_mw"] * 1000.0 / (s.system_power_kw_per_gpu * self.pue())
        fabric = self.model.params["fabric_max_gpus_per_400g"] * s.scaleout_gbit_s / 400.0
        return int(min(site, fabric))

    def cluster_gpus(self, k: str) -> int:
        return min(self.online[k], self.cluster_cap(k))

    def largest_cluster(self) -> tuple[str | None, int]:
        best = max(self.model.system_keys, key=lambda k: (self.cluster_gpus(k), systems()[k].h100e_per_gpu))
        g = self.cluster_gpus(best)
        return (best, g) if g > 0 else (None, 0)

    # --- procurement -----------------------------------------------------------------------------------------------
    def value_per_gpu(self, k: str) -> float:
        w = self.kp["training_weight"]
        tr = capability.training_tflops_per_gpu(k) / capability.training_tflops_per_gpu("hgx_h100")
        sv = capability.serving_tokens_per_s_per_gpu(k) / capability.serving_tokens_per_s_per_gpu("hgx_h100")
        return w * tr + (1 - w) * sv

    def score(self, k: str, t: int, cash: float, mw: float) -> float:
        """Throughput (H100-value units) this month's money and spare power would buy of system k."""
        s = systems()[k]
        price = self.model.supplier.price(k, t)
        units = min(cash / price, mw * 1000.0 / (s.system_power_kw * self.pue()))
        wait = self.model.supplier.expected_wait_months(k, t)
        return units * s.gpus_per_system * self.value_per_gpu(k) * math.exp(-wait / self.kp["wait_tau_months"])

    def procure(self, t: int) -> None:
        sup = self.model.supplier
        self.budget_cum += self.monthly_budget(self.model.year)
        if self.kind == "neocloud":
            cap = self.kp["debt_multiple_of_backlog"] * self.contract_backlog
            self.financing = max(self.financing, cap)
        cash = self.cash()
        if cash <= 0:
            return
        headroom = self.power_online + sum(mw for _, mw in self.pipeline) - self.mw_committed()
        if self.kind == "other":
            headroom = 1e9
        if headroom <= 0:
            return
        look = self.kp["defer_lookahead_months"]
        avail = [k for k in self.model.system_keys if sup.available(k, t)]
        soon = [
            k
            for k in self.model.system_keys
            if systems()[k].status != "dropped" and not sup.available(k, t) and sup.first[k] - t <= look
        ]
        if not avail:
            return
        best = max(avail, key=lambda k: self.score(k, t, cash, headroom))
        choice = best
        if soon:
            nxt = max(soon, key=lambda k: self.score(k, t, cash, headroom))
            gain = 1 + self.kp["defer_min_gain"]
            if self.score(nxt, t, cash, headroom) >= gain * self.score(best, t, cash, headroom):
                choice = nxt  # DEFER: pre-order the next generation instead
        s = systems()[choice]
        price = sup.price(choice, t)
        units = int(min(cash / price, headroom * 1000.0 / (s.system_power_kw * self.pue())))
        if units <= 0:
            return
        sup.place_order(self, choice, units)
        self.ordered[choice] += units * s.gpus_per_system
        self.capex += units * price

    def step(self) -> None:
        t = self.model.time_index
        self.grow_power(t)
        self.procure(t)

    def h100e(self) -> float:
        cat = systems()
        return sum(g * cat[k].h100e_per_gpu for k, g in self.online.items())


class Lab(Builder):
    """A frontier lab: runs ever larger training runs on its own or contracted providers' largest cluster."""

    def __init__(self, model, name: str, p: dict, kp: dict):
        super().__init__(model, name, "lab", p, kp)
        self.hosts: list[Builder] = []
        self.run_end: int | None = None
        self.flop_factor = p.get("frontier_flop_factor", 1.0)

    def accessible_cluster(self) -> tuple[str | None, int]:
        best = self.largest_cluster()
        for h in self.hosts:
            c = h.largest_cluster()
            if c[1] > best[1]:
                best = c
        return best

    def step(self) -> None:
        super().step()
        t = self.model.time_index
        mp = self.model.params
        if self.run_end is not None and t >= self.run_end:
            self.model.event_now(self.name, "training_run_finished", None, 0)
            self.run_end = None
        if self.run_end is None:
            k, g = self.accessible_cluster()
            if k is None:
                return
            flop = mp["frontier_flop_2024"] * self.flop_factor * mp["frontier_flop_growth_per_year"] ** (t / 12)
            days = capability.frontier_run_days(k, g, flop)
            if days is not None and days <= mp["max_run_days"]:
                self.run_end = t + max(1, round(days / 30.4))
                self.model.event_now(self.name, "training_run_started", k, g, f"{flop:.2e} FLOP, {days:.0f} days")
