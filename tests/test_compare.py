"""airace compare: leaders, first dates and end-of-horizon numbers agree with the tables computed directly,
for result folders and for a sweep folder."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from model.cli import main
from model.compare import compare
from model.market import run_params
from model.results.folders import write_result_folder
from model.scenario import apply_overrides, load_scenario_dict
from model.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"
SWEEP_RUNS = 8


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Two result folders (different seeds and supply) and an 8-run seeds-only sweep folder."""
    base = tmp_path_factory.mktemp("compare")
    params = load_scenario_dict(BASELINE)
    runs = {}
    for name, seed, sets in [("a", 0, ["end=2026-12"]),
                             ("b", 5, ["end=2026-12", "supplier.supply_growth_multiplier=0.6"])]:
        result = run_params(apply_overrides(params, sets), seed)
        runs[name] = write_result_folder(base / name, result.tables(), {"seed": seed, **result.manifest})
    scenario = base / "short.toml"
    scenario.write_text(f'extends = "{BASELINE.as_posix()}"\nend = "2025-12"\n')
    runs["sweep"] = run_sweep(scenario, SWEEP_RUNS, out=base / "sweep", base_seed=20, workers=2)
    return runs


def tables(folder: Path) -> dict[str, pd.DataFrame]:
    tables = {n: pd.read_parquet(folder / f"{n}.parquet") for n in ("agents", "market", "events")}
    return {n: df.assign(date=df["date"].dt.strftime("%Y-%m-%d")) for n, df in tables.items()}


def direct_run_stats(folder: Path) -> dict:
    """Leaders, first events and end numbers of one result folder, computed straight from its tables."""
    t = tables(folder)
    agents, market, events = t["agents"], t["market"], t["events"]
    leaders = {}
    for date in sorted(d for d in agents["date"].unique() if d.endswith("-12-01")):
        at = agents[agents["date"] == date]
        named = at[at["kind"] != "other"]  # the rest of the market counts in the total but does not lead
        top = named.loc[named["h100e"].idxmax()]
        leaders[date[:7]] = (top["agent"], top["h100e"] / at["h100e"].sum(), dict(zip(at["agent"], at["h100e"] /
                                                                                      at["h100e"].sum(), strict=True)))
    firsts = {}
    for event in ("first_online", "first_cluster_at_scale"):
        ev = events[events["event"] == event].sort_values("date", kind="stable").drop_duplicates("system")
        firsts[event] = {row.system: (row.date[:7], row.agent) for row in ev.itertuples()}
    last = agents[agents["date"] == agents["date"].max()]
    revenue = market.groupby(market["date"].str[:4])["nvidia_revenue_usd"].sum().to_dict()
    return {"leaders": leaders, "firsts": firsts, "total_h100e": last["h100e"].sum(),
            "largest": last["largest_cluster_gpus"].max(), "revenue": revenue}


def test_result_folders_match_direct_computation(folders):
    summaries = compare([folders["a"], folders["b"]])
    assert [s["kind"] for s in summaries] == ["run", "run"] and [s["runs"] for s in summaries] == [1, 1]
    for summary, name in zip(summaries, ["a", "b"], strict=True):
        direct = direct_run_stats(folders[name])
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
        assert summary["end"]["date"] == "2026-12"
        assert summary["end"]["total_h100e"]["median"] == pytest.approx(direct["total_h100e"])
        assert summary["end"]["largest_cluster_gpus"]["median"] == direct["largest"]
        assert {y: v["median"] for y, v in summary["nvidia_revenue_usd"].items()} == pytest.approx(direct["revenue"])
    # the slower supply shows up: less compute and less revenue at the end
    assert summaries[1]["end"]["total_h100e"]["median"] < summaries[0]["end"]["total_h100e"]["median"]


