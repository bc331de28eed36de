"""The hardware catalog: provenance of every value, the GB300 NVL72 facts of the mission, and bad-row errors."""

import shutil

import pytest
from conftest import catalog_with_value

from model.errors import InputError
from model.hardware import SYSTEM_KEYS, get_system, load_systems, systems
from model.hardware.systems import DATA_FILE, FLAG_FIELDS, FLOAT_FIELDS, INT_FIELDS, KINDS, OPTIONAL_FIELDS


def test_catalog_has_every_system_and_every_value_is_sourced():
    catalog = systems()
    assert tuple(catalog) == SYSTEM_KEYS
    for key, system in catalog.items():
        for name in FLOAT_FIELDS + INT_FIELDS + OPTIONAL_FIELDS + FLAG_FIELDS:
            value = getattr(system, name)
            if value is None and name in OPTIONAL_FIELDS:
                continue
            source = system.sources.get(name)
            assert source is not None, f"{key}.{name} has no source"
            assert source.kind in KINDS
            assert source.url.startswith("http")


def test_gb300_nvl72_rack_facts_follow_from_per_gpu_values():
    gb300 = get_system("gb300_nvl72")
    rack = gb300.rack_figures()
    assert gb300.gpus_per_system == 72
    assert gb300.cpus_per_system == 36
    assert rack["fp4_sparse_pflops"] == pytest.approx(1440, rel=0.01)  # 1.44 EF sparse
    assert rack["fp4_dense_pflops"] == pytest.approx(1100, rel=0.03)  # ~1.1 EF dense
    assert gb300.fast_memory_tb == pytest.approx(37, rel=0.01)
    assert rack["hbm_tb"] == pytest.approx(20.7, rel=0.01)
    assert rack["nvlink_tb_s"] == pytest.approx(130, rel=0.01)
    assert gb300.scaleout_gbit_s == 800


def test_renamed_products_are_aliases_of_one_key():
    assert get_system("Vera Rubin NVL144").key == "vr_nvl72"
    assert get_system("VR200 NVL72").key == "vr_nvl72"
    assert get_system("Rubin Ultra NVL576").key == "rubin_ultra_nvl144"
    assert get_system("Kyber NVL144").key == "rubin_ultra_nvl144"


def test_statuses_and_projections():
    assert get_system("rubin_cpx").status == "dropped"
    feynman = get_system("feynman")
    assert feynman.status == "projection"
    perf_fields = ("bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops", "hbm_gb", "hbm_tb_s")
    assert all(feynman.sources[f].kind == "projection" for f in perf_fields)
    assert get_system("hgx_h100").dense_tflops("nvfp4") is None  # Hopper has no FP4


def test_generations_get_faster():
    order = ["hgx_h100", "gb200_nvl72", "gb300_nvl72", "vr_nvl72", "rubin_ultra_nvl144", "feynman"]
    fp8 = [get_system(k).dense_tflops("fp8") for k in order]
    assert fp8 == sorted(fp8)


def test_h100e_is_dense_bf16_over_989():
    assert get_system("hgx_h100").h100e_per_gpu == pytest.approx(1.0)
    assert get_system("gb200_nvl72").h100e_per_gpu == pytest.approx(2500 / 989)


@pytest.mark.parametrize(
    ("field", "bad", "expected"),
    [
        ("hbm_gb", "lots", "expected a number, got 'lots'"),
        ("gpus_per_system", "7.5", "expected a whole number"),
        ("status", "rumoured", "expected one of shipping"),
        ("first_shipment", "July 2025", "expected a month YYYY-MM"),
        ("scaleout_in_network_reduction", "sharp", "expected yes or no, got 'sharp'"),
        ("attention_exp_tera_per_s", "-1", "expected a positive number"),
    ],
)
def test_malformed_row_names_line_system_and_field(tmp_path, field, bad, expected):
    bad_file, line_number = catalog_with_value(tmp_path, "gb300_nvl72", field, bad)
    with pytest.raises(InputError) as info:
        load_systems(bad_file)
    message = str(info.value)
    assert str(bad_file) in message
    assert f"line {line_number}" in message
    assert "gb300_nvl72" in message and field in message
    assert expected in message


