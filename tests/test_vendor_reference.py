"""Sourced non-NVIDIA reference data (issue 18): the TPU/Trainium/Instinct catalog, published runs, market facts.

The fact sheet `docs/reference/vendors.csv` uses the long form of `model/hardware/data/systems.csv`; its systems are in
the catalog, whose loader applies the row rules, so every value both files hold must agree (values of catalog fields are
read back from the loaded catalog), plus the sheet's extra fields. The checks below are properties a wrong row would
break: ordering of dates, sparse >= dense, torus shape = ICI domain, MFU < 1.
"""

import csv
import math
import re
from pathlib import Path

import pytest

from model.hardware import get_system
from model.hardware.systems import (
    ALL_FIELDS,
    DATE_FIELDS,
    KINDS,
    NVIDIA_SYSTEM_KEYS,
    OTHER_VENDOR_SYSTEM_KEYS,
    PRECISIONS,
    REQUIRED_FIELDS,
)

ROOT = Path(__file__).resolve().parents[1]
VENDORS_CSV = ROOT / "docs" / "reference" / "vendors.csv"
RUNS_CSV = ROOT / "validation" / "vendor_runs.csv"
FACTS_CSV = ROOT / "docs" / "reference" / "vendor_market_facts.csv"
MARKET_FACTS_CSV = ROOT / "docs" / "reference" / "market_facts.csv"

VENDOR_KEYS = OTHER_VENDOR_SYSTEM_KEYS
CATALOG_VENDOR_NAMES = {"google": "Google", "aws": "AWS", "amd": "AMD"}
TOPOLOGIES = ("switched", "torus2d", "torus3d", "full_mesh")
EXTRA_REQUIRED = (
    "vendor",
    "scaleup_topology",
    "pod_max_chips",
    "sold_to_others",
    "hbm_stacks",
    "hbm_generation",
    "cowos_package",
    "gpus_per_wafer",
    "process_node",
)
EXTRA_INT = ("pod_max_chips", "hbm_stacks", "gpus_per_wafer")
EXTRA_FLOAT = ("fp6_dense_tflops", "int8_dense_tops")
EXTRA_TEXT = ("vendor", "scaleup_topology", "sold_to_others", "hbm_generation", "cowos_package", "process_node")
EXTRA_OPTIONAL = ("torus_dims", "cube_dims", "fp4_format", "fp6_dense_tflops", "int8_dense_tops")
KNOWN_FIELDS = ALL_FIELDS + EXTRA_REQUIRED + EXTRA_OPTIONAL
DIMS = re.compile(r"^\d+(x\d+){1,2}$")
PARTIAL_DATE = re.compile(r"^\d{4}(-(0[1-9]|1[0-2])(-\d{2})?)?$")


def _read_vendors() -> dict[str, dict[str, dict[str, str]]]:
    """system -> field -> row, enforcing the header and one row per (system, field)."""
    with VENDORS_CSV.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == ["system", "field", "value", "kind", "source_url", "note"]
        table: dict[str, dict[str, dict[str, str]]] = {}
        for row in reader:
            row["line"] = str(reader.line_num)
            fields = table.setdefault(row["system"], {})
            assert row["field"] not in fields, f"line {reader.line_num}: duplicate {row['system']}.{row['field']}"
            fields[row["field"]] = row
    return table


def _parsed(table) -> dict[str, dict[str, object]]:
    """Values of catalog fields as the loaded catalog holds them (its loader checked the row rules), and by type
    for the sheet's extra fields."""
    out: dict[str, dict[str, object]] = {}
    for system, fields in table.items():
        values: dict[str, object] = {}
        catalog = get_system(system)
        for name, row in fields.items():
            raw = row["value"].strip()
            if name in ALL_FIELDS:
                values[name] = getattr(catalog, name)
            elif name in EXTRA_INT:
                values[name] = int(raw)
            elif name in EXTRA_FLOAT:
                values[name] = float(raw)
            else:
                values[name] = raw
        out[system] = values
    return out


@pytest.fixture(scope="module")
def vendors():
    return _parsed(_read_vendors())


