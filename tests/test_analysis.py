"""analysis/ and `airace report`: every figure is written (PNG of the expected size, SVG, CSV), the CSV behind each
figure equals what the result tables say (computed here with pandas, not through the outcomes module), report.md
links every figure and names the leader and firsts, and bad input exits 2 with one line.

One report of the shared short run and small sweep (conftest) serves every figure test: it holds both labels, so a
single run and a sweep are both checked, and two inputs draw the comparison and sensitivity figures too.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SWEEP_PARAM, SWEEP_RUNS

from analysis import FIGURE_MODULES, capacity, comparison, market, sensitivity
from analysis.figure import DPI, WIDTH_IN, NotApplicable
from analysis.report import build_report
from model.cli import main as airace_main
from model.results import read_folders

RUN, SWEEP = "short_run", "short_sweep"  # the labels: folder names of the conftest fixtures


def _png_size(path: Path) -> tuple[int, int, float]:
    """Width and height in pixels from the IHDR chunk, and the DPI from pHYs."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])
    i = data.find(b"pHYs")
    ppm = struct.unpack(">I", data[i + 4:i + 8])[0] if i > 0 else 0
    return width, height, ppm * 0.0254


def _csv(path: Path, label: str | None = None, dates=("date",)) -> pd.DataFrame:
    df = pd.read_csv(path)
    for c in dates:
        if c in df.columns:
            df[c] = pd.to_datetime(df[c])
    return df if label is None else df[df["label"] == label].drop(columns="label")


