"""The reference data in analysis/data (the public record the model is checked against) is well formed.

Each file must parse, match the columns documented in analysis/data/README.md, cite a source on every row, use
the documented kinds, dates and keys, and hold no duplicate facts; a few cross-checks hold the numbers to the
annual figures the sources also report.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

DATA = Path(__file__).resolve().parents[1] / "analysis" / "data"
README = DATA / "README.md"
CATALOG = Path(__file__).resolve().parents[1] / "model" / "hardware" / "data" / "systems.csv"

KINDS = {"reported", "estimate", "guidance", "projection"}
DATE_COLUMNS = {"date", "published", "quarter_end", "as_of", "period_start", "period_end", "target_date"}
OPTIONAL_DATES = {"target_date"}
DATE_RE = re.compile(r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?|-Q[1-4]|-H[12])?$")
NOT_PART_OF_FACT = {"source_url", "note", "published"}
NON_NVIDIA_SYSTEMS = {"tpu_v5p", "tpu_v7", "trn2"}
NUMERIC = {
    "nvidia_dc_revenue.csv": ["dc_revenue_usd_bn"],
    "public_clusters.csv": ["gpus", "mw"],
    "frontier_runs.csv": ["training_flop", "hardware_count", "training_days"],
    "h100e_by_owner.csv": ["value"],
    "gpu_shipments.csv": ["units"],
    "power_by_owner.csv": ["value_mw"],
    "capex_by_owner.csv": ["capex_usd_bn_low", "capex_usd_bn_high"],
    "rental_prices.csv": ["usd_per_gpu_hour_low", "usd_per_gpu_hour_high"],
    "first_deployments.csv": ["gpus"],
}
FILES = sorted(p.name for p in DATA.glob("*.csv"))


def documented_columns() -> dict[str, list[str]]:
    """Columns per file from the README: a `### \\`file.csv\\`` heading followed by a `| \\`column\\` |` table."""
    out: dict[str, list[str]] = {}
    current = None
    for line in README.read_text().splitlines():
        if m := re.match(r"^###\s+`([^`]+\.csv)`", line):
            current = m.group(1)
            out[current] = []
        elif current and (m := re.match(r"^\|\s*`([a-z0-9_]+)`\s*\|", line)):
            out[current].append(m.group(1))
    return out


def load(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / name, comment="#", dtype=str, keep_default_na=False)


def catalog_keys() -> set[str]:
    return set(pd.read_csv(CATALOG)["system"])


def test_every_file_is_documented_and_every_documented_file_exists():
    assert FILES, "no reference data found"
    assert set(documented_columns()) == set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_file_has_header_block_and_documented_columns(name):
    lines = (DATA / name).read_text().splitlines()
    assert lines[0].startswith("#"), f"{name}: no leading comment block"
    data_lines = [ln for ln in lines if not ln.startswith("#")]
    bad = [ln for ln in data_lines if "#" in ln]
    assert not bad, f"{name}: '#' inside data would be cut as a comment: {bad[0][:80]}"
    df = load(name)
    assert len(df) > 0
    assert list(df.columns) == documented_columns()[name]


@pytest.mark.parametrize("name", FILES)
def test_every_row_is_sourced_with_a_valid_kind(name):
    df = load(name)
    urls = df["source_url"]
    assert urls.str.match(r"^https?://\S+$").all(), f"{name}: rows without a source URL: {df[~urls.str.match(r'^https?://')]}"
    assert set(df["kind"]) <= KINDS, f"{name}: unknown kinds {set(df['kind']) - KINDS}"


@pytest.mark.parametrize("name", FILES)
def test_dates_are_valid(name):
    df = load(name)
    for col in DATE_COLUMNS & set(df.columns):
        values = df[col]
        if col in OPTIONAL_DATES:
            values = values[values != ""]
        bad = values[~values.str.match(DATE_RE)]
        assert bad.empty, f"{name}.{col}: invalid dates {list(bad)}"
        full = values[values.str.len() == 10]
        pd.to_datetime(full, format="%Y-%m-%d")  # raises on impossible days such as 2025-02-30


@pytest.mark.parametrize("name", FILES)
def test_numbers_parse_and_are_non_negative(name):
    df = load(name)
    for col in NUMERIC[name]:
        filled = df[col][df[col] != ""]
        nums = pd.to_numeric(filled, errors="raise")
        assert (nums >= 0).all(), f"{name}.{col}: negative values"


@pytest.mark.parametrize("name", FILES)
def test_no_duplicate_facts(name):
    df = load(name)
    key = [c for c in df.columns if c not in NOT_PART_OF_FACT]
    dup = df[df.duplicated(key, keep=False)]
    assert dup.empty, f"{name}: duplicate facts\n{dup}"


def test_system_keys_are_catalog_keys_or_documented_non_nvidia_keys():
    allowed = catalog_keys() | NON_NVIDIA_SYSTEMS
    for name in ("public_clusters.csv", "rental_prices.csv", "first_deployments.csv"):
        systems = load(name)["system"]
        for value in systems[systems != ""]:
            unknown = set(value.split("+")) - allowed
            assert not unknown, f"{name}: unknown system key(s) {unknown} in {value!r}"


def test_ranges_and_periods_are_ordered():
    capex = load("capex_by_owner.csv")
    assert (capex["capex_usd_bn_low"].astype(float) <= capex["capex_usd_bn_high"].astype(float)).all()
    assert (capex["period_start"] <= capex["period_end"]).all()
    ship = load("gpu_shipments.csv")
    assert (ship["period_start"] <= ship["period_end"]).all()
    rent = load("rental_prices.csv")
    both = rent[(rent["usd_per_gpu_hour_low"] != "") & (rent["usd_per_gpu_hour_high"] != "")]
    assert (both["usd_per_gpu_hour_low"].astype(float) <= both["usd_per_gpu_hour_high"].astype(float)).all()
    assert ((rent["usd_per_gpu_hour_low"] != "") | (rent["usd_per_gpu_hour_high"] != "")).all()
    assert set(rent["pricing"]) <= {
        "on_demand", "spot", "capacity_block", "contract_1yr", "contract_3yr", "contract_5yr",
        "median_posted", "implied",
    }
    assert set(rent["provider_tier"]) <= {"hyperscaler", "neocloud", "long_tail", "market"}


def test_clusters_have_a_size_and_a_consistent_status():
    df = load("public_clusters.csv")
    assert set(df["status"]) <= {"online", "announced"}
    sized = (df["gpus"] != "") | (df["mw"] != "")
    unsized = df[~sized]
    assert unsized["note"].str.contains("no public count").all(), f"rows without GPUs or MW must say so:\n{unsized}"
    assert (df.loc[df["status"] == "online", "target_date"] == "").all(), "online clusters have no target date"


def test_first_deployments_use_documented_milestones():
    df = load("first_deployments.csv")
    assert set(df["availability"]) <= {
        "announced", "full_production", "first_shipment", "first_rack", "validation", "cloud_ga",
        "production_at_scale", "mass_production",
    }
    announced = df[df["availability"] == "announced"].set_index("system")["date"]
    for system in ("hgx_h100", "gb200_nvl72", "gb300_nvl72", "vr_nvl72"):
        later = df[(df["system"] == system) & (df["availability"] != "announced")]["date"]
        assert (later.str[:7] >= announced[system][:7]).all(), f"{system}: a milestone before its announcement"


def test_power_metrics_and_h100e_metrics_are_documented():
    assert set(load("power_by_owner.csv")["metric"]) <= {
        "active_mw", "connected_mw", "contracted_mw", "added_mw", "compute_capacity_mw", "committed_mw", "campus_mw",
    }
    h = load("h100e_by_owner.csv")
    assert set(h["metric"]) <= {"gpus", "h100e", "share_of_world_pct"}
    assert (h.loc[h["metric"] == "share_of_world_pct", "value"].astype(float) <= 100).all()


def test_nvidia_quarters_are_consecutive_and_add_up_to_reported_years():
    df = load("nvidia_dc_revenue.csv")
    idx = df["fiscal_year"].astype(int) * 4 + df["fiscal_quarter"].astype(int)
    assert list(idx) == list(range(idx.iloc[0], idx.iloc[0] + len(idx))), "missing or repeated quarter"
    assert (df["kind"] == "reported").all()
    rev = df.assign(fy=df["fiscal_year"].astype(int), usd=df["dc_revenue_usd_bn"].astype(float))
    by_year = rev.groupby("fy")["usd"].agg(["sum", "count"])
    # Annual Data Center revenue NVIDIA reported: FY2025 $115.2bn (datacenterdynamics, see market_facts.csv),
    # FY2026 $193.7bn (pcgamer.com, 2026-02-26). Quarters are rounded to $0.1bn, so allow $0.2bn.
    for year, annual in ((2025, 115.2), (2026, 193.7)):
        assert by_year.loc[year, "count"] == 4
        assert by_year.loc[year, "sum"] == pytest.approx(annual, abs=0.2)


def test_cluster_record_has_the_landmarks_the_figures_need():
    df = load("public_clusters.csv")
    online = df[df["status"] == "online"].assign(gpus_n=lambda d: pd.to_numeric(d["gpus"], errors="coerce"))
    largest = online.groupby("owner")["gpus_n"].max()
    assert largest["xAI"] >= 200_000  # Colossus 1 after the 2025 expansion
    assert largest["Meta"] >= 100_000  # Llama 4 cluster, Oct 2024
    assert largest["Microsoft"] >= 4_608  # first GB300 NVL72 production cluster, Oct 2025
