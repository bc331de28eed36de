"""Every vendor in the market (issue 18): suppliers sharing CoWoS and HBM, buyers choosing between vendors, chips
not sold to others, announced contracts in a named system."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from model.errors import InputError
from model.hardware.systems import systems
from model.market import MarketModel
from model.market.foundry import Foundry, Need, water_fill
from model.market.procurement import ownership_cost_usd
from model.scenario.loading import apply_overrides, load_scenario_dict
from model.scenario.validation import check as validate

BASELINE = "scenarios/baseline.toml"


@pytest.fixture(scope="module")
def params():
    return load_scenario_dict(BASELINE)


VENDORS = ("NVIDIA", "Google", "AWS", "AMD")


@pytest.fixture(scope="module")
def foundry(params):
    """The baseline's foundry with every unused reservation transferable (the slack mechanism at full strength)."""
    return Foundry(validate(apply_overrides(params, ["supplier.unused_reservation_transfer_share=1"])).supplier,
                   VENDORS, "2024-01", 48)


def nvidia_gpus_shipped(model: MarketModel) -> int:
    sup = model.supplier
    return sum(sup.units_shipped_total[k] * systems()[k].gpus_per_system for k in sup.keys)


def short_run(params: dict, *overrides: str, seed: int = 0) -> MarketModel:
    model = MarketModel.from_params(apply_overrides(params, ["end=2026-12", *overrides]), seed=seed)
    model.run()
    return model


def test_water_fill_gives_in_proportion_to_what_is_lacking_and_never_more():
    given = water_fill(10.0, np.array([2.0, 30.0, 8.0]))
    assert given.tolist() == pytest.approx([0.5, 7.5, 2.0])
    assert water_fill(100.0, np.array([1.0, 2.0])).tolist() == pytest.approx([1.0, 2.0])  # never more than lacking
    assert water_fill(5.0, np.array([0.0, 0.0])).tolist() == [0.0, 0.0]


def test_a_vendor_gets_its_reservation_first_and_the_slack_others_leave(foundry):
    t = 12  # 2025-01
    total = foundry.total["cowos_wafers"][t]
    nvidia = foundry.reserved("NVIDIA", "cowos_wafers")[t]
    alone = foundry.allocate(t, {"NVIDIA": Need(total, 0.0), "Google": Need(0.0, 0.0)})
    assert alone["NVIDIA"].cowos_wafers > nvidia  # Google's unused reservation goes to NVIDIA
    # a TPU surge: Google needs all its reservation and more, so NVIDIA gets less (but never under its reservation)
    surge = foundry.allocate(t, {"NVIDIA": Need(total, 0.0), "Google": Need(total, 0.0)})
    assert nvidia - 1e-6 <= surge["NVIDIA"].cowos_wafers < alone["NVIDIA"].cowos_wafers
    assert sum(g.cowos_wafers for g in surge.values()) <= total + 1e-6
    # what no modelled vendor reserves is used outside the model
    reserved = sum(foundry.reserved(v, "cowos_wafers")[t] for v in foundry.vendors)
    assert sum(g.cowos_wafers for g in surge.values()) == pytest.approx(reserved)
    assert reserved < total


def test_a_vendor_gets_only_the_transferable_share_of_what_others_leave_unused(params):
    """The transfer share scales the slack: none of it at 0 (each vendor at most its reservation), half at 0.5."""
    t = 12  # 2025-01
    got = {}
    for share in (0.0, 0.5, 1.0):
        f = Foundry(validate(apply_overrides(params, [f"supplier.unused_reservation_transfer_share={share}"])).supplier,
                    VENDORS, "2024-01", 48)
        total = f.total["cowos_wafers"][t]
        got[share] = f.allocate(t, {"NVIDIA": Need(total, 0.0), "Google": Need(0.0, 0.0)})["NVIDIA"].cowos_wafers
        nvidia = f.reserved("NVIDIA", "cowos_wafers")[t]
    unused = sum(f.reserved(v, "cowos_wafers")[t] for v in VENDORS) - nvidia  # every other vendor needs nothing
    assert got[0.0] == pytest.approx(nvidia)
    assert got[0.5] == pytest.approx(nvidia + 0.5 * unused)
    assert got[1.0] == pytest.approx(nvidia + unused)


