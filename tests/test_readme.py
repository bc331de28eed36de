"""`make readme`'s generator: the README's generated tables hold the outcomes of the sweeps (checked against the
tables with pandas), only the text between the markers changes, and a README without a marker is exit 2."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import SWEEP_RUNS

from analysis import readme
from model.errors import InputError
from model.results import read_folder

README = """# title
hand-written text with a number: 42
<!-- generated:baseline-revenue by `make readme` -->
old table
<!-- /generated:baseline-revenue -->
more hand-written text
"""


def test_only_the_text_between_the_markers_changes():
    text = readme.replace_section(README, "baseline-revenue", "new table\n")
    assert text == README.replace("old table\n", "new table\n")
    assert readme.replace_section(text, "baseline-revenue", "new table") == text  # idempotent
    with pytest.raises(InputError, match="no marker pair <!-- generated:scenarios"):
        readme.replace_section(README, "scenarios", "x")


def test_revenue_section_holds_full_fiscal_years_against_reported(small_sweep):
    src = read_folder(small_sweep)
    section = readme.revenue_section(src)
    m = pd.read_parquet(small_sweep / "market.parquet")
    fy = m["date"].dt.year + (m["date"].dt.month >= 2)
    per_run = m[fy == 2025].groupby("run")["nvidia_revenue_usd"].sum()
    row = next(line for line in section.splitlines() if line.startswith("| FY2025 (Feb 2024-Jan 2025) |"))
    cells = [cell.strip() for cell in row.strip("|").split(" | ")]
    # reported: the four sourced quarters of fiscal 2025 (22.6 + 26.3 + 30.8 + 35.6; the annual report rounds to 115.2)
    assert cells[1].startswith(f"{per_run.median() / 1e9:,.0f} [") and cells[2].strip() == "115.3"
    assert cells[3].strip() == f"{per_run.median() / 115.3e9 - 1:+.0%}"
    assert "FY2024" not in section and "FY2027" not in section  # partial fiscal years at the edges are left out
    assert f"over {SWEEP_RUNS} seeds" in section


def test_firsts_and_compute_sections_name_the_named_leaders(small_sweep):
    src = read_folder(small_sweep)
    firsts = readme.firsts_section(src)
    assert "| GB300 NVL72 |" in firsts and "rest_of_market" not in firsts and "HGX H100 |" not in firsts
    compute = readme.compute_section(src)
    a = pd.read_parquet(small_sweep / "agents.parquet")
    end = a[a["date"] == a["date"].max()]
    total = end.groupby("run")["h100e"].sum()
    row = next(line for line in compute.splitlines() if line.startswith("| 2026-12 |"))
    assert row.split(" | ")[1].startswith(f"{total.median() / 1e6:.1f}")


def test_scenario_table_uses_the_seeds_every_scenario_ran(short_run, small_sweep):
    run, sweep = read_folder(short_run), read_folder(small_sweep)
    (only_run, only_sweep), seeds = readme.same_seeds([run, sweep])
    assert seeds == [] and only_sweep.n_runs == 0  # the run's seed 3 is not among the sweep's 20..27
    with pytest.raises(InputError, match="no seed that every scenario ran"):
        readme.scenario_section([run, sweep])
    (a, b), seeds = readme.same_seeds([sweep, sweep])
    assert seeds == list(range(20, 20 + SWEEP_RUNS)) and a.n_runs == SWEEP_RUNS
    table = readme.scenario_section([sweep])
    assert "| `short_sweep.toml` |" in table


def test_scenario_story_is_the_files_opening_comment(tmp_path):
    f = tmp_path / "x.toml"
    f.write_text("# Rubin delay: Vera Rubin slips (six months), on top of slips. Who fills the gap?\nend = 1\n")
    assert readme.scenario_story(str(f)) == "Rubin delay: Vera Rubin slips, on top of slips"
    assert readme.scenario_story(str(tmp_path / "missing.toml")) == ""


def test_the_firsts_table_shows_the_firsts_without_nvidia_s_partner_weight_beside_the_baseline_s(small_sweep):
    """`make readme` runs the baseline's seeds with `allocation.partner_weight = 0` (an unsourced assumption) and the
    firsts table shows who is first online and at scale then, in two more columns."""
    src = read_folder(small_sweep)
    plain, both = readme.firsts_section(src), readme.firsts_section(src, src)
    row = next(line for line in both.splitlines() if line.startswith("| GB300 NVL72 |"))
    cells = [cell.strip() for cell in row.strip("|").split(" | ")]
    assert len(cells) == 6 and cells[2:4] == cells[4:6]  # the same seeds: the same firsts
    assert "partner_weight = 0" in both and "partner_weight" not in plain