def test_every_vendor_value_is_sourced_with_a_valid_kind():
    table = _read_vendors()
    assert tuple(table) == VENDOR_KEYS
    for system, fields in table.items():
        for name, row in fields.items():
            where = f"line {row['line']} ({system}.{name})"
            assert name in KNOWN_FIELDS, f"{where}: unknown field"
            assert row["kind"] in KINDS, f"{where}: kind {row['kind']!r}"
            assert row["source_url"].startswith(("http://", "https://")), f"{where}: no source URL"
            assert row["value"].strip(), f"{where}: empty value"


def test_catalog_rules_hold_for_every_vendor_system(vendors):
    """The rules load_systems applies to NVIDIA rows: required fields, dates in order, positive numbers, prices."""
    for system, values in vendors.items():
        catalog_only = {"attention_exp_tera_per_s", "scaleout_in_network_reduction"}  # sourced in the catalog
        missing = [f for f in REQUIRED_FIELDS + EXTRA_REQUIRED if f not in values and f not in catalog_only]
        assert not missing, f"{system}: missing {missing}"
        dates = [values[f] for f in DATE_FIELDS]
        assert dates == sorted(dates), f"{system}: announced <= first_shipment <= volume violated: {dates}"
        assert values["price_usd_low"] <= values["price_usd_high"], system
        for name in EXTRA_INT + EXTRA_FLOAT:
            if name in values:
                assert values[name] > 0, f"{system}.{name}"
        assert values["vendor"] in CATALOG_VENDOR_NAMES.values()  # NVIDIA's systems are not in this sheet
        assert isinstance(values["sold_to_others"], bool)
        assert values["scaleup_topology"] in TOPOLOGIES


def test_vendor_keys_do_not_collide_with_nvidia_keys():
    assert not set(VENDOR_KEYS) & set(NVIDIA_SYSTEM_KEYS)


def test_the_catalog_holds_the_sheets_values_with_their_sources():
    """Every value the sheet and the catalog both carry is the same value with the same source and kind."""
    catalog_csv = ROOT / "model" / "hardware" / "data" / "systems.csv"
    with catalog_csv.open(newline="", encoding="utf-8") as handle:
        catalog = {(r["system"], r["field"]): r for r in csv.DictReader(handle)}
    compared = 0
    for system, fields in _read_vendors().items():
        for name, row in fields.items():
            if (system, name) not in catalog:
                continue
            got = catalog[(system, name)]
            expected = row["value"]
            if name == "vendor":
                expected = CATALOG_VENDOR_NAMES[expected]
            if name == "sold_to_others":
                expected = {"true": "yes", "false": "no"}[expected]
            assert (got["value"], got["kind"], got["source_url"]) == (expected, row["kind"], row["source_url"]), (
                f"{system}.{name}")
            compared += 1
    assert compared >= 250
    for system in VENDOR_KEYS:
        s = get_system(system)
        for name in ("attention_exp_tera_per_s", "scaleout_in_network_reduction"):
            assert s.sources[name].url.startswith("https://"), f"{system}.{name}"


def test_unreleased_rack_is_marked_as_projection():
    table = _read_vendors()
    helios = table["mi450_helios"]
    assert helios["status"]["value"] == "announced"
    for field in ("first_shipment", "volume", "gpu_tdp_w", "system_power_kw", "bf16_dense_tflops"):
        assert helios[field]["kind"] == "projection", field
    shipping = [k for k in VENDOR_KEYS if table[k]["status"]["value"] == "shipping"]
    assert "mi450_helios" not in shipping and len(shipping) == len(VENDOR_KEYS) - 1


def test_torus_shape_spans_the_scale_up_domain(vendors):
    """A torus's dimensions multiply to the chips it links; switched and meshed domains have no torus shape."""
    for system, values in vendors.items():
        torus = str(values["scaleup_topology"]).startswith("torus")
        assert ("torus_dims" in values) == torus, system
        if torus:
            dims = values["torus_dims"]
            assert DIMS.match("x".join(map(str, dims))), f"{system}: torus_dims {dims!r}"
            assert math.prod(dims) == values["nvlink_domain_gpus"], system
            assert len(dims) == (3 if values["scaleup_topology"] == "torus3d" else 2), system
        assert values["nvlink_domain_gpus"] <= values["pod_max_chips"], system
        assert values["gpus_per_system"] <= values["pod_max_chips"], system