def _inverted_cdf(values: list[int], q: float) -> int:
    """The smallest value with at least a share q of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _month(text: str) -> int:
    return int(text[:4]) * 12 + int(text[5:7]) - 1


def test_sweep_matches_per_run_computation(folders):
    (summary,) = compare([folders["sweep"]])
    assert summary["kind"] == "sweep" and summary["runs"] == SWEEP_RUNS
    per_run = [direct_run_stats(folders["sweep"] / "runs" / f"run_{i:04d}") for i in range(SWEEP_RUNS)]
    for year in ("2024-12", "2025-12"):
        leaders = [r["leaders"][year][0] for r in per_run]
        got = summary["leaders"][year]
        top = max(sorted(set(leaders)), key=leaders.count)
        assert got["agent"] == top and got["frequency"] == leaders.count(top) / SWEEP_RUNS
        shares = [r["leaders"][year][2][top] for r in per_run]
        assert got["share"]["median"] == pytest.approx(np.median(shares))
        assert got["share"]["p05"] == pytest.approx(np.percentile(shares, 5))
    checked = 0
    for event in ("first_online", "first_cluster_at_scale"):
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
    assert checked >= 10
    totals = [r["total_h100e"] for r in per_run]
    end = summary["end"]["total_h100e"]
    assert (end["p05"], end["median"], end["p95"]) == pytest.approx(tuple(np.percentile(totals, [5, 50, 95])))
    assert len(set(totals)) > 1  # the seeds matter, so the interval is a real one
    revenue_2025 = [r["revenue"]["2025"] for r in per_run]
    assert summary["nvidia_revenue_usd"]["2025"]["median"] == pytest.approx(np.median(revenue_2025))


def test_cli_text_json_and_csv(folders, tmp_path, capsys):
    csv = tmp_path / "cmp.csv"
    assert main(["compare", str(folders["a"]), str(folders["sweep"]), "--out", str(csv)]) == 0
    text = capsys.readouterr().out
    direct = direct_run_stats(folders["a"])
    agent, share, _ = direct["leaders"]["2025-12"]
    line = next(row for row in text.splitlines() if row.startswith("H100e leader 2025-12"))
    assert f"{agent} {share:.0%}" in line and "leads" in line  # the sweep column says how often it leads
    assert str(folders["a"]) in text.splitlines()[0] and "sweep, 8 runs" in text
    date, first = direct["firsts"]["first_online"]["hgx_h200"]  # H200 is new in 2024 (H100 was there at the start)
    assert f"{date} {first}" in next(r for r in text.splitlines() if r.startswith("first_online hgx_h200 "))
    long = pd.read_csv(csv)
    assert list(long.columns) == ["input", "kind", "runs", "section", "item", "statistic", "value"]
    row = long[(long["input"] == str(folders["a"])) & (long["section"] == "h100e_leader") &
               (long["item"] == "2025-12") & (long["statistic"] == "agent")]
    assert row["value"].tolist() == [agent]
    assert [p.name for p in tmp_path.iterdir()] == ["cmp.csv"]

    assert main(["compare", str(folders["b"]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == json.loads(json.dumps({"inputs": compare([folders["b"]])}))


def test_unfinished_sweep_is_refused(folders, tmp_path, capsys):
    import shutil

    sweep = tmp_path / "half"
    shutil.copytree(folders["sweep"], sweep)
    header = json.loads((sweep / "sweep.json").read_text())
    (sweep / "sweep.json").write_text(json.dumps({**header, "finished": None}))
    assert main(["compare", str(sweep)]) == 2
    assert "sweep.json: finished is empty, the sweep did not finish" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "expected"), [
    (["{tmp}"], "not a result folder (manifest.json + agents.parquet) nor a sweep folder"),
    (["{a}", "--out", "{tmp}/x.txt"], "--out {tmp}/x.txt: expected a file name ending in .csv"),
])
def test_bad_inputs_exit_2(folders, tmp_path, capsys, args, expected):
    fill = {"tmp": str(tmp_path), "a": str(folders["a"])}
    assert main(["compare", *(a.format(**fill) for a in args)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected.format(**fill) in err, err
