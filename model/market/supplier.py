"""NVIDIA: roadmap with slips, ramp, shared CoWoS capacity, an order book allocated by water-filling, prices."""

from __future__ import annotations

import mesa
import numpy as np

from model.hardware.systems import systems


def month_index(ym: str, start: str) -> int:
    y, m = map(int, ym.split("-")[:2])
    y0, m0 = map(int, start.split("-")[:2])
    return (y - y0) * 12 + (m - m0)


class Supplier(mesa.Agent):
    def __init__(self, model, params: dict):
        super().__init__(model)
        self.p = params
        self.keys = list(model.system_keys)
        cat = systems()
        self.first = {}
        self.volume = {}
        for k in self.keys:
            delay = int(params.get("delay_months", {}).get(k, 0))  # scenario input, e.g. a Rubin delay
            f = month_index(cat[k].first_shipment, model.start) + delay
            v = month_index(cat[k].volume, model.start) + delay
            slip = 0
            if cat[k].status != "dropped" and cat[k].first_shipment >= params["slip_after"]:
                slip = int(model.rng.choice(params["slip_months"], p=params["slip_probs"]))
                if slip:
                    model.event(model.start_date_of(f), "nvidia", "roadmap_slip", k, 0, f"{slip} months")
            self.first[k] = f + slip
            self.volume[k] = max(v + slip, f + slip + 1)
        self.orders: dict[str, list[list]] = {k: [] for k in self.keys}  # [buyer, units_outstanding]
        self.shipped_month = dict.fromkeys(self.keys, 0)
        self.units_shipped_total = dict.fromkeys(self.keys, 0)
        self.revenue_month = 0.0

    def available(self, k: str, t: int) -> bool:
        return systems()[k].status != "dropped" and t >= self.first[k]

    def price(self, k: str, t: int) -> float:
        s = systems()[k]
        age = max(0, t - self.first[k])
        premium = self.p["launch_premium"] * np.exp(-age / self.p["premium_decay_months"])
        return max(s.price_usd_low, s.price_usd_mid * (1 + premium) * (1 - self.p["price_decline_per_year"] * age / 12))

    def backlog(self, k: str) -> int:
        return int(sum(o[1] for o in self.orders[k]))

    def expected_wait_months(self, k: str, t: int) -> float:
        """Months until a new order could ship: time to first shipment plus the backlog ahead at half of capacity."""
        s = systems()[k]
        wafers_needed = self.backlog(k) * s.gpus_per_system / self.p["gpus_per_wafer"][k]
        return max(0, self.first[k] - t) + wafers_needed / (0.5 * self.wafers_per_month(t))

    def place_order(self, buyer, k: str, units: int) -> None:
        if units > 0:
            self.orders[k].append([buyer, int(units)])

    def wafers_per_month(self, t: int) -> float:
        pts = self.p["cowos_wafers_per_month"]
        xs = [month_index(d, self.model.start) for d in pts]
        values = list(pts.values())
        sourced = float(np.interp(t, xs, values))
        return values[0] + (sourced - values[0]) * self.p.get("supply_growth_multiplier", 1.0)

    def step(self) -> None:
        t = self.model.time_index
        cat = systems()
        wafers = self.wafers_per_month(t)
        # capacity each system could use: ramp from first shipment to volume
        want = {}
        for k in self.keys:
            if not self.available(k, t) or not self.orders[k]:
                continue
            ramp = min(1.0, (t - self.first[k] + 1) / (self.volume[k] - self.first[k] + 1))
            gpus_per_wafer = self.p["gpus_per_wafer"][k]
            need = self.backlog(k) * cat[k].gpus_per_system / gpus_per_wafer
            want[k] = (min(need, ramp * wafers), gpus_per_wafer)
        total = sum(w for w, _ in want.values())
        scale = min(1.0, wafers / total) if total > 0 else 0.0
        self.revenue_month = 0.0
        for k in self.keys:
            self.shipped_month[k] = 0
            if k not in want:
                continue
            w, gpw = want[k]
            units = int(w * scale * gpw // cat[k].gpus_per_system)
            self._allocate(k, units, t)
        self.revenue_month *= 1 + self.p["attach_revenue_fraction"]

    def _allocate(self, k: str, units: int, t: int) -> None:
        """Water-filling: every order gets an equal share; small orders fill first, leftovers go to the rest."""
        price = self.price(k, t)
        orders = self.orders[k]
        while units > 0 and orders:
            share = max(1, units // len(orders))
            for o in list(orders):
                give = min(share, o[1], units)
                if give <= 0:
                    continue
                o[1] -= give
                units -= give
                self.shipped_month[k] += give
                self.units_shipped_total[k] += give
                self.revenue_month += give * price
                o[0].receive(k, give, t)
            self.orders[k] = orders = [o for o in orders if o[1] > 0]