def test_lower_precision_is_never_slower_and_sparse_never_below_dense(vendors):
    for system, values in vendors.items():
        ladder = [values["bf16_dense_tflops"], values["fp8_dense_tflops"], values["fp4_dense_tflops"]]
        ladder = [v for v in ladder if v is not None]
        assert ladder == sorted(ladder), f"{system}: {ladder}"
        for precision in PRECISIONS:
            dense, sparse = values[f"{precision}_dense_tflops"], values.get(f"{precision}_sparse_tflops")
            if sparse is not None and dense is not None:
                assert sparse >= dense, f"{system} {precision}"
        assert ("fp4_format" in values) == (values["fp4_dense_tflops"] is not None), system


def test_system_memory_is_chips_times_hbm(vendors):
    for system, values in vendors.items():
        expected = values["gpus_per_system"] * values["hbm_gb"] / 1000
        assert values["fast_memory_tb"] == pytest.approx(expected, rel=0.02), system


def test_google_and_aws_chips_are_not_sold_to_others(vendors):
    for system, values in vendors.items():
        assert values["sold_to_others"] == (values["vendor"] == "AMD"), system
        assert get_system(system).sold_to_others == (values["vendor"] == "AMD"), system
    assert all(get_system(k).sold_to_others and get_system(k).vendor == "NVIDIA" for k in NVIDIA_SYSTEM_KEYS)


def test_headline_numbers_match_their_sources(vendors):
    """Spot checks against the vendor documents cited in the rows."""
    v = vendors

    def fields(system, *names):
        return tuple(v[system][n] for n in names)

    assert fields("tpu_v5p", "bf16_dense_tflops", "hbm_tb_s", "pod_max_chips") == (459, 2.765, 8960)
    assert fields("tpu_v6e", "bf16_dense_tflops", "nvlink_gb_s", "pod_max_chips") == (918, 800, 256)
    assert fields("tpu_v7", "fp8_dense_tflops", "hbm_gb", "pod_max_chips") == (4614, 192, 9216)
    assert fields("trn2", "fp8_dense_tflops", "bf16_dense_tflops", "hbm_gb") == (1299, 667, 96)
    assert v["trn2_ultraserver"]["gpus_per_system"] * v["trn2_ultraserver"]["fp8_dense_tflops"] / 1000 == (
        pytest.approx(83.2, rel=0.01)
    )
    assert v["trn3"]["gpus_per_system"] * v["trn3"]["fp8_dense_tflops"] / 1000 == pytest.approx(362.4, rel=0.01)
    assert fields("mi300x", "bf16_dense_tflops", "hbm_gb", "gpu_tdp_w") == (1307.4, 192, 750)
    assert fields("mi355x", "fp4_dense_tflops", "hbm_gb", "gpu_tdp_w") == (10066.3, 288, 1400)
    helios = v["mi450_helios"]
    assert helios["gpus_per_system"] * helios["fp4_dense_tflops"] / 1e6 == pytest.approx(2.9, rel=0.01)  # 2.9 EF
    assert helios["gpus_per_system"] * helios["nvlink_gb_s"] / 1000 == pytest.approx(260, rel=0.01)  # 260 TB/s


# ---------------------------------------------------------------- published runs

RUN_COLUMNS = [
    "case_id", "date", "vendor", "system", "chips", "source_type", "round", "submitter", "workload", "precision",
    "scenario", "seq_len", "global_batch_seqs", "tokens", "time_to_train_min", "step_tflops_per_chip",
    "e2e_tflops_per_chip", "mfu_reported", "result", "result_unit", "tokens_per_s_per_chip", "layout", "software",
    "source_url", "note",
]  # fmt: skip
RUN_REQUIRED = (
    "case_id", "date", "vendor", "system", "chips", "source_type", "submitter", "workload", "precision", "scenario",
    "result", "result_unit", "source_url",
)  # fmt: skip
RUN_NUMERIC = (
    "chips", "seq_len", "global_batch_seqs", "tokens", "time_to_train_min", "step_tflops_per_chip",
    "e2e_tflops_per_chip", "mfu_reported", "result", "tokens_per_s_per_chip",
)  # fmt: skip
SOURCE_TYPES = ("mlperf_training", "mlperf_inference", "vendor_table")
SCENARIOS = ("training", "offline", "server", "interactive")
GPT3_FLOPS_PER_TOKEN = 1.0618e12  # the convention of validation/training_calibration.csv


