"""Shared fixtures: one short run, a second run with slower supply, one small sweep, and one report of them, each
made once per test session and reused by the results, outcomes, compare, analysis and viz-data tests.

Folders are written exactly as `airace run` and `airace sweep` write them (the same functions), so tests read
them through the same reader as the commands. Markers (registered in pyproject.toml): `slow` for tests that take
seconds (subprocesses, signals, sweeps of their own), `browser` for the Chromium test; CI runs everything, a quick
local loop is `pytest -m "not slow and not browser"`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from model.cli import main as airace_main
from model.market import run_params
from model.results.folders import write_result_folder
from model.scenario import apply_overrides, load_scenario_dict
from model.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"
SHORT_END = "2026-12"  # three calendar years: enough for Blackwell Ultra and Vera Rubin to arrive
SHORT_RUN_SEED = 3
SLOW_SUPPLY_SEED = 5
SWEEP_PARAM = "supplier.supply_growth_multiplier"
SWEEP_RUNS = 8
SWEEP_BASE_SEED = 20


def _write_run(folder: Path, seed: int, overrides: list[str]) -> Path:
    sets = [f"end={SHORT_END}", *overrides]
    result = run_params(apply_overrides(load_scenario_dict(BASELINE), sets), seed=seed)
    manifest = {"scenario_file": "scenarios/baseline.toml", "overrides": sets, **result.manifest}
    return write_result_folder(folder, result.tables(), manifest)


@pytest.fixture(scope="session")
def short_run(tmp_path_factory) -> Path:
    """A result folder: the baseline to 2026-12, seed 3."""
    return _write_run(tmp_path_factory.mktemp("runs") / "short_run", SHORT_RUN_SEED, [])


@pytest.fixture(scope="session")
def slow_supply_run(tmp_path_factory) -> Path:
    """A result folder: the baseline to 2026-12 with supply growing at 0.6x, seed 5."""
    return _write_run(tmp_path_factory.mktemp("runs") / "slow_supply", SLOW_SUPPLY_SEED, [f"{SWEEP_PARAM}=0.6"])


@pytest.fixture(scope="session")
def small_sweep(tmp_path_factory) -> Path:
    """A finished sweep folder: 8 runs of the baseline to 2026-12, supply growth sampled (Latin hypercube) from
    0.5x to 1.5x, seeds 20..27, two local workers."""
    folder = tmp_path_factory.mktemp("sweeps")
    scenario = folder / "short_sweep.toml"
    scenario.write_text(f'extends = "{BASELINE.as_posix()}"\nend = "{SHORT_END}"\n[sweep]\n'
                        f'"{SWEEP_PARAM}" = {{ dist = "uniform", low = 0.5, high = 1.5 }}\n')
    return run_sweep(scenario, SWEEP_RUNS, out=folder / "short_sweep", base_seed=SWEEP_BASE_SEED, workers=2)


@pytest.fixture(scope="session")
def report_dir(short_run, small_sweep, tmp_path_factory) -> Path:
    """`airace report short_run short_sweep`: every figure (comparison and sensitivity included) and report.md."""
    out = tmp_path_factory.mktemp("report")
    assert airace_main(["report", str(short_run), str(small_sweep), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def vendor_run(short_run, tmp_path_factory) -> Path:
    """`short_run` with part of Google's, AWS's and the rest of the market's compute on TPUs, Trainium and AMD
    (`vendor_tables.vendorize`): what the outputs show once the market sells other vendors' systems."""
    from vendor_tables import vendorize

    return vendorize(short_run, tmp_path_factory.mktemp("vendors") / "vendor_run")


# -- hand-made tables with known answers ----------------------------------------------------------------------------
def month(text: str) -> pd.Timestamp:
    return pd.Timestamp(f"{text}-01")


def agents_table(rows: list[tuple], **extra) -> pd.DataFrame:
    """Agents rows (month "YYYY-MM", agent, kind, h100e[, largest_cluster_gpus[, run]])."""
    records = []
    for row in rows:
        date, agent, kind, h100e, *rest = row
        record = {"date": month(date), "agent": agent, "kind": kind, "h100e": float(h100e),
                  "largest_cluster_gpus": int(rest[0]) if rest else 0, "frontier_run_days": float("nan")}
        if len(rest) > 1:
            record = {"run": rest[1], **record}
        records.append(record)
    return pd.DataFrame(records).assign(**extra)


def market_table(first_month: str, revenue_usd: list[float], run: int | None = None) -> pd.DataFrame:
    """One market row per month from `first_month`, with the given monthly revenue."""
    dates = pd.date_range(month(first_month), periods=len(revenue_usd), freq="MS")
    df = pd.DataFrame({"date": dates, "nvidia_revenue_usd": [float(v) for v in revenue_usd]})
    return df if run is None else df.assign(run=run)[["run", "date", "nvidia_revenue_usd"]]


def events_table(rows: list[tuple]) -> pd.DataFrame:
    """Events rows (month, agent, event, system, gpus[, run]) in the order they were logged."""
    records = []
    for row in rows:
        date, agent, event, system, gpus, *rest = row
        record = {"date": month(date), "agent": agent, "event": event, "system": system, "gpus": int(gpus),
                  "detail": ""}
        if rest:
            record = {"run": rest[0], **record}
        records.append(record)
    columns = ["date", "agent", "event", "system", "gpus", "detail"]
    return pd.DataFrame(records) if records else pd.DataFrame(columns=columns)


def catalog_with_value(tmp_path: Path, system: str, field: str, value: str) -> tuple[Path, int]:
    """A copy of the catalog with one value of `system`'s `field` replaced, and the line number it is on (tests of
    the loader's one-line errors)."""
    from model.hardware.systems import DATA_FILE

    lines = DATA_FILE.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line.startswith(f"{system},{field},"))
    parts = lines[number - 1].split(",")
    parts[2] = value
    lines[number - 1] = ",".join(parts)
    bad_file = tmp_path / "systems.csv"
    bad_file.write_text("\n".join(lines) + "\n")
    return bad_file, number
