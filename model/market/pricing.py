"""Prices: NVIDIA's price per system over a generation's life, and providers' rental price per GPU-hour."""

from __future__ import annotations

import numpy as np

from model.hardware.systems import System
from model.scenario.schema import Rental
from model.scenario.schema import Supplier as SupplierTerms

HOURS_PER_YEAR = 8760


def system_price_usd(system: System, age_months: int, terms: SupplierTerms) -> float:
    """Price per system `age_months` after its first shipment: a launch premium decaying with age and a steady
    decline, floored at the catalog's low price."""
    age = max(0, age_months)
    premium = terms.launch_premium * np.exp(-age / terms.premium_decay_months)
    decline = 1 - terms.price_decline_per_year * age / 12
    return max(system.price_usd_low, system.price_usd_mid * (1 + premium) * decline)


def rental_cost_usd_per_gpu_hour(system: System, price_usd: float, terms: Rental) -> tuple[float, float]:
    """(floor, cost-plus) per GPU-hour: the floor recovers today's system price over its amortisation at the target
    utilisation, plus power; cost-plus adds the margin on the capital."""
    per_gpu = price_usd / system.gpus_per_system
    capital = per_gpu / (terms.amortization_years * HOURS_PER_YEAR * terms.utilization)
    power = system.system_power_kw_per_gpu * terms.pue * terms.usd_per_kwh
    return capital + power, capital * (1 + terms.margin) + power


def rental_usd_per_gpu_hour(system: System, price_usd: float, terms: Rental, backlog_units: int, output_units: int,
                            utilisation: float) -> float:
    """The rental price that clears the market for compute, with cost as its floor.

    `utilisation` is the share of the compute providers can rent out that is spoken for: held under contracts
    plus labs' demand their contracts do not cover (`MarketModel.rental_utilisation`). Below the target
    utilisation the price falls from cost-plus towards the floor in proportion; above it a scarcity premium grows
    to `scarcity_premium` as utilisation reaches 1, or as the orders waiting for this system reach
    `scarcity_backlog_months` of its output (whichever is tighter)."""
    floor, cost_plus = rental_cost_usd_per_gpu_hour(system, price_usd, terms)
    target = terms.utilization
    slack_price = cost_plus if utilisation >= target else floor + (cost_plus - floor) * max(0.0, utilisation) / target
    backlog = min(1.0, backlog_units / (max(output_units, 1) * terms.scarcity_backlog_months))
    excess = min(1.0, max(0.0, utilisation - target) / (1 - target))
    tight = max(backlog, excess)
    if tight > 0:
        return max(slack_price, cost_plus * (1 + terms.scarcity_premium * tight))
    return slack_price