def _table(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(folder / f"{name}.parquet")


def _month_at(dates: pd.Series, q: float) -> pd.Timestamp:
    """Inverted CDF of months: the earliest month with at least a share q of the dates at or before it."""
    ordered = sorted(dates)
    return ordered[max(0, int(np.ceil(q * len(ordered))) - 1)]


# -- files ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FIGURE_MODULES)
def test_every_figure_is_png_svg_and_csv(report_dir, name):
    png, svg = report_dir / f"{name}.png", report_dir / f"{name}.svg"
    width, height, dpi = _png_size(png)
    assert width == round(WIDTH_IN * DPI) and 600 < height < 12000 and dpi == pytest.approx(DPI, abs=1)
    text = svg.read_text()
    assert "<svg" in text[:2000] and text.rstrip().endswith("</svg>")
    csvs = list(report_dir.glob(f"{name}*.csv"))
    assert csvs and all(len(pd.read_csv(c)) for c in csvs)
    assert not [p for p in report_dir.iterdir() if p.name.startswith(".")], "temporary files left behind"


def test_module_cli_writes_expected_size(short_run, tmp_path, capsys):
    assert capacity.main([str(short_run), "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    m = re.search(r"\((\d+)x(\d+) px\)", printed)
    assert m, printed
    assert _png_size(tmp_path / "capacity.png")[:2] == (int(m.group(1)), int(m.group(2)))


def test_report_links_every_figure(report_dir):
    text = (report_dir / "report.md").read_text()
    links = set(re.findall(r"\]\(([^)]+)\)", text))
    assert all((report_dir / link).is_file() for link in links), links
    for path in report_dir.iterdir():
        if path.suffix in (".png", ".svg", ".csv"):
            assert path.name in links, path.name


def _section(report_dir: Path, label: str) -> str:
    text = (report_dir / "report.md").read_text()
    return text.split(f"### {label}\n")[1].split("\n### ")[0]


def test_report_summary_names_the_leader_and_firsts(short_run, report_dir):
    text = _section(report_dir, RUN)
    a = _table(short_run, "agents")
    last = a[a["date"] == a["date"].max()].sort_values("h100e", ascending=False)
    leader = last[last["kind"] != "other"].iloc[0]  # the rest of the market is an aggregate, not a contender
    assert f"| {leader['agent']} | {leader['kind']} | {leader['h100e'] / 1e6:.2f} |" in text
    assert "| rest_of_market |" not in text
    rest = last.loc[last["kind"] == "other", "h100e"].sum()
    assert f"the rest of the market, an aggregate, holds {rest / 1e6:.2f} M" in text
    ev = _table(short_run, "events")
    first = ev[(ev["event"] == "first_online") & (ev["system"] == "gb300_nvl72") & (ev["agent"] != "rest_of_market")]
    first = first.sort_values("date", kind="stable").iloc[0]  # the short run reaches GB300
    row = next(line for line in text.splitlines() if line.startswith("| GB300 NVL72 |"))
    assert row.split(" | ")[2] == f"{first['date']:%Y-%m} {first['agent']}"


def test_report_of_a_sweep_gives_bands_and_how_often_an_agent_is_first(small_sweep, report_dir):
    text = _section(report_dir, SWEEP)
    assert f"{SWEEP_RUNS} runs" in text and "(median, 5-95% range in brackets)" in text
    ev = _table(small_sweep, "events")
    gb300 = ev[(ev["event"] == "first_online") & (ev["system"] == "gb300_nvl72") & (ev["agent"] != "rest_of_market")]
    per_run = gb300.sort_values(["run", "date"], kind="stable").drop_duplicates("run")
    counts = per_run["agent"].value_counts()
    top = sorted(counts.index[counts == counts.max()])[0]
    cell = next(line for line in text.splitlines() if line.startswith("| GB300 NVL72 |")).split(" | ")[2]
    assert cell == (f"{_month_at(per_run['date'], 0.5):%Y-%m} {top} "
                    f"({counts.max() / len(per_run):.0%} of {len(per_run)} runs)")


@pytest.mark.slow
def test_report_of_one_run_skips_comparison_and_sensitivity_with_a_note(short_run, tmp_path):
    out = tmp_path / "one"
    build_report([short_run], out)
    text = (out / "report.md").read_text()
    assert "`comparison` not drawn" in text and "`sensitivity` not drawn" in text
    assert not (out / "comparison.png").exists() and (out / "capacity.png").is_file()


# -- the numbers behind the figures ----------------------------------------------------------------------------------
def test_capacity_csv_equals_agents_h100e(short_run, small_sweep, report_dir):
    got = _csv(report_dir / "capacity.csv", RUN).set_index(["date", "agent"])
    want = _table(short_run, "agents").set_index(["date", "agent"])["h100e"]
    assert len(got) == len(want)
    np.testing.assert_allclose(got.loc[want.index, "h100e"], want, rtol=1e-9)
    assert (got["runs"] == 1).all() and (got["h100e_p05"] == got["h100e_p95"]).all()
    got = _csv(report_dir / "capacity.csv", SWEEP).set_index(["date", "agent"])
    g = _table(small_sweep, "agents").groupby(["date", "agent"])["h100e"]
    np.testing.assert_allclose(got.loc[g.median().index, "h100e"], g.median(), rtol=1e-9)
    np.testing.assert_allclose(got.loc[g.median().index, "h100e_p95"], g.quantile(0.95), rtol=1e-9)
    assert (got["h100e_p05"] <= got["h100e"] + 1e-6).all() and (got["runs"] == SWEEP_RUNS).all()


def test_generations_csv_sums_gpus_by_kind(short_run, report_dir):
    got = _csv(report_dir / "generations.csv", RUN).set_index(["date", "kind", "system"])["gpus"]
    a = _table(short_run, "agents")
    cols = [c for c in a.columns if c.startswith("gpus_online_")]
    want = a.groupby(["date", "kind"])[cols].sum().stack()
    want.index = want.index.set_levels(want.index.levels[2].str.removeprefix("gpus_online_"), level=2)
    want.index.names = ["date", "kind", "system"]
    np.testing.assert_array_equal(got.loc[want.index].to_numpy(), want.to_numpy())


def test_timeline_csv_is_each_agents_first_dates(short_run, small_sweep, report_dir):
    dates = ("date", "date_p05", "date_p95")
    got = _csv(report_dir / "timeline.csv", RUN, dates).set_index(["agent", "system", "event"])
    ev = _table(short_run, "events")
    ev = ev[ev["event"].isin(["first_online", "first_cluster_at_scale"])]
    want = ev.groupby(["agent", "system", "event"])["date"].min()
    assert len(got) == len(want) > 0
    assert (got.loc[want.index, "date"] == want).all() and (got["date_p05"] == got["date_p95"]).all()
    got = _csv(report_dir / "timeline.csv", SWEEP, dates).set_index(["agent", "system", "event"])
    ev = _table(small_sweep, "events")
    mine = ev[(ev["agent"] == "coreweave") & (ev["system"] == "gb300_nvl72") & (ev["event"] == "first_online")]
    per_run = mine.groupby("run")["date"].min()
    row = got.loc[("coreweave", "gb300_nvl72", "first_online")]
    assert row["runs_reached"] == len(per_run) and row["runs"] == SWEEP_RUNS
    assert (row["date_p05"], row["date"], row["date_p95"]) == tuple(_month_at(per_run, q) for q in (0.05, 0.5, 0.95))


def test_frontier_csv_equals_agents_days(short_run, report_dir):
    got = _csv(report_dir / "frontier.csv", RUN).set_index(["date", "agent"])["frontier_run_days"]
    want = _table(short_run, "agents").set_index(["date", "agent"])["frontier_run_days"]
    np.testing.assert_allclose(got.loc[want.index].to_numpy(float), want.to_numpy(float), rtol=1e-9)


def test_quarterly_revenue_is_sum_of_monthly_rows(short_run, report_dir):
    got = _csv(report_dir / "market_revenue.csv", RUN, ("period_start", "period_end")).set_index("period")
    m = _table(short_run, "market")
    fiscal_year = m["date"].dt.year + (m["date"].dt.month >= 2)
    quarter = "Q" + (((m["date"].dt.month - 2) % 12) // 3 + 1).astype(str) + " FY" + fiscal_year.astype(str)
    want = m.groupby(quarter)["nvidia_revenue_usd"].agg(["sum", "count"])
    assert set(got.index) == set(want.index)  # partial quarters at the edges are kept (flagged) in this figure
    np.testing.assert_allclose(got.loc[want.index, "nvidia_revenue_usd"], want["sum"], rtol=1e-12)
    assert (got.loc[want.index, "months"] == want["count"]).all()
    assert (got["complete"] == (got["months"] == 3)).all() and not got.loc["Q4 FY2024", "complete"]
    assert got.loc["Q4 FY2025", "period_end"] == pd.Timestamp("2025-01-31")
    reported = market.reported_revenue().set_index("quarter")["dc_revenue_usd_bn"]
    both = got["reported_dc_revenue_usd"].dropna()
    assert len(both) and np.allclose(both / 1e9, reported.loc[both.index])


def test_backlog_and_rental_csvs_equal_market_columns(short_run, report_dir):
    m = _table(short_run, "market").set_index("date")
    backlog = _csv(report_dir / "market_backlog.csv", RUN)
    for system, d in backlog.groupby("system"):
        d = d.set_index("date")
        np.testing.assert_array_equal(d["backlog_units"], m.loc[d.index, f"backlog_units_{system}"])
        assert (d["backlog_gpus"] == d["backlog_units"] * d["gpus_per_system"]).all()
    rental = _csv(report_dir / "market_rental.csv", RUN)
    for system, d in rental.groupby("system"):
        d = d.set_index("date")
        np.testing.assert_allclose(d["rental_usd_per_gpu_hour"], m.loc[d.index, f"rental_usd_per_gpu_hour_{system}"],
                                   rtol=1e-9)


def test_reported_revenue_file_is_sourced_and_consistent():
    rep = market.reported_revenue()
    assert len(rep) >= 6 and rep["source_url"].str.startswith("http").all()
    ends = pd.to_datetime(rep["quarter_end"])
    fiscal_year = ends.dt.year + (ends.dt.month >= 2)
    assert (("Q" + rep["fiscal_quarter"].astype(str) + " FY" + fiscal_year.astype(str)) == rep["quarter"]).all()
    assert (rep["quarter_start"] <= ends).all() and (ends - rep["quarter_start"]).dt.days.between(80, 95).all()
    assert (rep["dc_revenue_usd_bn"] > 0).all()


def test_comparison_csvs_aggregate_each_input(short_run, small_sweep, report_dir):
    named = {}
    for label, folder in ((RUN, short_run), (SWEEP, small_sweep)):
        a = _table(folder, "agents")
        a = a.assign(run=a.get("run", 0))
        named[label] = a
        h = _csv(report_dir / "comparison_h100e.csv", label).set_index("date")["total_h100e"]
        want = a.groupby(["run", "date"])["h100e"].sum().groupby("date").median()
        np.testing.assert_allclose(h.loc[want.index], want, rtol=1e-9)
        cluster = _csv(report_dir / "comparison_cluster.csv", label).set_index("date")["largest_cluster_gpus"]
        own = a[a["kind"] != "other"]  # the rest of the market holds no cluster anyone could name
        want = own.groupby(["run", "date"])["largest_cluster_gpus"].max().groupby("date").median()
        np.testing.assert_allclose(cluster.loc[want.index], want, rtol=1e-9)
    rev = _csv(report_dir / "comparison_revenue.csv", RUN).set_index("year")["nvidia_revenue_usd"]
    m = _table(short_run, "market")
    yearly = m.groupby(m["date"].dt.year)["nvidia_revenue_usd"].agg(["sum", "count"])
    assert list(rev.index) == [y for y, r in yearly.iterrows() if r["count"] == 12]
    np.testing.assert_allclose(rev.to_numpy(), yearly.loc[rev.index, "sum"].to_numpy(), rtol=1e-12)
    firsts = _csv(report_dir / "comparison_firsts.csv", RUN).set_index("system")["date"]
    ev = _table(short_run, "events")
    ev = ev[(ev["event"] == "first_online") & (ev["agent"] != "rest_of_market")]
    assert firsts.to_dict() == ev.groupby("system")["date"].min().to_dict()


def test_sensitivity_outcomes_and_rank_correlations(small_sweep, report_dir):
    out = _csv(report_dir / "sensitivity_outcomes.csv").set_index("run")
    a = _table(small_sweep, "agents")
    end = a[a["date"] == a["date"].max()].groupby("run")["h100e"].sum()
    np.testing.assert_allclose(out.loc[end.index, "total_h100e_end"], end, rtol=1e-9)
    runs = _table(small_sweep, "runs").set_index("run")
    np.testing.assert_allclose(out[SWEEP_PARAM], runs.loc[out.index, SWEEP_PARAM])
    m = _table(small_sweep, "market")
    revenue_2026 = m[m["date"].dt.year == 2026].groupby("run")["nvidia_revenue_usd"].sum()
    np.testing.assert_allclose(out.loc[revenue_2026.index, "nvidia_revenue_usd_2026"], revenue_2026, rtol=1e-12)
    rho = _csv(report_dir / "sensitivity.csv").set_index("outcome")
    for outcome in ("total_h100e_end", "largest_cluster_gpus", "first_gb300_online_month", "nvidia_revenue_usd_2026"):
        pair = out[[SWEEP_PARAM, outcome]].dropna()
        want = pair.corr(method="spearman").iloc[0, 1] if pair[outcome].nunique() > 1 else np.nan
        got = rho.loc[outcome, "spearman_rho"]
        assert (np.isnan(want) and np.isnan(got)) or got == pytest.approx(want)


def test_sensitivity_and_comparison_say_when_they_do_not_apply(tmp_path, short_run, small_sweep):
    seeds_only = tmp_path / "seeds_only"
    shutil.copytree(small_sweep, seeds_only)
    for name in ("runs", "agents", "market", "events"):
        df = pd.read_parquet(seeds_only / f"{name}.parquet")
        df.drop(columns=SWEEP_PARAM).to_parquet(seeds_only / f"{name}.parquet", index=False)
    for rs in (read_folders([seeds_only]), read_folders([short_run])):
        with pytest.raises(NotApplicable, match="sampled parameters"):
            sensitivity.make(rs, tmp_path / "figs")
    with pytest.raises(NotApplicable, match="two or more"):
        comparison.make(read_folders([short_run]), tmp_path / "figs")
    assert not (tmp_path / "figs").exists()


# -- bad input -------------------------------------------------------------------------------------------------------
def test_bad_folder_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "not_results"
    bad.mkdir()
    (bad / "notes.txt").write_text("x")
    assert airace_main(["report", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(bad) in err and "not a result folder" in err and "sweep folder" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_module_bad_input_exits_2_without_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "analysis.capacity", str(tmp_path / "missing"), "--out",
                           str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no such file or folder" in proc.stderr and "Traceback" not in proc.stderr


def test_comparison_cli_with_one_input_exits_2(short_run, tmp_path, capsys):
    assert comparison.main([str(short_run), "--out", str(tmp_path)]) == 2
    assert "two or more" in capsys.readouterr().err
