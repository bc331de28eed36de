"""analysis/ and `airace report`: every figure is written (PNG of the expected size, SVG, CSV), the CSV behind each
figure equals what the result tables say, report.md links every figure, and bad input exits 2 with one line.

Runs are short (end=2026-12) and made once per module; the sweep folder is built here in the documented layout
(the real `airace sweep` writes the same). No outcome values are hard-coded: figures are compared with the tables.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import capacity, comparison, frontier, generations, market, sensitivity, timeline
from analysis.figure import DPI, WIDTH_IN, NotApplicable
from analysis.load import load
from analysis.report import build_report
from analysis.summaries import fiscal_quarter_of
from model.cli import main as airace_main
from model.market import run_params
from model.results.folders import write_result_folder
from model.scenario import apply_overrides, load_scenario_dict

END = "2026-12"
PARAM = "supplier.supply_growth_multiplier"
SWEEP_VALUES = (0.7, 1.0, 1.3)
SWEEP_BASE_SEED = 20


def _params(*overrides: str) -> dict:
    return apply_overrides(load_scenario_dict("scenarios/baseline.toml"), [f"end={END}", *overrides])


def _write_sweep(out: Path, values=SWEEP_VALUES, param: str | None = PARAM) -> Path:
    """A sweep folder as `airace sweep` writes it: runs/run_NNNN, runs.parquet, combined tables, sweep.json."""
    rows, combined = [], {"agents": [], "market": [], "events": []}
    for i, value in enumerate(values):
        seed = SWEEP_BASE_SEED + i
        res = run_params(_params(f"{param}={value}") if param else _params(), seed=seed)
        write_result_folder(out / "runs" / f"run_{i:04d}", res.tables(), res.manifest)
        row = {"run": i, "seed": seed, "status": "ok", "error": "", "wall_time_s": res.manifest["wall_time_s"]}
        if param:
            row[param] = value
        rows.append(row)
        for name, df in res.tables().items():
            df = df.copy()
            if param:
                df.insert(0, param, value)
            df.insert(0, "run", i)
            combined[name].append(df)
    pd.DataFrame(rows).to_parquet(out / "runs.parquet", index=False)
    for name, parts in combined.items():
        pd.concat(parts, ignore_index=True).to_parquet(out / f"{name}.parquet", index=False)
    (out / "sweep.json").write_text(json.dumps({
        "scenario_file": "scenarios/baseline.toml", "scenario_sha256": "", "runs": len(values),
        "base_seed": SWEEP_BASE_SEED, "parameters": {param: {"dist": "uniform", "low": 0.5, "high": 1.5}} if param
        else {}, "design": "lhs" if param else "seeds"}))
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    res = run_params(_params(), seed=3)
    return write_result_folder(tmp_path_factory.mktemp("runs") / "short_run", res.tables(),
                         {"scenario_file": "scenarios/baseline.toml", **res.manifest})


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    return _write_sweep(tmp_path_factory.mktemp("sweeps") / "short_sweep")


@pytest.fixture(scope="module")
def run_report(run_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report_run")
    assert airace_main(["report", str(run_dir), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def sweep_report(sweep_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report_sweep")
    build_report([sweep_dir], out)
    return out


@pytest.fixture(scope="module")
def both_report(run_dir, sweep_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report_both")
    build_report([run_dir, sweep_dir], out)
    return out


def _png_size(path: Path) -> tuple[int, int, float]:
    """Width and height in pixels from the IHDR chunk, and the DPI from pHYs."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])
    i = data.find(b"pHYs")
    ppm = struct.unpack(">I", data[i + 4:i + 8])[0] if i > 0 else 0
    return width, height, ppm * 0.0254


def _csv(path: Path, dates=("date",)) -> pd.DataFrame:
    df = pd.read_csv(path)
    for c in dates:
        if c in df.columns:
            df[c] = pd.to_datetime(df[c])
    return df


def _agents(folder: Path) -> pd.DataFrame:
    df = pd.read_parquet(folder / "agents.parquet")
    return df.assign(date=pd.to_datetime(df["date"]))


def _market(folder: Path) -> pd.DataFrame:
    df = pd.read_parquet(folder / "market.parquet")
    return df.assign(date=pd.to_datetime(df["date"]))


def _events(folder: Path) -> pd.DataFrame:
    df = pd.read_parquet(folder / "events.parquet")
    return df.assign(date=pd.to_datetime(df["date"]))