def _runs() -> list[dict[str, str]]:
    with RUNS_CSV.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == RUN_COLUMNS
        return list(reader)


def test_vendor_runs_rows_are_complete(vendors):
    rows = _runs()
    ids = [r["case_id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate case_id"
    for r in rows:
        where = r["case_id"]
        missing = [c for c in RUN_REQUIRED if not r[c].strip()]
        assert not missing, f"{where}: empty {missing}"
        assert r["system"] in VENDOR_KEYS, where
        assert CATALOG_VENDOR_NAMES[r["vendor"]] == vendors[r["system"]]["vendor"], where
        assert r["source_type"] in SOURCE_TYPES, where
        assert r["scenario"] in SCENARIOS, where
        assert PARTIAL_DATE.match(r["date"]), f"{where}: date {r['date']!r}"
        assert r["source_url"].startswith("https://"), where
        for column in RUN_NUMERIC:
            if r[column].strip():
                assert float(r[column]) > 0, f"{where}: {column}"
        assert float(r["chips"]) == int(float(r["chips"])), where
        if r["source_type"] == "mlperf_training":
            assert r["time_to_train_min"] and r["result_unit"] == "minutes", where
            assert float(r["result"]) == float(r["time_to_train_min"]), where


def test_every_vendor_has_runs_and_the_gaps_are_named():
    vendors_with_runs = {r["vendor"] for r in _runs()}
    assert vendors_with_runs == {"google", "amd"}  # no published Trainium run with a stated setup (README)
    readme = (ROOT / "validation" / "README.md").read_text()
    assert "vendor_runs.csv" in readme
    for gap in ("Trainium", "Ironwood", "MI450"):
        assert gap in readme, f"README does not name the {gap} gap"


def test_measured_throughput_stays_below_peak(vendors):
    """MFU < 1 at the precision the run used (TPU MLPerf GPT-3 runs used int8 matmuls)."""
    peak_field = {"int8": "int8_dense_tops", "fp8": "fp8_dense_tflops", "bf16": "bf16_dense_tflops"}
    checked = 0
    for r in _runs():
        for column in ("step_tflops_per_chip", "e2e_tflops_per_chip"):
            if r[column] and r["precision"] in peak_field:
                peak = vendors[r["system"]][peak_field[r["precision"]]]
                assert 0 < float(r[column]) < peak, f"{r['case_id']}: {column} {r[column]} vs peak {peak}"
                checked += 1
        if r["mfu_reported"]:
            assert 0 < float(r["mfu_reported"]) < 1, r["case_id"]
    assert checked >= 10


def test_gpt3_throughput_follows_from_tokens_and_time():
    """e2e TFLOP/s per chip = tokens x FLOPs/token / (time x chips): the three logged quantities agree."""
    rows = [r for r in _runs() if r["workload"] == "gpt3-175b"]
    assert len(rows) >= 5
    for r in rows:
        seconds = float(r["time_to_train_min"]) * 60
        expected = float(r["tokens"]) * GPT3_FLOPS_PER_TOKEN / (seconds * int(r["chips"])) / 1e12
        assert float(r["e2e_tflops_per_chip"]) == pytest.approx(expected, rel=0.005), r["case_id"]
        assert float(r["step_tflops_per_chip"]) >= float(r["e2e_tflops_per_chip"]) * 0.999, r["case_id"]


def test_inference_per_chip_is_system_throughput_over_chips():
    rows = [r for r in _runs() if r["result_unit"] == "tokens/s"]
    assert rows
    for r in rows:
        assert float(r["tokens_per_s_per_chip"]) == pytest.approx(float(r["result"]) / int(r["chips"]), rel=1e-3)


# ---------------------------------------------------------------- market facts


def test_vendor_market_facts_use_the_market_facts_columns_and_are_sourced():
    with MARKET_FACTS_CSV.open(newline="", encoding="utf-8") as handle:
        columns = next(csv.reader(handle))
    with FACTS_CSV.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == columns
        rows = list(reader)
    assert len(rows) >= 40
    for r in rows:
        where = f"{r['entity']}: {r['metric']}"
        assert r["kind"] in ("reported", "guidance", "estimate"), where
        assert r["source_url"].startswith(("http://", "https://")), where
        assert r["value"].strip() and r["unit"].strip(), where
        assert re.match(r"^\d{4}", r["date"]), where
    entities = " ".join(r["entity"] for r in rows)
    contracts = ("Anthropic <- Google", "Anthropic <- AWS", "OpenAI <- AMD", "OpenAI <- Broadcom")
    for needed in (*contracts, "TSMC CoWoS", "HBM"):
        assert needed in entities, needed


# ---------------------------------------------------------------- data prepared for the market (issue 18 items 3-4)

SUPPLY_CSV = ROOT / "docs" / "reference" / "accelerator_supply.csv"
RAMPS_CSV = ROOT / "docs" / "reference" / "vendor_ramps.csv"
CONTRACTS_CSV = ROOT / "docs" / "reference" / "vendor_contracts.csv"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_chip_has_its_cowos_and_hbm_use_with_sources():
    rows = _rows(SUPPLY_CSV)
    have = {(r["system"], r["field"]): r for r in rows}
    for r in rows:
        assert r["kind"] in KINDS and r["source_url"].startswith("http"), (r["system"], r["field"])
        get_system(r["system"])  # a catalog key
    for system in VENDOR_KEYS:
        for field in ("gpus_per_wafer", "hbm_stacks", "hbm_generation", "cowos_package"):
            assert (system, field) in have, f"{system}.{field}"
        assert int(have[(system, "gpus_per_wafer")]["value"]) > 0
    for system in ("hgx_h100", "gb200_nvl72", "gb300_nvl72", "vr_nvl72"):  # NVIDIA's, as its supplier uses them
        assert (system, "gpus_per_wafer") in have


def test_vendor_ramps_are_sourced_quarters_whose_costs_match_the_catalog():
    rows = _rows(RAMPS_CSV)
    assert {r["vendor"] for r in rows} == {"Google", "AWS", "AMD"}
    for r in rows:
        assert r["source_url"].startswith("https://github.com/epoch-research/ai-chip-counts/"), r["chip"]
        assert float(r["units_p05"]) <= float(r["units_median"]) <= float(r["units_p95"]), r["chip"]
        assert r["quarter_start"] < r["quarter_end"]
        if r["system"]:
            assert get_system(r["system"]).vendor == r["vendor"], r["chip"]
    # the catalog's low chip prices of captive chips are Epoch's cost per chip (docs/reference/vendors.md)
    for chip, system in (("TPU v7", "tpu_v7"), ("TPU v6e", "tpu_v6e"), ("Trainium2", "trn2")):
        quarter = next(r for r in rows if r["chip"] == chip and r["quarter_start"] == "2025-10-01")
        per_chip = float(quarter["cost_usd_median"]) / float(quarter["units_median"])
        s = get_system(system)
        assert per_chip == pytest.approx(s.chip_price_usd_low, rel=0.02), chip


def test_the_announced_contracts_are_there_with_sources():
    rows = _rows(CONTRACTS_CSV)
    pairs = {(r["buyer"], r["seller"]) for r in rows}
    for pair in (("Anthropic", "Google"), ("Anthropic", "AWS"), ("OpenAI", "AMD"), ("OpenAI", "Broadcom")):
        assert pair in pairs, pair
    for r in rows:
        assert r["source_url"].startswith("https://"), r["contract"]
        assert r["kind"] in ("reported", "guidance", "estimate"), r["contract"]
        if r["system"]:
            assert get_system(r["system"]).vendor in ("Google", "AWS", "AMD"), r["contract"]
        assert PARTIAL_DATE.match(r["start"]), r["contract"]
