"""The hindcast: every check's model value comes from the result tables, every reported value from the sourced
record, and facts the scenario contains are listed as inputs, never scored."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis import hindcast, record
from model.results import outcomes as O
from model.results import read_folder


@pytest.fixture(scope="module")
def checked(small_sweep) -> tuple:
    src = read_folder(small_sweep)
    return src, hindcast.table(src)


def test_revenue_checks_are_the_fiscal_quarters_of_the_runs_against_the_reported_ones(checked):
    src, table = checked
    rev = O.revenue(src.market, "fiscal_quarter")
    reported = record.revenue().set_index("quarter")["dc_revenue_usd_bn"]
    rows = table[table["group"] == "NVIDIA data-center revenue"]
    assert list(rows["fact"]) == [f"Q{q} FY{y}" for y in (2025, 2026) for q in (1, 2, 3, 4)] + ["Q1 FY2027"]
    for _, row in rows.iterrows():
        per_run = rev[rev["period"] == row["fact"]]["nvidia_revenue_usd"] / 1e9
        assert row["model_median"] == pytest.approx(per_run.median())
        assert row["reported"] == reported[row["fact"]]
        assert row["in_band"] == (row["model_p05"] <= row["reported"] <= row["model_p95"])
        assert row["error"] == pytest.approx(row["model_median"] / row["reported"] - 1)


def test_inputs_are_listed_and_not_checked(checked):
    _, table = checked
    assert not table["fact"].str.contains("CoreWeave power").any()  # its power additions are scenario inputs
    assert not table["fact"].str.contains("Colossus 1 \\(Memphis\\)\\) 2024").any()  # xAI's 2024 capex is backed out
    inputs = " ".join(what for what, _ in hindcast.INPUTS)
    assert "CoreWeave" in inputs and "capex" in inputs
    assert set(table["group"]) >= {"NVIDIA data-center revenue", "Shipments", "H100e by owner", "Rental prices",
                                   "Largest clusters", "First deployments"}


def test_the_readme_section_sets_seeds_beside_the_sweep_s_band(small_sweep):
    src = read_folder(small_sweep)
    text = hindcast.readme_section(src, src)
    header = next(line for line in text.splitlines() if line.startswith("| fact |"))
    assert "median [5%, 95%]" in header and "reported" in header
    assert "| NVIDIA data-center revenue: Q4 FY2025 |" in text and "Inputs, not checks" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| fact")]
    assert len(rows) == len(hindcast.checks())
    assert pd.notna(hindcast.table(src)["model_median"]).all()  # every check is within the runs' horizon