# -- loading -----------------------------------------------------------------------------------------------------
def test_load_run_adds_label_and_run(run_dir):
    rs = load([run_dir])
    assert rs.labels == ["short_run"] and rs.sources[0].kind == "run" and rs.sources[0].n_runs == 1
    raw = _agents(run_dir)
    assert list(rs.agents.columns[:2]) == ["label", "run"] and (rs.agents["run"] == 0).all()
    assert len(rs.agents) == len(raw) and pd.api.types.is_datetime64_any_dtype(rs.agents["date"])
    assert rs.agents["h100e"].sum() == pytest.approx(raw["h100e"].sum())


def test_load_sweep_drops_parameter_columns_and_matches_run_folders(sweep_dir, tmp_path):
    rs = load([sweep_dir])
    src = rs.sources[0]
    assert src.is_sweep and src.n_runs == len(SWEEP_VALUES) and src.parameters == (PARAM,)
    assert PARAM not in rs.agents.columns and list(rs.runs[PARAM]) == list(SWEEP_VALUES)
    # Without the combined tables the run folders are read instead, giving the same frames.
    bare = tmp_path / "short_sweep"
    shutil.copytree(sweep_dir, bare)
    for name in ("agents", "market", "events"):
        (bare / f"{name}.parquet").unlink()
    rs2 = load([bare])
    cols = ["run", "date", "agent", "h100e"]
    pd.testing.assert_frame_equal(rs.agents[cols].reset_index(drop=True), rs2.agents[cols].reset_index(drop=True))


def test_same_folder_names_get_distinct_labels(run_dir, tmp_path):
    other = tmp_path / "x" / run_dir.name
    shutil.copytree(run_dir, other)
    rs = load([run_dir, other])
    assert len(set(rs.labels)) == 2


# -- files ---------------------------------------------------------------------------------------------------------
RUN_FIGURES = ("capacity", "generations", "timeline", "frontier", "market")


@pytest.mark.parametrize("name", RUN_FIGURES)
def test_run_figure_files(run_report, name):
    png, svg = run_report / f"{name}.png", run_report / f"{name}.svg"
    width, height, dpi = _png_size(png)
    assert width == round(WIDTH_IN * DPI) and 600 < height < 8000 and dpi == pytest.approx(DPI, abs=1)
    assert png.stat().st_size > 20_000
    text = svg.read_text()
    assert "<svg" in text[:2000] and text.rstrip().endswith("</svg>")
    assert list(run_report.glob(f"{name}*.csv"))
    assert not [p for p in run_report.iterdir() if p.name.startswith(".")], "temporary files left behind"


