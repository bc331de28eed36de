"""analysis/ and `airace report`: every figure is written (PNG of the expected size, SVG, CSV), the CSV behind each
figure equals what the result tables and the reference data files say (computed here with pandas, not through the
outcomes module), report.md and report.html hold every figure and name the leader and firsts, and bad input exits 2
with one line.

One report of the shared short run and small sweep (conftest) serves every figure test: it holds both labels, so a
single run and a sweep are both checked, and two inputs draw the comparison, uncertainty and sensitivity figures too.
"""

from __future__ import annotations

import base64
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

from analysis import FIGURE_MODULES, comparison, sensitivity, shares, uncertainty
from analysis.figure import DPI, WIDTH_IN, NotApplicable
from analysis.names import agent_name, input_titles, parameter_name, scenario_title, system_name
from analysis.report import build_report
from model.cli import main as airace_main
from model.hardware import systems
from model.results import outcomes as O
from model.results import read_folders

RUN, SWEEP = "short_run", "short_sweep"  # the labels: folder names of the conftest fixtures
DATA = Path(__file__).resolve().parents[1] / "analysis" / "data"


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


def _record(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / name, comment="#")


def _month_at(dates: pd.Series, q: float) -> pd.Timestamp:
    """Inverted CDF of months: the earliest month with at least a share q of the dates at or before it."""
    ordered = sorted(dates)
    return ordered[max(0, int(np.ceil(q * len(ordered))) - 1)]


def _per_gpu(key: str) -> float:
    return systems()[key].bf16_dense_tflops / 989.0


# -- files ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [n for n in FIGURE_MODULES if n != "vendors"])  # vendors: below
def test_every_figure_is_png_svg_and_csv(report_dir, name):
    png, svg = report_dir / f"{name}.png", report_dir / f"{name}.svg"
    width, height, dpi = _png_size(png)
    assert width == round(WIDTH_IN * DPI) and 3 * DPI < height < 30 * DPI and dpi == pytest.approx(DPI, abs=1)
    text = svg.read_text()
    assert "<svg" in text[:2000] and text.rstrip().endswith("</svg>")
    csvs = list(report_dir.glob(f"{name}*.csv"))
    assert csvs and all(len(pd.read_csv(c)) for c in csvs)
    assert not [p for p in report_dir.iterdir() if p.name.startswith(".")], "temporary files left behind"


