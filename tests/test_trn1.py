"""AWS Trainium1 (EC2 trn1.32xlarge): Epoch AI counts ~112k made in each quarter of 2024 next to the Trainium2 ramp.
It is in the catalog with the AWS Neuron docs' figures and Epoch's power; only AWS, its owner, may order it; and no
system ships after the last month Epoch counts units of it (`last_shipment` 2024-12)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from model.capability.build import capability_table
from model.hardware import get_system
from model.hardware.systems import KINDS, systems
from model.market import MarketModel
from model.market.calendar import month_index
from model.market.cooling import needs_liquid
from model.scenario import load_scenario
from model.scenario.loading import apply_overrides, load_scenario_dict

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"
RAMPS_CSV = ROOT / "docs" / "reference" / "vendor_ramps.csv"
NEURON_DOCS = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/"
EPOCH_TRAINIUM = ("https://github.com/epoch-research/ai-chip-counts/blob/10c28e48b450bb0acf3c4c53c8d4b2ab38dc47cc/"
                  "canonical_export/trainium/sales_quarterly_by_chip.csv")
NON_ACCELERATOR_USD_PER_CHIP = 4000  # the system price's server share per chip (docs/reference/vendors.md)


def _trainium1_quarters() -> list[dict[str, str]]:
    with RAMPS_CSV.open(newline="", encoding="utf-8") as handle:
        return [r for r in csv.DictReader(handle) if r["chip"] == "Trainium1"]


def test_the_catalog_holds_the_neuron_docs_figures():
    """Neuron docs: per chip 190 FP16/BF16/cFP8 TFLOPS, 380 INT8 TOPS, 32 GiB at 820 GiB/s, NeuronLink-v2 384 GiB/s;
    trn1.32xlarge: 16 chips in a 2-D torus, 512 GiB, 800 Gbps EFA."""
    s = get_system("Trainium1")
    assert s.key == "trn1" and get_system("trn1.32xlarge").key == "trn1" and get_system("Trainium2").key == "trn2"
    assert (s.bf16_dense_tflops, s.fp8_dense_tflops, s.fp4_dense_tflops) == (190, 190, None)
    # INT8 (380 TOPS) is left out: Trainium trains in BF16/cFP8, and the capability table would train in INT8
    assert s.int8_dense_tops is None and "380 INT8" in s.sources["fp8_dense_tflops"].note
    assert (s.hbm_gb, s.hbm_tb_s, s.fast_memory_tb) == (32, 0.82, 0.512)
    assert s.fast_memory_tb == pytest.approx(s.gpus_per_system * s.hbm_gb / 1000)
    assert (s.gpus_per_system, s.nvlink_domain_gpus, s.nvlink_gb_s) == (16, 16, 384)
    assert (s.scaleup_topology, s.torus_dims) == ("torus2d", (4, 4))
    assert s.scaleout_gbit_s * s.gpus_per_system == 800  # EFA per instance
    assert s.h100e_per_gpu == pytest.approx(190 / 989)
    assert s.bf16_dense_tflops < get_system("trn2").bf16_dense_tflops / 3  # Trainium2's guide: 3.4x BF16
    assert s.architecture == "Trainium1" != get_system("trn2").architecture  # they do not train together
    for name in ("bf16_dense_tflops", "fp8_dense_tflops", "hbm_gb", "hbm_tb_s"):
        assert s.sources[name].url == NEURON_DOCS + "trainium.html" and s.sources[name].kind == "official", name
    for name in ("gpus_per_system", "nvlink_gb_s", "scaleup_topology", "scaleout_gbit_s"):
        assert s.sources[name].url == NEURON_DOCS + "trn1-arch.html" and s.sources[name].kind == "official", name
    for name, source in s.sources.items():
        assert source.kind in KINDS and source.url.startswith(("http://", "https://")), name


def test_power_dates_and_price_follow_epoch_and_the_trainium2_conventions():
    """Epoch's chip power (MW over units, every 2024 quarter) is the catalog's chip power, and the system draws it
    times Trainium2's system-over-chip factor; the last month made is the end of Epoch's last quarter with units
    (Epoch's Trainium2 quarters go on into 2025); Epoch has no Trainium1 cost, so the chip price is an assumption,
    marked as one, and the system price is the chips plus the server share per chip every captive chip has."""
    s, trn2 = systems()["trn1"], systems()["trn2"]
    quarters = _trainium1_quarters()
    assert len(quarters) == 4 and all(r["system"] == "trn1" and r["source_url"] == EPOCH_TRAINIUM for r in quarters)
    for r in quarters:
        chip_kw = float(r["power_mw_median"]) * 1000.0 / float(r["units_median"])
        assert s.gpu_tdp_w / 1000.0 == pytest.approx(chip_kw, rel=0.01), r["quarter_start"]
        assert not r["cost_usd_median"]
    rack_factor = trn2.system_power_kw / (trn2.gpus_per_system * trn2.gpu_tdp_w / 1000.0)
    assert s.system_power_kw == pytest.approx(s.gpus_per_system * s.gpu_tdp_w / 1000.0 * rack_factor)
    assert s.last_shipment == max(r["quarter_end"] for r in quarters)[:7] == "2024-12"
    assert s.sources["last_shipment"].url == s.sources["gpu_tdp_w"].url == EPOCH_TRAINIUM
    assert s.announced <= s.first_shipment == "2022-10" <= s.volume <= s.last_shipment
    assert "assumption" in s.sources["chip_price_usd_low"].note
    assert s.chip_price_usd_low == trn2.chip_price_usd_low / 2
    assert s.chip_price_usd_high / s.chip_price_usd_low == pytest.approx(
        trn2.chip_price_usd_high / trn2.chip_price_usd_low, rel=0.01)  # the same TPU-derived ratio
    for bound in ("low", "high"):
        expected = (getattr(s, f"chip_price_usd_{bound}") + NON_ACCELERATOR_USD_PER_CHIP) * s.gpus_per_system
        assert getattr(s, f"price_usd_{bound}") == pytest.approx(expected, rel=0.001), bound


def test_trn1_is_air_cooled_and_packaged_like_trainium2():
    spec = load_scenario(BASELINE)
    assert not needs_liquid("trn1", spec.bring_up.liquid_cooling_above_kw_per_rack)
    assert systems()["trn1"].racks_per_system is None  # one server
    assert spec.supplier.gpus_per_wafer["trn1"] == spec.supplier.gpus_per_wafer["trn2"]


def test_the_performance_model_rates_trainium1_by_its_compute_and_memory():
    """On every reference job Trainium1 does less than Trainium2 and never more than its share of H100's peak
    allows: training within 1.25x its dense cFP8 peak over H100's FP8 peak (a slower chip loses less of its peak to
    communication, so it may run a little nearer it), serving up to the larger of that peak share and its share of
    H100's memory bandwidth (decode reads weights and KV cache)."""
    table = capability_table(load_scenario(BASELINE))
    trn1, trn2, h100 = (systems()[k] for k in ("trn1", "trn2", "hgx_h100"))
    compute_share = trn1.fp8_dense_tflops / h100.fp8_dense_tflops
    bandwidth_share = trn1.hbm_tb_s / h100.hbm_tb_s
    for month in ("2024-06", "2025-06"):
        v1, v2 = table.value("trn1", month), table.value("trn2", month)
        assert 0 < v1.training < v2.training and v1.training <= 1.25 * compute_share, month
        for serve1, serve2 in zip(v1.serving, v2.serving, strict=True):
            assert 0 < serve1 < serve2 and serve1 <= max(compute_share, bandwidth_share), month


