"""airace compare: leaders, first dates, end-of-horizon numbers and revenue agree with the tables computed directly
(with pandas, not through the outcomes module), for result folders and for a sweep folder; the JSON, text and CSV
outputs say the same; bad input exits 2 with one line."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SWEEP_RUNS

from analysis.compare import compare, format_table, long_table
from model.cli import main


def tables(folder: Path) -> dict[str, pd.DataFrame]:
    return {n: pd.read_parquet(folder / f"{n}.parquet") for n in ("agents", "market", "events")}


def direct_run_stats(folder: Path) -> dict:
    """Leaders, first events and end numbers of one result folder, computed straight from its tables."""
    t = tables(folder)
    agents, market, events = t["agents"], t["market"], t["events"]
    aggregate = set(agents.loc[agents["kind"] == "other", "agent"])  # the rest of the market never leads or is first
    leaders = {}
    for date in sorted(d for d in agents["date"].unique() if d.month == 12 or d == agents["date"].max()):
        at = agents[agents["date"] == date]
        named = at[~at["agent"].isin(aggregate)].sort_values(["h100e", "agent"], ascending=[False, True])
        top = named.iloc[0]
        shares = dict(zip(at["agent"], at["h100e"] / at["h100e"].sum(), strict=True))
        leaders[f"{date:%Y-%m}"] = (top["agent"], shares[top["agent"]], shares)
    firsts = {}
    own = (events["event"] != "first_cluster_at_scale") | events["detail"].str.contains("(at_scale_gpus)", regex=False)
    for event in ("first_delivery", "first_online", "first_cluster_at_scale"):  # at scale: the scenario's threshold
        ev = events[(events["event"] == event) & ~events["agent"].isin(aggregate) & own]
        ev = ev.sort_values("date", kind="stable").drop_duplicates("system")
        firsts[event] = {row.system: (f"{row.date:%Y-%m}", row.agent) for row in ev.itertuples()}
    last = agents[agents["date"] == agents["date"].max()]
    months = market.groupby(market["date"].dt.year)["nvidia_revenue_usd"].agg(["sum", "count"])
    fiscal_year = market["date"].dt.year + (market["date"].dt.month >= 2)
    fiscal = market.groupby(fiscal_year)["nvidia_revenue_usd"].agg(["sum", "count"])
    return {"leaders": leaders, "firsts": firsts, "total_h100e": last["h100e"].sum(),
            "largest": last.loc[~last["agent"].isin(aggregate), "largest_cluster_gpus"].max(),
            "revenue": {str(y): r["sum"] for y, r in months.iterrows() if r["count"] == 12},
            "revenue_fiscal": {f"FY{y}": r["sum"] for y, r in fiscal.iterrows() if r["count"] == 12}}


def test_result_folders_match_direct_computation(short_run, slow_supply_run):
    summaries = compare([short_run, slow_supply_run])
    assert [s["kind"] for s in summaries] == ["run", "run"] and [s["runs"] for s in summaries] == [1, 1]
    for summary, folder in zip(summaries, [short_run, slow_supply_run], strict=True):
        direct = direct_run_stats(folder)
        assert set(summary["leaders"]) == {"2024-12", "2025-12", "2026-12"}
        for year, (agent, share, _) in direct["leaders"].items():
            got = summary["leaders"][year]
            assert got["agent"] == agent and got["frequency"] == 1.0
            assert got["share"]["median"] == pytest.approx(share) == got["share"]["p05"]
        for event, systems in direct["firsts"].items():
            assert set(summary["firsts"][event]) == set(systems)
            for system, (date, agent) in systems.items():
                got = summary["firsts"][event][system]
                assert (got["date_median"], got["agent"]) == (date, agent)
                assert got["date_p05"] == got["date_p95"] == date and got["runs_with_event"] == 1
        assert "hgx_h100" not in summary["firsts"]["first_online"]  # running at the start: not part of the race
        assert summary["end"]["date"] == "2026-12"
        assert summary["end"]["total_h100e"]["median"] == pytest.approx(direct["total_h100e"])
        assert summary["end"]["largest_cluster_gpus"]["median"] == direct["largest"]
        assert {y: v["median"] for y, v in summary["nvidia_revenue_usd"].items()} == pytest.approx(direct["revenue"])
        assert set(summary["nvidia_revenue_usd_fiscal_year"]) == {"FY2025", "FY2026"}  # FY2024 and FY2027 partial
        assert ({y: v["median"] for y, v in summary["nvidia_revenue_usd_fiscal_year"].items()}
                == pytest.approx(direct["revenue_fiscal"]))
    # (the two runs differ in seed too, so their outcomes are not compared here: the direction of slower supply,
    # same seed, is tests/test_market_vendors.py::test_slower_packaging_and_memory_growth_ships_less_compute)


def _inverted_cdf(values: list[int], q: float) -> int:
    """The smallest value with at least a share q of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _month(text: str) -> int:
    return int(text[:4]) * 12 + int(text[5:7]) - 1


