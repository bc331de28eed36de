"""TPU v4 and v5e (issue 18): most of Google's TPU fleet before 2025. They are in the catalog, sourced like the other
TPUs, for the fleets that own them; no vendor sells a system after the last month it was made (`last_shipment`); and
Google's starting fleet holds every v4, v5e and v5p Epoch AI counts as made by the end of 2023, so its H100e in 2024
is compared with Epoch's chip-owner estimates like for like."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from conftest import catalog_with_value

from model.errors import InputError
from model.hardware import get_system
from model.hardware.systems import KINDS, load_systems, systems
from model.market import MarketModel
from model.market.calendar import month_index
from model.scenario import load_scenario
from model.scenario.loading import apply_overrides, load_scenario_dict

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"
RAMPS_CSV = ROOT / "docs" / "reference" / "vendor_ramps.csv"
EPOCH_TPU = "https://github.com/epoch-research/ai-chip-counts/blob/10c28e48b450bb0acf3c4c53c8d4b2ab38dc47cc/"
OLD_TPUS = {"TPU v4": "tpu_v4", "TPU v5e": "tpu_v5e"}
TPU_RACK_FACTOR = 1.13  # a TPU system's power over Epoch's chip power (docs/reference/vendors.md)
NON_ACCELERATOR_USD_PER_CHIP = 4000  # the system price's server share per chip (docs/reference/vendors.md)


def _google_quarters() -> list[dict[str, str]]:
    with RAMPS_CSV.open(newline="", encoding="utf-8") as handle:
        return [r for r in csv.DictReader(handle) if r["vendor"] == "Google"]


def test_the_catalog_holds_googles_published_figures():
    """Cloud TPU docs: v4 275 TFLOP/s bf16 or int8, 32 GiB at 1,200 GB/s, 4,096-chip pods of 3-D tori; v5e 197 bf16,
    393 int8, 16 GB at 819 GB/s, ICI 400 GB/s, 256-chip 2-D torus pods."""
    v4, v5e = get_system("TPU v4"), get_system("v5e")
    assert (v4.bf16_dense_tflops, v4.int8_dense_tops, v4.hbm_gb, v4.hbm_tb_s) == (275, 275, 32, 1.2)
    assert (v4.scaleup_topology, v4.torus_dims, v4.nvlink_domain_gpus, v4.gpus_per_system) == (
        "torus3d", (16, 16, 16), 4096, 64)
    assert (v5e.bf16_dense_tflops, v5e.int8_dense_tops, v5e.hbm_gb, v5e.hbm_tb_s, v5e.nvlink_gb_s) == (
        197, 393, 16, 0.819, 400)
    assert (v5e.scaleup_topology, v5e.torus_dims, v5e.nvlink_domain_gpus) == ("torus2d", (16, 16), 256)
    assert v4.fp4_dense_tflops is None and v5e.fp4_dense_tflops is None
    assert v4.h100e_per_gpu == pytest.approx(275 / 989) and v5e.h100e_per_gpu == pytest.approx(197 / 989)
    for s in (v4, v5e):
        assert not s.sold_to_others and s.vendor == "Google"
        assert s.sources["bf16_dense_tflops"].url == f"https://docs.cloud.google.com/tpu/docs/{s.key[4:]}"
        for name, source in s.sources.items():
            assert source.kind in KINDS and source.url.startswith(("http://", "https://")), (s.key, name)


@pytest.mark.parametrize("chip", sorted(OLD_TPUS))
def test_cost_power_and_last_month_are_epochs(chip):
    """Every Epoch quarter of the chip gives the catalog's chip cost and (with the TPU rack factor) its system power;
    the last month it was made is the end of Epoch's last quarter with units; the system price is the chips plus the
    same server share per chip as every captive chip."""
    s = systems()[OLD_TPUS[chip]]
    quarters = [r for r in _google_quarters() if r["chip"] == chip]
    assert quarters and all(r["system"] == s.key for r in quarters)
    for r in quarters:
        units = float(r["units_median"])
        assert float(r["cost_usd_median"]) / units == pytest.approx(s.chip_price_usd_low, rel=0.001), r
        chip_kw = float(r["power_mw_median"]) * 1000.0 / units
        assert s.system_power_kw_per_gpu == pytest.approx(chip_kw * TPU_RACK_FACTOR, rel=0.01), r
        assert s.sources["chip_price_usd_low"].url.startswith(EPOCH_TPU)
    assert s.last_shipment == max(r["quarter_end"] for r in quarters)[:7]
    assert s.first_shipment <= s.volume <= s.last_shipment
    for bound in ("low", "high"):
        chips = getattr(s, f"chip_price_usd_{bound}") * s.gpus_per_system
        expected = chips + NON_ACCELERATOR_USD_PER_CHIP * s.gpus_per_system
        assert getattr(s, f"price_usd_{bound}") == pytest.approx(expected, rel=0.005), bound


def test_a_last_shipment_that_is_not_a_month_after_the_first_is_refused(tmp_path):
    bad_file, _ = catalog_with_value(tmp_path, "tpu_v4", "last_shipment", "2020-12")
    with pytest.raises(InputError, match="'tpu_v4': expected last_shipment 2020-12 not before first_shipment"):
        load_systems(bad_file)
    bad_file, number = catalog_with_value(tmp_path, "tpu_v5e", "last_shipment", "2025-3")
    with pytest.raises(InputError, match=f"line {number} .*'tpu_v5e'.*'last_shipment'.*expected a month YYYY-MM"):
        load_systems(bad_file)
    # besides the old TPUs, only the H20 (made for China until the licence requirement of April 2025) and
    # Trainium1 (made until 2024-12, tests/test_trn1.py) have ended
    ended = (*OLD_TPUS.values(), "hgx_h20", "trn1")
    assert all(s.last_shipment is None for k, s in systems().items() if k not in ended)


@pytest.fixture(scope="module")
def model():
    return MarketModel.from_params(apply_overrides(load_scenario_dict(BASELINE), ["end=2025-12"]), seed=0)


def test_nothing_is_sold_after_the_last_month_it_was_made(model):
    """TPU v4 (last made 2023-09) is never on offer in the run; TPU v5e is until 2025-03, and an order still open
    then gets nothing more."""
    google, buyer = model.suppliers["Google"], model.buyer("google")
    last = month_index("2025-03", model.start)
    for t in range(model.n_months):
        assert not google.orderable("tpu_v4", t, 6) and not google.shipping("tpu_v4", t)
        assert google.orderable("tpu_v5e", t, 6) == google.shipping("tpu_v5e", t) == (t <= last), t
        assert ("tpu_v5e" in buyer.procurement.offered(t)) == (t <= last), t
    assert google.ramp_fraction("tpu_v5e", last) == 1.0 and google.ramp_fraction("tpu_v5e", last + 1) == 0.0
    price = google.price_usd("tpu_v5e", last)
    for t, shipped in ((last, 4), (last + 1, 0)):
        google.place_order(buyer, "tpu_v5e", 4, price)
        need = google.need(t)
        google.ship(t, need, need)
        assert google.shipped_month["tpu_v5e"] == shipped, t
    assert google.backlog_units("tpu_v5e") == 4  # what was not made by then never ships
    assert google.expected_wait_months("tpu_v5e", last + 1) > 12 * 50  # buyers see it as never: they move the order


def test_googles_starting_tpus_are_epochs_end_2023_stock():
    """Google's TPUs at the start are every unit Epoch counts as made by 2023-12 of the chips the catalog has, so
    its H100e (dense BF16 over H100's 989 TFLOP/s, from the catalog) is Epoch's stock's within 1% (the scenario may
    round its counts to 1%); the chips the catalog lacks (TPU v4i) draw under 2% of that stock's power."""
    fleet = load_scenario(BASELINE).hyperscaler["google"].fleet_start
    made = [r for r in _google_quarters() if r["quarter_end"] <= "2023-12-31"]
    units: dict[str, float] = {}
    for r in made:
        if r["system"]:
            units[r["system"]] = units.get(r["system"], 0.0) + float(r["units_median"])
    assert set(units) == {"tpu_v4", "tpu_v5e", "tpu_v5p"}
    tpus = {k: gpus for k, gpus in fleet.items() if systems()[k].vendor == "Google"}
    assert set(tpus) == set(units)
    for k, n in units.items():
        assert tpus[k] == pytest.approx(n, rel=0.01), k
    h100e = sum(gpus * systems()[k].h100e_per_gpu for k, gpus in tpus.items())
    epoch_h100e = sum(n * systems()[k].bf16_dense_tflops / 989.0 for k, n in units.items())
    assert h100e == pytest.approx(epoch_h100e, rel=0.01)
    power = {bool(r["system"]): 0.0 for r in made}
    for r in made:
        power[bool(r["system"])] += float(r["power_mw_median"])
    assert power[False] < 0.02 * (power[False] + power[True])


def test_the_starting_fleet_is_online_from_the_first_month(model):
    """The starting fleet runs at the start and fits the power the scenario starts with (a TPU v5e pod spans four
    racks of about 16 kW: air-cooled)."""
    google = model.buyer("google")
    fleet = load_scenario(BASELINE).hyperscaler["google"].fleet_start
    assert not google.is_liquid["tpu_v5e"] and not google.is_liquid["tpu_v4"]
    fresh = MarketModel.from_params(apply_overrides(load_scenario_dict(BASELINE), ["end=2024-02"]), seed=0)
    online = fresh.buyer("google").fleet.online
    assert {k: online[k] for k in fleet} == fleet