def test_no_vendor_makes_more_than_its_own_reservation_when_none_is_transferable(params):
    """The baseline (unused reservations not transferable): every month each vendor's shipments need at most its
    reserved CoWoS wafers and HBM (whole systems round down), and NVIDIA's capacity binds in some months (its
    shipments then use nearly all of its reservation)."""
    assert validate(params).supplier.unused_reservation_transfer_share == 0
    model = short_run(params)
    market = model.market_frame()
    catalog = systems()
    per_wafer = model.spec.supplier.gpus_per_wafer
    binding = 0
    for vendor, sup in model.suppliers.items():
        wafers = model.foundry.reserved(vendor, "cowos_wafers")
        hbm_tb = model.foundry.reserved(vendor, "hbm_tb")
        for t, row in market.iterrows():
            gpus = {k: row[f"units_shipped_{k}"] * catalog[k].gpus_per_system for k in sup.keys}
            used_wafers = sum(g / per_wafer[k] for k, g in gpus.items())
            used_hbm = sum(g * catalog[k].hbm_gb / 1000.0 for k, g in gpus.items())
            assert used_wafers <= wafers[t] * (1 + 1e-9) and used_hbm <= hbm_tb[t] * (1 + 1e-9), (vendor, t)
            binding += vendor == "NVIDIA" and used_wafers > 0.95 * wafers[t]
    assert binding >= 6


def test_reserved_shares_keep_each_years_sourced_share_and_move_month_by_month(params, foundry):
    """Each year's months average to the scenario's share for that year (the source is a share of the year), and the
    share moves by the same step every month between two years' middles: no step in January (NVIDIA's 2024 -> 2025
    share was a +35% step in its reserved wafers from December to January); later years keep the last share."""
    shares = params["supplier"]["reserved_cowos_share"]["NVIDIA"]
    nvidia = foundry.share["cowos_wafers"]["NVIDIA"]
    for i, year in enumerate(("2024", "2025", "2026")):
        assert nvidia[12 * i:12 * (i + 1)].mean() == pytest.approx(shares[year], rel=1e-9), year
    steps = np.diff(nvidia)
    november_to_december, december_to_january, january_to_february = steps[10], steps[11], steps[12]
    assert december_to_january == pytest.approx(november_to_december) == pytest.approx(january_to_february)
    assert december_to_january > 0  # rising towards 2025's larger share
    assert nvidia[36:48].mean() == pytest.approx(shares[max(shares)])  # later years keep the last
    every_month = sum(foundry.share["cowos_wafers"][v] for v in VENDORS)
    assert every_month.max() <= 1.0 + 1e-12  # shares that sum to at most 1 each year do so each month


def test_an_hbm_shortage_cuts_nvidias_shipments(params):
    short = copy.deepcopy(params)
    short["end"] = "2026-12"
    short["supplier"]["hbm_tb_per_month"] = {d: v * 0.3 for d, v in params["supplier"]["hbm_tb_per_month"].items()}
    base = short_run(params)
    scarce = MarketModel.from_params(short, seed=0)
    scarce.run()
    assert nvidia_gpus_shipped(scarce) < 0.9 * nvidia_gpus_shipped(base)


def test_a_tpu_demand_surge_cuts_nvidias_shipments(params):
    """Google sells TPUs to every buyer (tpu_surge.toml): TPU orders surge, Google takes the packaging and memory
    others leave unused, and NVIDIA ships fewer GPUs (with unused reservations transferable, else each vendor is
    bounded by its own)."""
    transferable = "supplier.unused_reservation_transfer_share=1"
    base = short_run(params, transferable)
    surge = short_run(params, transferable, 'supplier.sells_to_others=["Google"]')
    assert nvidia_gpus_shipped(surge) < nvidia_gpus_shipped(base)
    google = surge.suppliers["Google"]
    assert sum(google.units_shipped_total.values()) > sum(base.suppliers["Google"].units_shipped_total.values())


def test_every_vendor_ships_and_chips_not_sold_to_others_reach_their_owner_only(params):
    model = short_run(params)
    for vendor, sup in model.suppliers.items():
        assert sum(sup.units_shipped_total.values()) > 0, vendor
    owners = params["supplier"]["owners"]
    for k in model.system_keys:
        if not systems()[k].sold_to_others:
            owner = owners[systems()[k].vendor]
            assert {b.name for b in model.buyers if b.delivered[k]} <= {owner}, k
    # AMD's systems are sold to others: more than one buyer takes them
    amd = {b.name for b in model.buyers for k in model.suppliers["AMD"].keys if b.delivered[k]}
    assert len(amd) > 1