def test_sweep_matches_per_run_computation(small_sweep):
    (summary,) = compare([small_sweep])
    assert summary["kind"] == "sweep" and summary["runs"] == SWEEP_RUNS
    per_run = [direct_run_stats(small_sweep / "runs" / f"run_{i:04d}") for i in range(SWEEP_RUNS)]
    for year in ("2024-12", "2025-12", "2026-12"):
        leaders = [r["leaders"][year][0] for r in per_run]
        got = summary["leaders"][year]
        top = max(sorted(set(leaders)), key=leaders.count)
        assert got["agent"] == top and got["frequency"] == leaders.count(top) / SWEEP_RUNS
        shares = [r["leaders"][year][2][top] for r in per_run]
        assert got["share"]["median"] == pytest.approx(np.median(shares))
        assert got["share"]["p05"] == pytest.approx(np.percentile(shares, 5))
    checked = 0
    for event in ("first_delivery", "first_online", "first_cluster_at_scale"):
        systems = {s for r in per_run for s in r["firsts"][event]}
        assert set(summary["firsts"][event]) == systems
        for system in systems:
            seen = [r["firsts"][event][system] for r in per_run if system in r["firsts"][event]]
            months = [_month(d) for d, _ in seen]
            got = summary["firsts"][event][system]
            for key, q in (("date_p05", 0.05), ("date_median", 0.5), ("date_p95", 0.95)):
                m = _inverted_cdf(months, q)
                assert got[key] == f"{m // 12:04d}-{m % 12 + 1:02d}", (event, system, key)
            agents = [a for _, a in seen]
            top = max(sorted(set(agents)), key=agents.count)
            assert got["agent"] == top and got["agent_frequency"] == pytest.approx(agents.count(top) / len(seen))
            assert got["runs_with_event"] == len(seen) and got["runs"] == SWEEP_RUNS
            checked += 1
    assert checked >= 15
    totals = [r["total_h100e"] for r in per_run]
    end = summary["end"]["total_h100e"]
    assert (end["p05"], end["median"], end["p95"]) == pytest.approx(tuple(np.percentile(totals, [5, 50, 95])))
    assert len(set(totals)) > 1  # the sampled supply and the seeds matter, so the interval is a real one
    revenue_2025 = [r["revenue"]["2025"] for r in per_run]
    assert summary["nvidia_revenue_usd"]["2025"]["median"] == pytest.approx(np.median(revenue_2025))