@pytest.fixture(scope="module")
def model():
    return MarketModel.from_params(apply_overrides(load_scenario_dict(BASELINE), ["end=2025-06"]), seed=0)


def test_only_aws_may_order_trainium1(model):
    aws = model.suppliers["AWS"]
    assert aws.may_order("aws", "trn1") and not aws.may_order("microsoft", "trn1")
    with pytest.raises(ValueError, match="microsoft may not order trn1"):
        aws.place_order(model.buyer("microsoft"), "trn1", 1, 1.0)
    assert "trn1" in model.buyer("aws").procurement.candidates
    others = [b for b in model.buyers if b.name != "aws"]
    assert others and all("trn1" not in b.procurement.candidates for b in others)
    # AWS pays its own cost (the catalog low) from the first month
    assert model.buyer("aws").procurement.price_usd("trn1", 0) == systems()["trn1"].price_usd_low


def test_trainium1_ships_only_in_its_catalog_window(model):
    """On offer and shipping from the run's start (made since 2022-10) through 2024-12, never after; an order
    still open then gets nothing more, and no buyer's Trainium1 grows after the last shipments are installed."""
    aws, buyer = model.suppliers["AWS"], model.buyer("aws")
    last = month_index("2024-12", model.start)
    assert 0 < last < model.n_months - 1
    for t in range(model.n_months):
        assert aws.orderable("trn1", t, 6) == aws.shipping("trn1", t) == (t <= last), t
        assert ("trn1" in buyer.procurement.offered(t)) == (t <= last), t
    assert aws.ramp_fraction("trn1", 0) == 1.0 and aws.ramp_fraction("trn1", last + 1) == 0.0
    shipped = []
    for _ in range(model.n_months):
        model.step()
        shipped.append(aws.shipped_month["trn1"])
    assert sum(shipped[last + 1:]) == 0
    assert all(b.delivered["trn1"] == 0 for b in model.buyers if b.name != "aws")
    assert aws.backlog_units("trn1") == 0 or aws.expected_wait_months("trn1", last + 1) > 12 * 50