def test_only_the_owner_may_order_a_chip_not_sold_to_others(params):
    model = MarketModel.from_params(apply_overrides(params, ["end=2024-03"]), seed=0)
    google = model.suppliers["Google"]
    assert google.may_order("google", "tpu_v7") and not google.may_order("microsoft", "tpu_v7")
    with pytest.raises(ValueError, match="microsoft may not order tpu_v7"):
        google.place_order(model.buyer("microsoft"), "tpu_v7", 1, 1.0)
    assert "tpu_v7" not in model.buyer("microsoft").procurement.candidates
    assert "tpu_v7" in model.buyer("google").procurement.candidates
    assert "mi355x" in model.buyer("microsoft").procurement.candidates


def test_a_scenario_can_open_a_vendor_to_every_buyer(params):
    model = MarketModel.from_params(apply_overrides(params, ["end=2024-03", 'supplier.sells_to_others=["Google"]']),
                                    seed=0)
    assert "tpu_v7" in model.buyer("microsoft").procurement.candidates
    assert "trn3" not in model.buyer("microsoft").procurement.candidates


def test_the_owner_of_custom_chips_pays_their_cost_and_others_the_market_price(params):
    """Google pays what its TPUs cost to make (the catalog low: Epoch's cost per chip plus the server), with no
    launch premium; when it sells them to others, they pay the market price, which is higher."""
    model = MarketModel.from_params(apply_overrides(params, ["end=2024-03", 'supplier.sells_to_others=["Google"]']),
                                    seed=0)
    google = model.suppliers["Google"]
    t = google.first["tpu_v7"]  # launch month: the market price carries its launch premium
    cost = systems()["tpu_v7"].price_usd_low
    assert model.buyer("google").procurement.price_usd("tpu_v7", t) == cost
    assert model.buyer("microsoft").procurement.price_usd("tpu_v7", t) == google.price_usd("tpu_v7", t) > cost
    assert model.buyer("microsoft").procurement.cost_per_gpu_usd("tpu_v7", t) > \
        model.buyer("google").procurement.cost_per_gpu_usd("tpu_v7", t)
    nvidia = model.suppliers["NVIDIA"]  # a vendor that sells to everyone has no owner: everyone pays its price
    assert model.buyer("google").procurement.price_usd("gb300_nvl72", t) == nvidia.price_usd("gb300_nvl72", t)


def test_the_software_discount_lowers_what_a_buyer_counts_on(params):
    model = MarketModel.from_params(apply_overrides(params, ["end=2024-03"]), seed=0)
    p = model.buyer("microsoft").procurement
    spec = model.spec.supplier
    assert spec.discount("mi300x", 2024) < 1 and spec.discount("mi355x", 2026) == 1.0
    plain = p.capability.value_per_gpu("mi300x", p.terms.training_weight, model.date_of(0), model.date_of(0),
                                       cluster_gpus=p.cluster_gpus("mi300x"))
    assert p.value_per_gpu("mi300x", 0) == pytest.approx(spec.discount("mi300x", 2024) * plain)


def test_a_system_costs_its_owner_its_price_its_facility_and_its_energy(params):
    """H100 server (10.2 kW) at a hyperscaler: $11.7M per MW of critical IT (Cushman & Wakefield 2025) builds its
    0.0102 MW, and 10.2 kW x PUE 1.15 x 8,760 h x 6 years x $0.08/kWh is its energy."""
    model = MarketModel.from_params(apply_overrides(params, ["end=2024-03"]), seed=0)
    p = model.buyer("microsoft").procurement
    terms = p.terms
    assert (terms.facility_usd_per_mw, terms.pue) == (11.7e6, 1.15)
    assert (terms.service_life_years, terms.usd_per_kwh) == (6, 0.08)
    price = model.supplier.price_usd("hgx_h100", 0)
    facility, energy = 0.0102 * 11.7e6, 10.2 * 1.15 * 8760 * 6 * 0.08
    assert ownership_cost_usd(price, 10.2, terms) == pytest.approx(price + facility + energy)
    assert p.cost_per_gpu_usd("hgx_h100", 0) == pytest.approx((price + facility + energy) / 8)