def test_missing_source_is_rejected(tmp_path):
    bad_file = tmp_path / "systems.csv"
    shutil.copy(DATA_FILE, bad_file)
    text = bad_file.read_text().replace(
        "hgx_h100,hbm_gb,80,official,https://www.exxactcorp.com/blog/HPC/NVIDIA-H100,", "hgx_h100,hbm_gb,80,official,,"
    )
    bad_file.write_text(text)
    with pytest.raises(InputError, match="hbm_gb.*expected a source URL"):
        load_systems(bad_file)


def test_an_unquoted_comma_in_a_note_is_rejected_not_silently_dropped(tmp_path):
    bad_file = tmp_path / "systems.csv"
    shutil.copy(DATA_FILE, bad_file)
    text = bad_file.read_text().replace(
        "hgx_h100,hbm_gb,80,official,https://www.exxactcorp.com/blog/HPC/NVIDIA-H100,",
        "hgx_h100,hbm_gb,80,official,https://www.exxactcorp.com/blog/HPC/NVIDIA-H100,SXM5, 80 GB")
    bad_file.write_text(text)
    with pytest.raises(InputError, match="hgx_h100.*hbm_gb.*expected 6 cells, got 7"):
        load_systems(bad_file)


def test_blackwell_ultra_doubles_the_softmax_rate_and_cpx_triples_it():
    """NVIDIA: Blackwell Ultra doubles SFU throughput over Blackwell; Rubin CPX has 3x GB300's attention speed."""
    assert get_system("gb300_nvl72").attention_exp_tera_per_s == pytest.approx(
        2 * get_system("gb200_nvl72").attention_exp_tera_per_s, rel=0.15)
    assert get_system("rubin_cpx").attention_exp_tera_per_s == pytest.approx(
        3 * get_system("gb300_nvl72").attention_exp_tera_per_s, rel=0.01)
    assert get_system("gb300_nvl72").sources["attention_exp_tera_per_s"].kind == "official"


def test_every_price_is_a_deployed_system_price_not_chips_alone():
    """Buyers compare systems by value per dollar, so no vendor's price may be its chips alone: where a chip price is
    known (TPU, Trainium, AMD) the system costs more per accelerator than the chip, and every vendor's system price
    per accelerator is at least the cheapest known chip plus the lowest server share the catalog derives."""
    catalog = systems()
    with_chip = {k: s for k, s in catalog.items() if s.chip_price_usd_low is not None}
    assert {s.vendor for s in with_chip.values()} == {"Google", "AWS", "AMD"}
    assert all(s.vendor == "NVIDIA" for k, s in catalog.items() if k not in with_chip)  # NVIDIA prices whole servers
    shares = []
    for key, s in with_chip.items():
        for bound in ("low", "high"):
            per_gpu = getattr(s, f"price_usd_{bound}") / s.gpus_per_system
            chip = getattr(s, f"chip_price_usd_{bound}")
            assert per_gpu > chip, f"{key}: price_usd_{bound} per accelerator {per_gpu:.0f} not above its chip {chip}"
            shares.append(per_gpu - chip)
        assert s.chip_price_usd_low <= s.chip_price_usd_high, key
        assert "server" in s.sources["price_usd_low"].note, key  # the derivation is stated
    least_share = min(shares)
    assert least_share >= 1000  # a real server share (hosts, DRAM, NICs, chassis), not rounding
    cheapest_chip = min(s.chip_price_usd_low for s in with_chip.values())
    for key, s in catalog.items():
        assert s.price_usd_low / s.gpus_per_system >= cheapest_chip + least_share, key


def test_a_system_price_at_or_below_its_chips_is_rejected(tmp_path):
    bad_file = tmp_path / "systems.csv"
    shutil.copy(DATA_FILE, bad_file)
    text = bad_file.read_text()
    assert "mi300x,price_usd_low,112000," in text
    bad_file.write_text(text.replace("mi300x,price_usd_low,112000,", "mi300x,price_usd_low,80000,"))
    with pytest.raises(InputError, match=r"mi300x.*price_usd_low 80000 expected above its chips alone \(8 x "
                                         r"chip_price_usd_low 10000\)"):
        load_systems(bad_file)