@pytest.mark.parametrize("module", [capacity, generations, timeline, frontier, market])
def test_module_cli_writes_expected_size(run_dir, tmp_path, module, capsys):
    assert module.main([str(run_dir), "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    m = re.search(r"\((\d+)x(\d+) px\)", printed)
    assert m, printed
    assert _png_size(tmp_path / f"{module.NAME}.png")[:2] == (int(m.group(1)), int(m.group(2)))


def test_sweep_report_has_every_figure_but_comparison(sweep_report):
    for name in (*RUN_FIGURES, "sensitivity"):
        assert _png_size(sweep_report / f"{name}.png")[0] == round(WIDTH_IN * DPI)
        assert (sweep_report / f"{name}.svg").stat().st_size > 1000
    assert not (sweep_report / "comparison.png").exists()
    assert "`comparison` not drawn" in (sweep_report / "report.md").read_text()


def test_report_links_every_figure(run_report, both_report):
    for out in (run_report, both_report):
        text = (out / "report.md").read_text()
        links = set(re.findall(r"\]\(([^)]+)\)", text))
        assert all((out / link).is_file() for link in links), links
        for png in out.glob("*.png"):
            assert png.name in links and png.with_suffix(".svg").name in links
        for csv in out.glob("*.csv"):
            assert csv.name in links
    assert (both_report / "comparison.png").is_file() and (both_report / "sensitivity.png").is_file()


def test_report_summary_names_the_leader_and_firsts(run_dir, run_report):
    text = (run_report / "report.md").read_text()
    a = _agents(run_dir)
    last = a[a["date"] == a["date"].max()].sort_values("h100e", ascending=False)
    leader = last[last["kind"] != "other"].iloc[0]  # the rest of the market is an aggregate, not a contender
    assert f"| {leader['agent']} | {leader['kind']} | {leader['h100e'] / 1e6:.2f} |" in text
    assert "| rest_of_market |" not in text.split("**Firsts")[0]
    ev = _events(run_dir)
    first = ev[(ev["event"] == "first_online") & (ev["system"] == "gb300_nvl72")].sort_values("date", kind="stable")
    assert len(first)  # the short test run reaches GB300
    assert f"{first.iloc[0]['date']:%Y-%m} {first.iloc[0]['agent']}" in text


# -- the numbers behind the figures ------------------------------------------------------------------------------------
def test_capacity_csv_equals_agents_h100e(run_dir, run_report):
    got = _csv(run_report / "capacity.csv").set_index(["date", "agent"])
    want = _agents(run_dir).set_index(["date", "agent"])["h100e"]
    assert len(got) == len(want)
    np.testing.assert_allclose(got.loc[want.index, "h100e"], want, rtol=1e-9)
    assert (got["runs"] == 1).all() and (got["h100e_p05"] == got["h100e_p95"]).all()


def test_capacity_csv_of_sweep_is_median_and_range(sweep_dir, sweep_report):
    got = _csv(sweep_report / "capacity.csv").set_index(["date", "agent"])
    g = _agents(sweep_dir).groupby(["date", "agent"])["h100e"]
    np.testing.assert_allclose(got.loc[g.median().index, "h100e"], g.median(), rtol=1e-9)
    np.testing.assert_allclose(got.loc[g.median().index, "h100e_p95"], g.quantile(0.95), rtol=1e-9)
    assert (got["h100e_p05"] <= got["h100e"] + 1e-6).all() and (got["runs"] == len(SWEEP_VALUES)).all()


def test_generations_csv_sums_gpus_by_kind(run_dir, run_report):
    got = _csv(run_report / "generations.csv").set_index(["date", "kind", "system"])["gpus"]
    a = _agents(run_dir)
    cols = [c for c in a.columns if c.startswith("gpus_online_")]
    want = a.groupby(["date", "kind"])[cols].sum().stack()
    want.index = want.index.set_levels(want.index.levels[2].str.removeprefix("gpus_online_"), level=2)
    want.index.names = ["date", "kind", "system"]
    np.testing.assert_array_equal(got.loc[want.index].to_numpy(), want.to_numpy())


def test_timeline_csv_is_first_event_dates(run_dir, run_report):
    got = _csv(run_report / "timeline.csv", dates=("date", "date_p05", "date_p95"))
    ev = _events(run_dir)
    ev = ev[ev["event"].isin(["first_online", "first_cluster_at_scale"])]
    want = ev.groupby(["agent", "system", "event"])["date"].min()
    got = got.set_index(["agent", "system", "event"])["date"]
    assert len(got) == len(want) > 0
    assert (got.loc[want.index] == want).all()


def test_frontier_csv_equals_agents_days(run_dir, run_report):
    got = _csv(run_report / "frontier.csv").set_index(["date", "agent"])["frontier_run_days"]
    want = _agents(run_dir).set_index(["date", "agent"])["frontier_run_days"]
    np.testing.assert_allclose(got.loc[want.index].to_numpy(float), want.to_numpy(float), rtol=1e-9)


def test_quarterly_revenue_is_sum_of_monthly_rows(run_dir, run_report):
    got = _csv(run_report / "market_revenue.csv")
    m = _market(run_dir)
    fq = fiscal_quarter_of(m["date"])
    want = m.groupby(fq["quarter"])["nvidia_revenue_usd"].sum()
    months = m.groupby(fq["quarter"]).size()
    got = got.set_index("quarter")
    assert set(got.index) == set(want.index)
    np.testing.assert_allclose(got.loc[want.index, "nvidia_revenue_usd"], want, rtol=1e-12)
    assert (got.loc[months.index, "months"] == months).all()
    assert got["nvidia_revenue_usd"].sum() == pytest.approx(m["nvidia_revenue_usd"].sum(), rel=1e-12)
    reported = market.reported_revenue().set_index("quarter")["dc_revenue_usd_bn"]
    both = got["reported_dc_revenue_usd"].dropna()
    assert len(both) and np.allclose(both / 1e9, reported.loc[both.index])


def test_backlog_and_rental_csvs_equal_market_columns(run_dir, run_report):
    m = _market(run_dir).set_index("date")
    backlog = _csv(run_report / "market_backlog.csv")
    for system, d in backlog.groupby("system"):
        d = d.set_index("date")
        np.testing.assert_array_equal(d["backlog_units"], m.loc[d.index, f"backlog_units_{system}"])
        assert (d["backlog_gpus"] == d["backlog_units"] * d["gpus_per_system"]).all()
    rental = _csv(run_report / "market_rental.csv")
    for system, d in rental.groupby("system"):
        d = d.set_index("date")
        want = pd.to_numeric(m.loc[d.index, f"rental_usd_per_gpu_hour_{system}"])
        np.testing.assert_allclose(d["rental_usd_per_gpu_hour"], want, rtol=1e-9)


def test_reported_revenue_file_is_sourced_and_consistent():
    rep = market.reported_revenue()
    assert len(rep) >= 6 and rep["source_url"].str.startswith("http").all()
    ends = pd.to_datetime(rep["quarter_end"])
    assert (fiscal_quarter_of(ends)["quarter"] == rep["quarter"]).all()  # late-month quarter ends stay in quarter
    assert (rep["dc_revenue_usd_bn"] > 0).all()


def test_fiscal_quarters_follow_nvidia_calendar():
    d = pd.Series(pd.to_datetime(["2024-01-01", "2024-02-01", "2024-04-01", "2024-05-01", "2024-10-01",
                                  "2024-11-01", "2025-01-01"]))
    assert list(fiscal_quarter_of(d)["quarter"]) == ["Q4 FY2024", "Q1 FY2025", "Q1 FY2025", "Q2 FY2025",
                                                     "Q3 FY2025", "Q4 FY2025", "Q4 FY2025"]


def test_comparison_csvs_aggregate_each_input(run_dir, sweep_dir, both_report):
    h = _csv(both_report / "comparison_h100e.csv").set_index(["label", "date"])["h100e"]
    want_run = _agents(run_dir).groupby("date")["h100e"].sum()
    np.testing.assert_allclose(h.loc[run_dir.name].loc[want_run.index], want_run, rtol=1e-9)
    per_run = _agents(sweep_dir).groupby(["run", "date"])["h100e"].sum()
    want_sweep = per_run.groupby("date").median()
    np.testing.assert_allclose(h.loc[sweep_dir.name].loc[want_sweep.index], want_sweep, rtol=1e-9)
    rev = _csv(both_report / "comparison_revenue.csv").set_index(["label", "year"])["nvidia_revenue_usd"]
    m = _market(run_dir)
    yearly = m.groupby(m["date"].dt.year)["nvidia_revenue_usd"].sum()
    for year, value in yearly.items():
        assert rev.loc[(run_dir.name, year)] == pytest.approx(value, rel=1e-12)


def test_sensitivity_outcomes_and_rank_correlations(sweep_dir, sweep_report):
    out = _csv(sweep_report / "sensitivity_outcomes.csv").set_index("run")
    a = _agents(sweep_dir)
    end = a[a["date"] == a["date"].max()].groupby("run")["h100e"].sum()
    np.testing.assert_allclose(out.loc[end.index, "total_h100e_end"], end, rtol=1e-9)
    assert list(out[PARAM]) == list(SWEEP_VALUES)
    rho = _csv(sweep_report / "sensitivity.csv").set_index("outcome")
    for outcome in ("total_h100e_end", "largest_cluster_gpus", "first_gb300_online_month"):
        pair = out[[PARAM, outcome]].dropna()
        want = pair.corr(method="spearman").iloc[0, 1] if pair[outcome].nunique() > 1 else np.nan
        got = rho.loc[outcome, "spearman_rho"]
        assert (np.isnan(want) and np.isnan(got)) or got == pytest.approx(want)


def test_sensitivity_needs_sampled_parameters(tmp_path, run_dir):
    seeds_only = _write_sweep(tmp_path / "seeds_only", values=(None, None, None), param=None)
    for rs in (load([seeds_only]), load([run_dir])):
        with pytest.raises(NotApplicable, match="sampled parameters"):
            sensitivity.make(rs, tmp_path / "figs")
    with pytest.raises(NotApplicable, match="two or more"):
        comparison.make(load([run_dir]), tmp_path / "figs")


# -- bad input -------------------------------------------------------------------------------------------------------
def test_bad_folder_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "not_results"
    bad.mkdir()
    (bad / "notes.txt").write_text("x")
    assert airace_main(["report", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(bad) in err and "not a result folder" in err and "sweep folder" in err
    assert not (tmp_path / "out").exists()


def test_module_bad_input_exits_2_without_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "analysis.capacity", str(tmp_path / "missing"), "--out",
                           str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no such file or folder" in proc.stderr and "Traceback" not in proc.stderr


def test_comparison_cli_with_one_input_exits_2(run_dir, tmp_path, capsys):
    assert comparison.main([str(run_dir), "--out", str(tmp_path)]) == 2
    assert "two or more" in capsys.readouterr().err