def test_a_cheap_chip_that_needs_more_power_for_its_work_loses_on_the_full_cost(params):
    """Two systems with the same value per dollar of price: the one that needs more power per dollar scores lower,
    by the ratio of their full costs; without facility and energy costs they would tie."""
    model = MarketModel.from_params(apply_overrides(params, ["end=2024-03"]), seed=0)
    p = model.buyer("coreweave").procurement
    t, cheap, dear = 0, "mi300x", "hgx_h100"
    price = {k: p.supplier_of(k).price_usd(k, t) for k in (cheap, dear)}
    value = {k: p.value_per_gpu(k, t) for k in (cheap, dear)}
    kw = {k: systems()[k].system_power_kw for k in (cheap, dear)}
    assert kw[cheap] / price[cheap] > kw[dear] / price[dear]  # the cheap chip needs more power per dollar
    p.value_per_gpu = lambda k, *_: value[dear] * price[k] / price[dear]  # same value per dollar of price
    p._scores.clear()
    waits = {k: p.supplier_of(k).expected_wait_months(k, t) for k in (cheap, dear)}
    assert waits[cheap] == waits[dear] == 0
    score = {k: p.score(k, t, sites_ready=True) for k in (cheap, dear)}
    full = {k: ownership_cost_usd(price[k], kw[k], p.terms) / price[k] for k in (cheap, dear)}
    assert score[cheap] < score[dear]
    assert score[cheap] / score[dear] == pytest.approx(full[dear] / full[cheap])


def test_a_buyer_builds_power_for_the_systems_it_chooses(params):
    """Google chooses TPUs: the power it plans costs what a MW of its choice costs it (its own chips at cost), not a
    MW of NVIDIA's newest. Checked in each month it procures, on the scores it sees then (they change later in the
    month, as deliveries grow its clusters)."""
    model = MarketModel.from_params(apply_overrides(params, ["end=2024-06"]), seed=0)
    p = model.buyer("google").procurement
    planned: dict[int, float] = {}
    procure = p.procure

    def procure_and_note(t: int) -> None:
        chosen = p._weights({k: p.score(k, t, sites_ready=True) for k in p.offered(t)})
        if not chosen or p.treasury.cash_usd() <= 0:
            procure(t)
            return
        assert any(systems()[k].vendor == "Google" for k in chosen)
        usd_per_mw = [p.price_usd(k, t) / (systems()[k].system_power_kw * p.terms.pue / 1000) for k in chosen]
        procure(t)
        planned[t] = p.usd_per_facility_mw
        # a mix of the systems chosen: between the cheapest and the dearest of them per MW
        assert min(usd_per_mw) * (1 - 1e-9) <= planned[t] <= max(usd_per_mw) * (1 + 1e-9), t

    p.procure = procure_and_note
    model.run()
    assert len(planned) >= 3
    last = max(planned)  # by mid-2024 NVIDIA's newest (H200, B200 on pre-order) costs more per MW than Google's mix
    assert planned[last] < 0.8 * model.best_usd_per_facility_mw(last, p.terms.pue)


def test_slower_packaging_and_memory_growth_ships_less_compute(params):
    """Same seed, CoWoS and HBM growing at 0.6x: fewer H100e shipped across the vendors by end-2027 (NVIDIA, with
    the largest reservation, keeps about its own: the others lose the slack it would have left them)."""
    def shipped_h100e(growth: float) -> float:
        model = short_run(params, "end=2027-12", f"supplier.supply_growth_multiplier={growth}", seed=0)
        return sum(sup.units_shipped_total[k] * systems()[k].gpus_per_system * systems()[k].h100e_per_gpu
                   for sup in model.suppliers.values() for k in sup.keys)

    assert shipped_h100e(0.6) < 0.98 * shipped_h100e(1.0)


def test_same_seed_same_vendor_shipments(params):
    a, b = short_run(params, seed=3), short_run(params, seed=3)
    for v in a.suppliers:
        assert a.suppliers[v].units_shipped_total == b.suppliers[v].units_shipped_total
    assert a.market_frame().equals(b.market_frame())


@pytest.mark.parametrize(("override", "message"), [
    ("supplier.owners.Google=googel", "supplier.owners.Google: expected a named agent, got 'googel'"),
    ("hyperscaler.microsoft.fleet_start.tpu_v7=1000",
     "hyperscaler.microsoft.fleet_start.tpu_v7: expected systems sold to others or its own vendor's"),
    ("supplier.unused_reservation_transfer_share=1.5",
     "supplier.unused_reservation_transfer_share: expected a number <= 1, got 1.5"),
    ("supplier.reserved_cowos_share.AMD.2026=0.5",
     "supplier.reserved_cowos_share: expected the vendors' shares to sum to at most 1 in every year"),
])
def test_vendor_inputs_are_checked_with_one_line_errors(params, override, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate(apply_overrides(params, [override]))