def test_module_cli_writes_expected_size(short_run, tmp_path, capsys):
    assert shares.main([str(short_run), "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    m = re.search(r"\((\d+)x(\d+) px\)", printed)
    assert m, printed
    assert _png_size(tmp_path / "shares.png")[:2] == (int(m.group(1)), int(m.group(2)))


def test_vendor_figure_is_drawn_once_the_market_sells_other_vendors(report_dir):
    """The baseline sells TPUs, Trainium and AMD beside NVIDIA, so the report draws the vendors figure (it is
    skipped with a note only on results that hold NVIDIA's systems alone)."""
    text = (report_dir / "report.md").read_text()
    assert "`vendors` not drawn" not in text
    assert (report_dir / "vendors.png").exists() and (report_dir / "vendors.csv").exists()


def test_vendor_outputs_on_results_with_tpus_trainium_and_amd(vendor_run, tmp_path):
    """The figures on tables holding other vendors' systems: the vendors figure's CSVs against the tables and the
    catalog, the shares figure's vendor panel, vendor names in the generations figure, the report's summary."""
    from analysis import generations, vendors

    rs = read_folders([vendor_run])
    files = vendors.make(rs, tmp_path)
    png, svg = files[0].png, files[0].svg
    assert _png_size(png)[0] == round(WIDTH_IN * DPI) and "<svg" in svg.read_text()[:2000]
    a = _table(vendor_run, "agents")
    end = a[a["date"] == a["date"].max()].set_index("agent")
    owners = _csv(tmp_path / "vendors.csv", dates=()).set_index(["agent", "vendor"])
    for agent, system, vendor in (("google", "tpu_v7", "Google"), ("aws", "trn2_ultraserver", "AWS")):
        assert owners.loc[(agent, vendor), "gpus"] == end.loc[agent, f"gpus_online_{system}"] > 0
        assert owners.loc[(agent, vendor), "h100e"] == pytest.approx(end.loc[agent, f"gpus_online_{system}"]
                                                                     * _per_gpu(system))
    owned = owners.groupby(level="agent")["h100e"].sum()
    np.testing.assert_allclose(owned, end.loc[owned.index, "h100e"], rtol=1e-6)  # every vendor counted
    assert "rest_of_market" not in owned.index
    ship = _csv(tmp_path / "vendors_shipments.csv", dates=("period_start",))
    assert set(ship["vendor"]) >= {"NVIDIA", "Google", "AWS", "AMD"}
    sums = ship.groupby("period")["share_h100e"].sum()
    assert np.allclose(sums[sums > 0], 1.0)
    m = _table(vendor_run, "market")
    tpu_chips = (m["units_shipped_tpu_v7"] * systems()["tpu_v7"].gpus_per_system).sum()
    assert ship.loc[ship["vendor"] == "Google", "gpus"].sum() == tpu_chips > 0

    shares.make(rs, tmp_path)
    share = _csv(tmp_path / "shares_vendor.csv")
    assert set(share["vendor"]) == {"NVIDIA", "Google", "AWS", "AMD"}
    assert np.allclose(share.groupby("date")["share"].sum(), 1.0)
    assert "by vendor" in (tmp_path / "shares.svg").read_text()
    generations.make(rs, tmp_path)
    text = (tmp_path / "generations.svg").read_text()
    assert "Google · TPU7x Ironwood" in text and "NVIDIA · GB300 NVL72" in text

    from analysis import report

    section = report.summary(rs, rs.labels[0], "vendors")
    table = next(t for t in section.tables if t.heading.startswith("H100e leaders"))
    column = table.header.index("by vendor")
    assert all(re.fullmatch(r"(NVIDIA|Google|AWS|AMD) \d+%(, (NVIDIA|Google|AWS|AMD) \d+%)*", r[column])
               for r in table.rows)
    split = report._vendor_split(rs.agents)
    google_tpu = end.loc["google", "gpus_online_tpu_v7"] * _per_gpu("tpu_v7") / end.loc["google", "h100e"]
    assert split["google"].startswith(f"Google {google_tpu:.0%}" if google_tpu >= 0.5 else "NVIDIA")
    assert f"Google {google_tpu:.0%}" in split["google"] and split["microsoft"] == "NVIDIA 100%"
    clusters = next(t for t in section.tables if t.heading.startswith("Largest clusters"))
    assert "vendor" in clusters.header
    assert report._cluster_vendors(rs.agents)["google"] == "Google"
    vendor_table = next(t for t in section.tables if t.heading.startswith("Vendors"))
    assert [r[0] for r in vendor_table.rows][0] == "NVIDIA" and len(vendor_table.rows) == 4


def test_report_links_every_figure(report_dir):
    text = (report_dir / "report.md").read_text()
    links = set(re.findall(r"\]\(([^)]+)\)", text))
    assert all((report_dir / link).is_file() for link in links), links
    for path in report_dir.iterdir():
        if path.suffix in (".png", ".svg", ".csv"):
            assert path.name in links, path.name


def test_html_report_holds_every_figure_inline_and_loads_nothing(report_dir):
    html = (report_dir / "report.html").read_text()
    images = re.findall(r"<img [^>]*src='([^']+)'", html)
    pngs = sorted(report_dir.glob("*.png"))
    assert len(images) == len(pngs) and all(src.startswith("data:image/png;base64,") for src in images)
    assert {base64.b64decode(src.split(",", 1)[1]) for src in images} == {p.read_bytes() for p in pngs}
    assert not re.search(r"""(src|href)=['"](?!data:|#|https?://[^'"]+' rel='noreferrer')""", html)
    assert not re.search(r"<(script|link|iframe)\b", html) and "default-src 'none'" in html
    assert "Rubin" in html or "baseline" in html.lower()
    for name in ("public_clusters.csv", "nvidia_dc_revenue.csv", "frontier_runs.csv"):
        assert name in html  # the sources of the reference data
    assert "the race as sourced" in html  # the scenario's story (its opening comment)


def _section(report_dir: Path, title: str) -> str:
    text = (report_dir / "report.md").read_text()
    return text.split(f"### {title}\n")[1].split("\n### ")[0]


def _titles(short_run, small_sweep) -> dict[str, str]:
    return input_titles(read_folders([short_run, small_sweep]))


def test_report_summary_names_the_leader_and_firsts(short_run, small_sweep, report_dir):
    text = _section(report_dir, _titles(short_run, small_sweep)[RUN])
    a = _table(short_run, "agents")
    last = a[a["date"] == a["date"].max()].sort_values("h100e", ascending=False)
    leader = last[last["kind"] != "other"].iloc[0]  # the rest of the market is an aggregate, not a contender
    assert f"| {agent_name(leader['agent'])} | {leader['kind']} | {leader['h100e'] / 1e6:.2f} |" in text
    assert "| Rest of market |" not in text
    rest = last.loc[last["kind"] == "other", "h100e"].sum()
    assert f"the rest of the market, an aggregate, holds {rest / 1e6:.2f} M" in text
    ev = _table(short_run, "events")
    first = ev[(ev["event"] == "first_online") & (ev["system"] == "gb300_nvl72") & (ev["agent"] != "rest_of_market")]
    first = first.sort_values("date", kind="stable").iloc[0]  # the short run reaches GB300
    row = next(line for line in text.splitlines() if line.startswith("| GB300 NVL72 |"))
    assert row.split(" | ")[2] == f"{first['date']:%Y-%m} {agent_name(first['agent'])}"


def test_report_of_a_sweep_gives_bands_and_how_often_an_agent_is_first(short_run, small_sweep, report_dir):
    text = _section(report_dir, _titles(short_run, small_sweep)[SWEEP])
    assert f"{SWEEP_RUNS} runs" in text and "(median, 5-95% range in brackets)" in text
    ev = _table(small_sweep, "events")
    gb300 = ev[(ev["event"] == "first_online") & (ev["system"] == "gb300_nvl72") & (ev["agent"] != "rest_of_market")]
    per_run = gb300.sort_values(["run", "date"], kind="stable").drop_duplicates("run")
    counts = per_run["agent"].value_counts()
    top = sorted(counts.index[counts == counts.max()])[0]
    cell = next(line for line in text.splitlines() if line.startswith("| GB300 NVL72 |")).split(" | ")[2]
    assert cell == (f"{_month_at(per_run['date'], 0.5):%Y-%m} {agent_name(top)} "
                    f"({counts.max() / len(per_run):.0%} of {len(per_run)} runs)")


@pytest.mark.slow
def test_report_of_one_run_skips_what_needs_more_with_a_note(short_run, tmp_path):
    out = tmp_path / "one"
    build_report([short_run], out, progress=False, jobs=1)
    text = (out / "report.md").read_text()
    for name in ("comparison", "uncertainty", "sensitivity"):
        assert f"`{name}` not drawn" in text and not (out / f"{name}.png").exists()
    assert (out / "shares.png").is_file() and (out / "report.html").is_file()
    assert (out / "vendors.png").is_file()  # the baseline sells TPUs, Trainium and AMD beside NVIDIA


# -- names -----------------------------------------------------------------------------------------------------------
def test_names_come_from_the_scenario_file_and_the_catalog(short_run, small_sweep):
    titles = _titles(short_run, small_sweep)
    assert scenario_title("scenarios/baseline.toml") == "Baseline"
    assert scenario_title("scenarios/rubin_delay.toml") == "Rubin delay"
    assert titles[RUN] == "Baseline (End = 2026-12)"  # the run's --set overrides, read as words
    assert titles[SWEEP] == "short_sweep"  # a scenario file without an opening comment: its name
    assert system_name("hgx_h100") == "HGX H100" and system_name("vr_nvl72") == "Vera Rubin NVL72"
    assert parameter_name("kinds.hyperscaler.wait_tau_months") == "Hyperscalers: wait tau (months)"
    assert parameter_name("supplier.delay_months.vr_nvl72") == "NVIDIA supply: Vera Rubin NVL72 delay (months)"


# -- the numbers behind the figures ----------------------------------------------------------------------------------
def test_capacity_csv_equals_agents_h100e_and_the_record(short_run, small_sweep, report_dir):
    got = _csv(report_dir / "capacity.csv", RUN).set_index(["date", "agent"])
    want = _table(short_run, "agents").set_index(["date", "agent"])["h100e"]
    assert len(got) == len(want)
    np.testing.assert_allclose(got.loc[want.index, "h100e"], want, rtol=1e-9)
    assert (got["runs"] == 1).all() and (got["h100e_p05"] == got["h100e_p95"]).all()
    got = _csv(report_dir / "capacity.csv", SWEEP).set_index(["date", "agent"])
    g = _table(small_sweep, "agents").groupby(["date", "agent"])["h100e"]
    np.testing.assert_allclose(got.loc[g.median().index, "h100e"], g.median(), rtol=1e-9)
    np.testing.assert_allclose(got.loc[g.median().index, "h100e_p95"], g.quantile(0.95), rtol=1e-9)
    np.testing.assert_allclose(got.loc[g.mean().index, "h100e_mean"], g.mean(), rtol=1e-9)
    assert (got["h100e_p05"] <= got["h100e"] + 1e-6).all() and (got["runs"] == SWEEP_RUNS).all()
    rec = _csv(report_dir / "capacity_record.csv", dates=())
    want = _record("h100e_by_owner.csv")
    want = want[(want["metric"] == "h100e") & want["owner"].isin(["Google", "Microsoft", "Amazon", "Meta", "Oracle",
                                                                   "xAI"])]
    assert sorted(rec["value"]) == sorted(want["value"]) and set(rec["source_url"]) == set(want["source_url"])


def test_shares_csv_are_shares_of_all_h100e(short_run, small_sweep, report_dir):
    a = _table(short_run, "agents")
    got = _csv(report_dir / "shares.csv", RUN).set_index(["date", "agent"])["share"]
    want = (a["h100e"] / a.groupby("date")["h100e"].transform("sum")).set_axis(
        pd.MultiIndex.from_frame(a[["date", "agent"]]))
    np.testing.assert_allclose(got.loc[want.index], want.fillna(0.0), rtol=1e-9)
    kinds = _csv(report_dir / "shares_kind.csv")
    assert np.allclose(kinds.groupby(["label", "date"])["share"].sum(), 1.0)
    s = _table(small_sweep, "agents")
    per_run = s.groupby(["run", "date", "kind"])["h100e"].sum() / s.groupby(["run", "date"])["h100e"].sum()
    mean = per_run.groupby(["date", "kind"]).mean()
    got = _csv(report_dir / "shares_kind.csv", SWEEP).set_index(["date", "kind"])["share"]
    np.testing.assert_allclose(got.loc[mean.index], mean, rtol=1e-9)
    vendor = _csv(report_dir / "shares_vendor.csv")
    assert {"NVIDIA", "Google", "AWS", "AMD"} >= set(vendor["vendor"]) >= {"NVIDIA"}  # every vendor is sold (issue 18)
    by = [c for c in ("label", "date") if c in vendor]
    assert np.allclose(vendor.groupby(by)["share"].sum(), 1.0)
    rec = _csv(report_dir / "shares_record.csv", dates=())
    want = _record("h100e_by_owner.csv")
    want = want[(want["metric"] == "share_of_world_pct") & want["owner"].str.startswith("Top-5")]
    assert sorted(rec["share"] * 100) == pytest.approx(sorted(want["value"]))


def test_generations_csv_weighs_gpus_by_h100e(short_run, report_dir):
    got = _csv(report_dir / "generations.csv", RUN).set_index(["date", "system"])
    a = _table(short_run, "agents")
    cols = [c for c in a.columns if c.startswith("gpus_online_")]
    gpus = a.groupby("date")[cols].sum().stack()
    gpus.index = gpus.index.set_levels(gpus.index.levels[1].str.removeprefix("gpus_online_"), level=1)
    np.testing.assert_array_equal(got.loc[gpus.index, "gpus"].to_numpy(), gpus.to_numpy())
    per_gpu = gpus.index.get_level_values(1).map(_per_gpu).to_numpy()
    np.testing.assert_allclose(got.loc[gpus.index, "h100e"], gpus.to_numpy() * per_gpu, rtol=1e-9)
    total = got.groupby(level="date")["h100e"].sum()
    np.testing.assert_allclose(total, a.groupby("date")["h100e"].sum().loc[total.index], rtol=1e-9)


def test_timeline_csv_is_each_agents_first_dates(short_run, small_sweep, report_dir):
    dates = ("date", "date_p05", "date_p95")
    got = _csv(report_dir / "timeline.csv", RUN, dates).set_index(["agent", "system", "event"])
    ev = _table(short_run, "events")
    ev = ev[ev["event"].isin(["first_online", "first_cluster_at_scale"])]
    ev = ev[(ev["event"] != "first_cluster_at_scale") | ev["detail"].str.contains("(at_scale_gpus)", regex=False)]
    want = ev.groupby(["agent", "system", "event"])["date"].min()
    assert len(got) == len(want) > 0
    assert (got.loc[want.index, "date"] == want).all() and (got["date_p05"] == got["date_p95"]).all()
    agents = _table(short_run, "agents")
    aggregates = set(agents.loc[agents["kind"] == "other", "agent"])  # the rest of the market and China: never first
    named = want[[a not in aggregates for a in want.index.get_level_values(0)]]
    first = named.groupby(level=["system", "event"]).transform("min")
    behind = (named.dt.year - first.dt.year) * 12 + named.dt.month - first.dt.month
    np.testing.assert_array_equal(got.loc[behind.index, "months_behind"], behind)
    got = _csv(report_dir / "timeline.csv", SWEEP, dates).set_index(["agent", "system", "event"])
    ev = _table(small_sweep, "events")
    mine = ev[(ev["agent"] == "coreweave") & (ev["system"] == "gb300_nvl72") & (ev["event"] == "first_online")]
    per_run = mine.groupby("run")["date"].min()
    row = got.loc[("coreweave", "gb300_nvl72", "first_online")]
    assert row["runs_reached"] == len(per_run) and row["runs"] == SWEEP_RUNS
    assert (row["date_p05"], row["date"], row["date_p95"]) == tuple(_month_at(per_run, q) for q in (0.05, 0.5, 0.95))


def test_clusters_csv_equals_agents_clusters_and_the_record(short_run, report_dir):
    got = _csv(report_dir / "clusters.csv", RUN).set_index(["date", "agent"])["largest_cluster_gpus"]
    a = _table(short_run, "agents")
    want = a[a["kind"] != "other"].set_index(["date", "agent"])["largest_cluster_gpus"]
    assert len(got) == len(want)
    np.testing.assert_array_equal(got.loc[want.index].to_numpy(), want.to_numpy())
    mw = _csv(report_dir / "clusters_mw.csv", RUN).set_index(["date", "agent"])["largest_cluster_mw"]
    want_mw = a[a["kind"] != "other"].set_index(["date", "agent"])["largest_cluster_mw"]
    np.testing.assert_allclose(mw.loc[want_mw.index].to_numpy(float), want_mw.to_numpy(float), rtol=1e-9)
    rec = _csv(report_dir / "clusters_record.csv", dates=())
    want = _record("public_clusters.csv")
    assert len(rec) == len(want) and list(rec["source_url"]) == list(want["source_url"])
    np.testing.assert_array_equal(rec["gpus"].fillna(-1), want["gpus"].fillna(-1))


def test_reach_csv_is_owned_plus_contracts_in_force(short_run, report_dir):
    got = _csv(report_dir / "reach.csv", RUN).set_index(["date", "agent"])
    a = _table(short_run, "agents")
    labs = a[a["kind"] == "lab"].set_index(["date", "agent"])
    np.testing.assert_allclose(got.loc[labs.index, "owned_h100e"], labs["h100e"], rtol=1e-9)
    # the market writes what its providers deliver on each lab's contracts: the figure reads it as written
    np.testing.assert_allclose(got.loc[labs.index, "contracted_h100e"], labs["contracted_h100e"], rtol=1e-9)
    np.testing.assert_allclose(got.loc[labs.index, "reachable_h100e"], labs["reachable_h100e"], rtol=1e-9)
    assert (got["contracted_from"] == "table").all() and labs["contracted_h100e"].max() > 0


def test_lab_compute_rebuilds_contracts_from_events_for_results_without_the_columns(short_run):
    """Results from before the market wrote contracted_h100e: outcomes rebuild it from contract_signed events."""
    a = _table(short_run, "agents").drop(columns=["contracted_h100e", "reachable_h100e"])
    labs = a[a["kind"] == "lab"].set_index(["date", "agent"])["h100e"]
    ev = _table(short_run, "events")
    got = O.lab_compute(a, ev).set_index(["date", "agent"])
    ev = ev[ev["event"] == "contract_signed"]
    years = ev["detail"].str.extract(r"over ([0-9.]+) years")[0].astype(float)
    held = pd.Series(0.0, index=labs.index)
    for r, y in zip(ev.itertuples(), years, strict=True):
        end = r.date + pd.DateOffset(months=round(y * 12))
        for date, agent in labs.index:
            if agent == r.agent and r.date <= date < end:
                held[(date, agent)] += r.gpus * _per_gpu(r.system)
    np.testing.assert_allclose(got.loc[held.index, "contracted_h100e"], held, rtol=1e-9)
    assert (got["contracted_from"] == "events").all() and held.max() > 0


def test_training_csv_holds_each_run_and_the_record(short_run, report_dir):
    got = _csv(report_dir / "training.csv", RUN)
    ev = _table(short_run, "events")
    started = ev[ev["event"] == "training_run_started"]
    assert len(got) == len(started) > 0
    np.testing.assert_allclose(got["flop"], started["detail"].str.split(" FLOP").str[0].astype(float), rtol=1e-12)
    rec = _csv(report_dir / "training_record.csv", dates=())
    np.testing.assert_allclose(sorted(rec["training_flop"]), sorted(_record("frontier_runs.csv")["training_flop"]))


def test_frontier_csv_equals_agents_days(short_run, report_dir):
    got = _csv(report_dir / "frontier.csv", RUN).set_index(["date", "agent"])["frontier_run_days"]
    want = _table(short_run, "agents").set_index(["date", "agent"])["frontier_run_days"]
    np.testing.assert_allclose(got.loc[want.index].to_numpy(float), want.to_numpy(float), rtol=1e-9)


def test_power_csv_equals_power_online_and_the_record(short_run, report_dir):
    got = _csv(report_dir / "power.csv", RUN).set_index(["date", "agent"])["power_mw_online"]
    want = _table(short_run, "agents").set_index(["date", "agent"])["power_mw_online"]
    np.testing.assert_allclose(got.loc[want.index], want, rtol=1e-9)
    rec = _csv(report_dir / "power_record.csv", dates=())
    file = _record("power_by_owner.csv")
    assert "added_mw" not in set(rec["metric"]) and set(rec["source_url"]) <= set(file["source_url"])
    merged = rec.merge(file, on=["owner", "metric", "as_of", "source_url"], suffixes=("", "_file"))
    assert len(merged) == len(rec) and (merged["value_mw"] == merged["value_mw_file"]).all()


def test_capex_csv_counts_spending_from_the_companys_first_year_and_sums_the_record(short_run, report_dir):
    rec = _csv(report_dir / "capex_record.csv", dates=()).set_index(["agent", "year"])
    file = _record("capex_by_owner.csv")
    aws = file[(file["company"] == "Amazon") & file["period"].isin(["CY2024", "CY2025", "CY2026"])]
    reported = aws[aws["kind"] == "reported"].sort_values("published").groupby("period").last()
    cy2024 = reported.loc["CY2024", "capex_usd_bn_low"]
    cy2025 = reported.loc["CY2025", "capex_usd_bn_low"]
    guided = aws[(aws["period"] == "CY2026") & (aws["kind"] == "guidance")].iloc[-1]
    assert rec.loc[("aws", 2024), "capex_usd_cumulative"] == pytest.approx(cy2024 * 1e9)
    assert rec.loc[("aws", 2026), "capex_usd_cumulative"] == pytest.approx((cy2024 + cy2025 + guided[
        "capex_usd_bn_low"]) * 1e9)
    params = read_folders([short_run]).sources[0].scenario_params
    assert rec.loc[("aws", 2026), "ai_systems_share"] == params["hyperscaler"]["aws"]["ai_systems_share"]  # its own
    assert rec.loc[("microsoft", 2026), "ai_systems_share"] == params["kinds"]["hyperscaler"]["ai_systems_share"]
    got = _csv(report_dir / "capex.csv", RUN).set_index(["date", "agent"])["capex_usd_cumulative"]
    a = _table(short_run, "agents").set_index(["date", "agent"])["capex_usd_cumulative"]
    aws_model = a.xs("aws", level="agent")
    np.testing.assert_allclose(got.xs("aws", level="agent").loc[aws_model.index], aws_model, rtol=1e-9)
    cw = got.xs("coreweave", level="agent")  # its first calendar year with a figure is 2025: counted from January
    before = a.loc[(pd.Timestamp("2024-12-01"), "coreweave")]
    np.testing.assert_allclose(cw.loc["2025-01-01":], (a.xs("coreweave", level="agent").loc["2025-01-01":] - before),
                               rtol=1e-9)


def test_quarterly_revenue_is_sum_of_monthly_rows_beside_every_reported_quarter(short_run, report_dir):
    got = _csv(report_dir / "revenue.csv", RUN, ("period_start", "period_end")).set_index("period")
    m = _table(short_run, "market")
    fiscal_year = m["date"].dt.year + (m["date"].dt.month >= 2)
    quarter = "Q" + (((m["date"].dt.month - 2) % 12) // 3 + 1).astype(str) + " FY" + fiscal_year.astype(str)
    want = m.groupby(quarter)["nvidia_revenue_usd"].agg(["sum", "count"])
    assert set(got.index) == set(want.index)  # partial quarters at the edges are kept (flagged) in this figure
    np.testing.assert_allclose(got.loc[want.index, "nvidia_revenue_usd"], want["sum"], rtol=1e-12)
    assert (got.loc[want.index, "months"] == want["count"]).all()
    assert (got["complete"] == (got["months"] == 3)).all() and not got.loc["Q4 FY2024", "complete"]
    assert got.loc["Q4 FY2025", "period_end"] == pd.Timestamp("2025-01-31")
    reported = _record("nvidia_dc_revenue.csv").set_index("quarter")["dc_revenue_usd_bn"]
    both = got["reported_dc_revenue_usd"].dropna()
    assert len(both) and np.allclose(both / 1e9, reported.loc[both.index])
    assert {"Q4 FY2026", "Q1 FY2027"} <= set(both.index)  # fiscal 2026 and the latest quarter on record
    full = got[got["complete"] & got["reported_dc_revenue_usd"].notna()]
    np.testing.assert_allclose(full["model_vs_reported"], full["nvidia_revenue_usd"] / full["reported_dc_revenue_usd"]
                               - 1, rtol=1e-12)
    ship = _csv(report_dir / "revenue_shipments.csv", RUN).set_index(["period", "system"])["gpus"]
    q = m[quarter == "Q1 FY2026"]
    assert ship.loc[("Q1 FY2026", "gb200_nvl72")] == q["units_shipped_gb200_nvl72"].sum() * 72


def test_backlog_and_rental_csvs_equal_market_columns_and_the_record(short_run, report_dir):
    m = _table(short_run, "market").set_index("date")
    backlog = _csv(report_dir / "backlog.csv", RUN)
    for system, d in backlog.groupby("system"):
        d = d.set_index("date")
        np.testing.assert_array_equal(d["backlog_units"], m.loc[d.index, f"backlog_units_{system}"])
        per = systems()[system].gpus_per_system
        np.testing.assert_array_equal(d["backlog_gpus"], d["backlog_units"] * per)
    rental = _csv(report_dir / "rental.csv", RUN)
    for system, d in rental.groupby("system"):
        d = d.set_index("date")
        np.testing.assert_allclose(d["rental_usd_per_gpu_hour"], m.loc[d.index, f"rental_usd_per_gpu_hour_{system}"],
                                   rtol=1e-9)
    rec = _csv(report_dir / "rental_record.csv", dates=())
    file = _record("rental_prices.csv")
    assert len(rec) == len(file)
    low = file["usd_per_gpu_hour_low"].fillna(file["usd_per_gpu_hour_high"])
    np.testing.assert_allclose(rec["low"], low)


def test_comparison_is_each_input_minus_the_first(short_run, small_sweep, report_dir):
    run = _table(short_run, "agents").groupby("date")["h100e"].sum()
    sweep = _table(small_sweep, "agents").groupby(["run", "date"])["h100e"].sum().groupby("date").median()
    got = _csv(report_dir / "comparison_h100e.csv").set_index("date")
    assert set(got["label"]) == {SWEEP} and not got["paired"].any()  # the run's seed 3 is not among 20..27
    np.testing.assert_allclose(got.loc[sweep.index, "delta"], sweep - run.loc[sweep.index], rtol=1e-9)
    assert got["noise_p05"].isna().all()  # a single baseline run: no seeds to tell noise by
    rev = _csv(report_dir / "comparison_revenue.csv").set_index("year")
    m, s = _table(short_run, "market"), _table(small_sweep, "market")
    want = (s[s["date"].dt.year == 2025].groupby("run")["nvidia_revenue_usd"].sum().median()
            - m[m["date"].dt.year == 2025]["nvidia_revenue_usd"].sum())
    assert rev.loc[2025, "delta"] == pytest.approx(want)


def test_uncertainty_fans_are_quantiles_across_runs(small_sweep, report_dir):
    got = _csv(report_dir / "uncertainty_h100e.csv").set_index("date")
    assert set(got["label"]) == {SWEEP}  # the single run has no fan
    totals = _table(small_sweep, "agents").groupby(["run", "date"])["h100e"].sum().unstack("run")
    for q, col in ((0.05, "total_h100e_p05"), (0.25, "total_h100e_p25"), (0.5, "total_h100e"),
                   (0.75, "total_h100e_p75"), (0.95, "total_h100e_p95")):
        np.testing.assert_allclose(got.loc[totals.index, col], totals.quantile(q, axis=1), rtol=1e-9)
    firsts = _csv(report_dir / "uncertainty_firsts.csv")
    ev = _table(small_sweep, "events")
    gb300 = ev[(ev["event"] == "first_online") & (ev["system"] == "gb300_nvl72") & (ev["agent"] != "rest_of_market")]
    want = gb300.groupby("run")["date"].min().sort_index()
    mine = firsts[firsts["system"] == "gb300_nvl72"].set_index("run")["date"].sort_index()
    assert list(pd.to_datetime(mine)) == list(want)


def test_sensitivity_outcomes_and_indices(small_sweep, report_dir):
    from scipy.stats import spearmanr

    out = _csv(report_dir / "sensitivity_outcomes.csv").set_index("run")
    a = _table(small_sweep, "agents")
    end = a[a["date"] == a["date"].max()].groupby("run")["h100e"].sum()
    np.testing.assert_allclose(out.loc[end.index, "total_h100e_end"], end, rtol=1e-9)
    runs = _table(small_sweep, "runs").set_index("run")
    np.testing.assert_allclose(out[SWEEP_PARAM], runs.loc[out.index, SWEEP_PARAM])
    m = _table(small_sweep, "market")
    revenue_2026 = m[m["date"].dt.year == 2026].groupby("run")["nvidia_revenue_usd"].sum()
    np.testing.assert_allclose(out.loc[revenue_2026.index, "nvidia_revenue_usd_2026"], revenue_2026, rtol=1e-12)
    idx = _csv(report_dir / "sensitivity.csv")
    assert set(idx["design"]) == {"lhs"} and set(idx["parameter"]) == {SWEEP_PARAM, sensitivity.DUMMY}
    real = idx[idx["parameter"] == SWEEP_PARAM].set_index("outcome")
    for outcome in ("total_h100e_end", "largest_cluster_gpus", "nvidia_revenue_usd_2026"):
        pair = out[[SWEEP_PARAM, outcome]].dropna()
        if pair[outcome].nunique() < 2:
            assert real.loc[outcome, "within_noise"]
            continue
        assert real.loc[outcome, "spearman_rho"] == pytest.approx(spearmanr(pair[SWEEP_PARAM], pair[outcome])[0])
        if np.isnan(real.loc[outcome, "delta"]):  # a density of a few near-equal values: delta falls back
            assert real.loc[outcome, "importance"] == real.loc[outcome, "rbd_fast"]
            continue
        # the bias-reduced delta of a few runs may dip below zero; its interval reaches the [0, 1] range
        assert real.loc[outcome, "delta"] + real.loc[outcome, "delta_conf"] >= 0 and real.loc[outcome, "delta"] <= 1
        assert real.loc[outcome, "delta_conf"] > 0
        assert real.loc[outcome, "runs"] == len(pair)
    assert real.loc["total_h100e_end", "parameter_name"] == "NVIDIA supply: supply growth multiplier [0.5-1.5]"


def test_figures_say_when_they_do_not_apply(tmp_path, short_run, small_sweep):
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
    with pytest.raises(NotApplicable, match="sweep of at least 3 runs"):
        uncertainty.make(read_folders([short_run]), tmp_path / "figs")
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
    proc = subprocess.run([sys.executable, "-m", "analysis.shares", str(tmp_path / "missing"), "--out",
                           str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no such file or folder" in proc.stderr and "Traceback" not in proc.stderr


def test_comparison_cli_with_one_input_exits_2(short_run, tmp_path, capsys):
    assert comparison.main([str(short_run), "--out", str(tmp_path)]) == 2
    assert "two or more" in capsys.readouterr().err


def _small_figure(alpha: float = 1.0):
    from analysis import figure as F

    fig = F.new_figure(2.5)
    fig.patch.set_alpha(alpha)
    axes = fig.subfigures(1, 1).subplots(1, 2)
    axes[0].plot([0, 1, 2], [1, 3, 2], label="a line")
    axes[1].bar([0, 1], [2, 5])
    axes[1].set_title("bars")
    F.title(fig, "a title")
    F.definitions(fig, "what the figure shows, at its foot")
    return fig, axes


def test_figures_are_laid_out_where_savefig_would_put_them():
    """layout_once runs the layout engine once, at the PNG's DPI: the same positions as savefig's own pass."""
    import io

    import matplotlib.pyplot as plt

    from analysis import figure as F

    ours, our_axes = _small_figure()
    F.layout_once(ours)
    assert ours.get_layout_engine() is None and ours.dpi == DPI
    theirs, their_axes = _small_figure()
    theirs.savefig(io.BytesIO(), format="png", dpi=DPI)
    for a, b in zip(our_axes, their_axes, strict=True):
        assert a.get_position().bounds == pytest.approx(b.get_position().bounds, abs=1e-9)
    plt.close(ours)
    plt.close(theirs)


@pytest.mark.parametrize("alpha", [1.0, 0.0])
def test_png_bytes_decode_to_the_canvas_pixels(alpha):
    """The hand-written PNG is a valid file holding exactly the canvas's pixels (RGB when all opaque, else RGBA),
    at DPI."""
    import io

    import matplotlib.pyplot as plt
    from PIL import Image

    from analysis import figure as F

    fig, _ = _small_figure(alpha)
    F.layout_once(fig)
    data = F.png_bytes(fig)
    canvas = np.asarray(fig.canvas.buffer_rgba())
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        assert image.mode == ("RGB" if alpha == 1.0 else "RGBA")
        assert image.size == (round(WIDTH_IN * DPI), round(2.5 * DPI))
        assert image.info["dpi"] == pytest.approx((DPI, DPI), abs=0.05)  # pHYs holds whole pixels per metre
        pixels = np.asarray(image)
    assert np.array_equal(pixels, canvas[..., :3] if alpha == 1.0 else canvas)
    plt.close(fig)


def _svg_of(fig, **kwargs) -> str:
    import io

    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "airace"}):  # fixed ids: two files of one figure compare equal
        fig.savefig(out, format="svg", metadata={"Date": None}, **kwargs)
    return out.getvalue()


def test_report_canvas_writes_the_svg_matplotlib_writes():
    """The report's canvas (text measured once per process, font heights read once) writes the same SVG as
    matplotlib's own SVG backend."""
    from analysis import figure as F

    fig, _ = _small_figure()
    F.layout_once(fig)
    ours = _svg_of(fig)
    assert ours == _svg_of(fig)  # measured again from the process's cache
    assert ours == _svg_of(fig, backend="svg")


def test_report_canvas_measures_text_as_matplotlib_and_draws_it_in_place():
    """Text measured and laid out by the report's Agg renderer as by matplotlib's; drawn a string at a time, its
    pixels differ from matplotlib's glyph-by-glyph drawing only at the glyphs' edges, each label's ink centred within
    1.5 pixels of matplotlib's."""
    import io

    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties
    from PIL import Image

    from analysis import canvas
    from analysis import figure as F

    ours, theirs = canvas._Agg(400, 300, DPI), RendererAgg(400, 300, DPI)
    for weight in ("normal", "bold"):
        prop = FontProperties(size=9, weight=weight)
        for text in ("2025", "H100e online (millions)", "Q1 FY2026"):
            expected = theirs.get_text_width_height_descent(text, prop, False)
            assert ours.get_text_width_height_descent(text, prop, False) == expected
            assert ours.get_text_width_height_descent(text, prop.copy(), False) == expected  # from the cache
    fig, axes = _small_figure()
    F.layout_once(fig)
    for ax in axes:
        for text in (ax.title, *ax.get_xticklabels()):
            assert text.get_window_extent(ours).bounds == pytest.approx(text.get_window_extent(theirs).bounds)
    pngs = []
    for backend in (None, "agg"):
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI, backend=backend)
        pngs.append(np.asarray(Image.open(buffer).convert("L"), dtype=int))
    assert pngs[0].shape == pngs[1].shape
    assert 0 < (np.abs(pngs[0] - pngs[1]) > 64).mean() < 0.01
    height = pngs[0].shape[0]
    for ax in axes:
        (x_lo, x_hi), (y_lo, y_hi) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        drawn = [ax.title, *(t for t in ax.get_xticklabels() if x_lo <= t.get_position()[0] <= x_hi),
                 *(t for t in ax.get_yticklabels() if y_lo <= t.get_position()[1] <= y_hi)]
        for text in (t for t in drawn if t.get_text()):
            x0, y0, x1, y1 = text.get_window_extent(theirs).extents  # pixels from the bottom left
            box = (slice(int(height - y1) - 2, int(height - y0) + 3), slice(int(x0) - 2, int(x1) + 3))
            centres = []
            for png in pngs:
                ink = 255.0 - png[box]
                rows, cols = np.indices(ink.shape)
                centres.append(((ink * rows).sum() / ink.sum(), (ink * cols).sum() / ink.sum()))
            assert centres[0] == pytest.approx(centres[1], abs=1.5)  # glyphs on whole pixels, as before 3.11


def _busy_figure(image: bool = False):
    """A figure with every kind of drawing call the report makes: paths, markers, collections (bars, scatter, bands),
    clipped artists, dashed lines, a legend, annotations, text, and with `image` an image."""
    from analysis import figure as F

    fig = F.new_figure(3.0)
    axes = F.grid_axes(fig.subfigures(1, 1), 3, ncols=3, sharex=False)
    dates = pd.date_range("2025-01-01", periods=24, freq="MS")
    axes[0].plot(dates, np.linspace(1, 5, 24), label="a line")
    axes[0].plot(dates, np.linspace(5, 2, 24), ls="--", marker="o", markersize=3, label="dashed, with markers")
    F.band(axes[0], dates, np.linspace(0.5, 3, 24), np.linspace(2, 6, 24), "#1f77b4")
    F.date_axis(axes[0], dates[0], dates[-1], narrow=True)
    axes[0].legend(fontsize=7)
    F.bars(axes[1], dates, np.arange(24) % 5 + 1, 20, "#e66101")
    axes[1].annotate("a note", (dates[12], 3), xytext=(5, 2), textcoords="offset points", fontsize=7)
    F.date_axis(axes[1], dates[0], dates[-1], narrow=True)
    axes[2].scatter([1, 2, 3, 4], [4, 1, 3, 2], s=[10, 20, 30, 40], color="#5e3c99", alpha=0.7, linewidths=0)
    axes[2].set_yscale("log")
    F.count_ticks(axes[2])
    if image:
        axes[2].imshow(np.arange(12.0).reshape(3, 4), aspect="auto", interpolation="nearest", extent=(0.5, 4.5, 1, 5))
    F.title(fig, "a title", "a subtitle")
    F.definitions(fig, "what the figure shows, at its foot")
    F.layout_once(fig)
    return fig


@pytest.mark.parametrize("image", [False, True])
def test_one_walk_draws_the_svg_savefig_writes_and_the_png_agg_draws(image, monkeypatch):
    """svg_and_png draws both files in one walk over the artists: the SVG is savefig's, byte for byte; the PNG is
    the Agg canvas's pixels, exactly so once text is hidden (text lands within a pixel: its place comes from the
    SVG's measures). A figure with an image is drawn twice, and both files are then exactly the two draws."""
    import io

    import matplotlib
    from PIL import Image

    from analysis import figure as F

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")  # the SVG's date
    monkeypatch.setitem(matplotlib.rcParams, "svg.hashsalt", "airace")
    for hide_text in (False, True):
        fig = _busy_figure(image)
        if hide_text:
            for text in fig.findobj(matplotlib.text.Text):
                text.set_visible(False)
        svg, png = F.svg_and_png(fig)
        expected = io.StringIO()
        fig.savefig(expected, format="svg")
        assert svg == expected.getvalue()
        ours = np.asarray(Image.open(io.BytesIO(png)), dtype=int)
        theirs = np.asarray(Image.open(io.BytesIO(F.png_bytes(fig))), dtype=int)
        assert ours.shape == theirs.shape == (round(3.0 * DPI), round(WIDTH_IN * DPI), 3)
        differ = np.abs(ours - theirs).max(axis=2) > 0
        if hide_text or image:
            assert not differ.any()
        else:
            assert differ.mean() < 0.002  # labels at most a pixel apart


def test_copied_ticks_draw_what_matplotlib_ticks_draw(monkeypatch):
    """The report's axes copy each axis's first tick to make the others: the figure's SVG is the one matplotlib's own
    axes draw, and restyling one tick's label leaves the others as they were."""
    import matplotlib
    from matplotlib.figure import Figure

    from analysis import figure as F
    from analysis.axes import ReportAxes, ReportFigure

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    monkeypatch.setitem(matplotlib.rcParams, "svg.hashsalt", "airace")
    svgs = []
    for figure_class in (ReportFigure, Figure):
        monkeypatch.setattr(F, "ReportFigure", figure_class)
        fig = _busy_figure()
        assert all(isinstance(ax, ReportAxes) == (figure_class is ReportFigure) for ax in fig.get_axes())
        ticks = fig.get_axes()[0].yaxis.get_major_ticks()
        assert len(ticks) > 3
        ticks[2].label1.set_fontweight("bold")
        ticks[2].gridline.set_color("red")
        assert [t.label1.get_fontweight() for t in ticks[1:4]] == ["normal", "bold", "normal"]
        assert ticks[1].gridline.get_color() == ticks[3].gridline.get_color() != "red"
        svgs.append(F.svg_and_png(fig)[0])
    assert svgs[0] == svgs[1]


def test_text_measured_by_agg_is_drawn_from_the_bitmap_laid_out_then():
    """Measuring a string on the report's Agg renderer keeps the bitmap drawn from that layout: the same glyphs,
    descent and offsets as drawing it afresh."""
    from matplotlib.font_manager import FontProperties

    from analysis import canvas

    renderer = canvas._Agg(200, 100, DPI)
    for weight in ("normal", "bold"):
        prop, text = FontProperties(size=8.5, weight=weight), f"kept bitmap {weight} 2031-07"
        renderer.get_text_width_height_descent(text, prop, False)
        kept = canvas._bitmap(renderer, text, prop, True)
        canvas._bitmaps.clear()
        fresh = canvas._bitmap(renderer, text, prop, True)
        assert np.array_equal(kept[0], fresh[0]) and kept[0].any()
        assert kept[1:] == fresh[1:]


def test_fixed_ticks_draw_what_the_locators_would():
    """fix_ticks (before and after the layout) leaves every tick, label and offset text as the locators and
    formatters would draw them: the SVG is the same."""
    from matplotlib.ticker import AutoLocator, FixedLocator

    from analysis import figure as F

    def drawn(fix: bool) -> str:
        fig = F.new_figure(3.0)
        axes = F.grid_axes(fig, 3, ncols=3, sharex=True)
        for ax, scale in zip(axes, (1.0, 1e5, 1e-3), strict=True):
            ax.plot([0, 1, 2, 3], [scale, 3 * scale, 2 * scale, 5 * scale])
        axes[1].set_yscale("log")
        F.count_ticks(axes[1])
        axes[2].yaxis.set_major_locator(AutoLocator())  # depends on the axes' size
        if fix:
            F.fix_ticks(fig, sized=False)
        F.layout_once(fig)
        if fix:
            F.fix_ticks(fig)
            assert all(isinstance(a.yaxis.get_major_locator(), FixedLocator) for a in axes)
        return _svg_of(fig)

    assert drawn(True) == drawn(False)
