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


def rental_usd_per_gpu_hour(system: System, price_usd: float, terms: Rental, backlog_units: int, output_units: int,
                            contracted_share: float) -> float:
    """Cost-recovery rental (today's system price over its amortisation at a target utilisation, plus margin and
    power) with a scarcity premium. Scarcity is the larger of two signals: the months of output the system's backlog
    represents (orders waiting), and how far the share of provider capacity that labs hold under contract exceeds
    the target utilisation (capacity spoken for)."""
    per_gpu = price_usd / system.gpus_per_system
    capital = per_gpu / (terms.amortization_years * HOURS_PER_YEAR * terms.utilization) * (1 + terms.margin)
    power = system.system_power_kw_per_gpu * terms.pue * terms.usd_per_kwh
    output = max(output_units, 1)
    backlog = min(1.0, backlog_units / (output * terms.scarcity_backlog_months))
    held = max(0.0, contracted_share - terms.utilization) / (1 - terms.utilization)
    return (capital + power) * (1 + terms.scarcity_premium * max(backlog, min(held, 1.0)))