def test_cli_text_json_and_csv(short_run, small_sweep, tmp_path, capsys):
    csv = tmp_path / "cmp.csv"
    assert main(["compare", str(short_run), str(small_sweep), "--out", str(csv)]) == 0
    text = capsys.readouterr().out
    direct = direct_run_stats(short_run)
    agent, share, _ = direct["leaders"]["2025-12"]
    line = next(row for row in text.splitlines() if row.startswith("H100e leader 2025-12"))
    assert f"{agent} {share:.0%}" in line and "leads" in line  # the sweep column says how often it leads
    assert str(short_run) in text.splitlines()[0] and f"sweep, {SWEEP_RUNS} runs" in text
    date, first = direct["firsts"]["first_online"]["hgx_h200"]  # H200 is new in 2024 (H100 was there at the start)
    assert f"{date} {first}" in next(r for r in text.splitlines() if r.startswith("first_online hgx_h200 "))
    fy = next(r for r in text.splitlines() if r.startswith("NVIDIA revenue FY2025 ($bn)"))
    assert f"{direct['revenue_fiscal']['FY2025'] / 1e9:.1f}" in fy
    long = pd.read_csv(csv)
    assert list(long.columns) == ["input", "kind", "runs", "section", "item", "statistic", "value"]
    row = long[(long["input"] == str(short_run)) & (long["section"] == "h100e_leader") &
               (long["item"] == "2025-12") & (long["statistic"] == "agent")]
    assert row["value"].tolist() == [agent]
    revenue = long[(long["input"] == str(short_run)) & (long["section"] == "nvidia_revenue_usd")
                   & (long["statistic"] == "median")].set_index("item")["value"].astype(float)
    assert {str(k): v for k, v in revenue.items()} == pytest.approx(direct["revenue"])
    assert [p.name for p in tmp_path.iterdir()] == ["cmp.csv"]

    assert main(["compare", str(short_run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == json.loads(json.dumps({"inputs": compare([short_run])}))


@pytest.mark.parametrize(("args", "expected"), [
    (["{tmp}"], "not a result folder (manifest.json + agents.parquet) nor a sweep folder"),
    (["{a}", "--out", "{tmp}/x.txt"], "--out {tmp}/x.txt: expected a file name ending in .csv"),
])
def test_bad_inputs_exit_2(short_run, tmp_path, capsys, args, expected):
    fill = {"tmp": str(tmp_path), "a": str(short_run)}
    assert main(["compare", *(a.format(**fill) for a in args)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected.format(**fill) in err, err


def test_compare_shows_vendor_beside_system_and_vendor_shares(short_run, vendor_run):
    from model.hardware import systems

    plain, vendors = compare([short_run, vendor_run])
    catalog = systems()
    a0 = tables(short_run)["agents"]
    end0 = a0[a0["date"] == a0["date"].max()]
    nvidia = sum((end0[c] * catalog[c.removeprefix("gpus_online_")].h100e_per_gpu).sum() for c in end0.columns
                 if c.startswith("gpus_online_") and c != "gpus_online"
                 and catalog[c.removeprefix("gpus_online_")].vendor == "NVIDIA")
    plain_shares = plain["vendor_share_h100e"]["online_at_end"]
    assert plain_shares["NVIDIA"]["median"] == pytest.approx(nvidia / end0["h100e"].sum(), rel=1e-6)
    assert sum(v["median"] for v in plain_shares.values()) == pytest.approx(1.0)
    t = tables(vendor_run)
    a, m = t["agents"], t["market"]
    end = a[a["date"] == a["date"].max()]
    google = (end["gpus_online_tpu_v7"] * catalog["tpu_v7"].h100e_per_gpu).sum()
    got = vendors["vendor_share_h100e"]["online_at_end"]
    assert set(got) == {"NVIDIA", "Google", "AWS", "AMD"}
    assert got["Google"]["median"] == pytest.approx(google / end["h100e"].sum(), rel=1e-6)
    assert sum(v["median"] for v in got.values()) == pytest.approx(1.0)
    shipped = {k: (m[f"units_shipped_{k}"] * catalog[k].gpus_per_system * catalog[k].h100e_per_gpu).sum()
               for k in catalog if f"units_shipped_{k}" in m.columns}
    tpu = shipped["tpu_v7"] / sum(shipped.values())
    assert vendors["vendor_share_h100e"]["shipped"]["Google"]["median"] == pytest.approx(tpu, rel=1e-6)
    assert all(e["vendor"] == catalog[k].vendor for ev in vendors["firsts"].values() for k, e in ev.items())
    text = format_table([plain, vendors])
    assert re.search(r"^first_online gb300_nvl72 \(NVIDIA\) ", text, re.M)
    assert re.search(r"^Google share of H100e online at end +(\d+\.\d%|-) +\d+\.\d%$", text, re.M)
    long = long_table([vendors])
    assert set(long.loc[long["section"] == "vendor_share_h100e_shipped", "item"]) == {"NVIDIA", "Google", "AWS",
                                                                                      "AMD"}
