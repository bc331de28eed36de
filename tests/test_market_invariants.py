"""Invariants of the market model (fast: a short horizon except one full baseline run shared by module)."""

from __future__ import annotations

import pandas as pd
import pytest

from model.io import read_results, write_results
from model.market import MarketModel, run_scenario
from model.scenario.loading import load_scenario_dict

BASELINE = "scenarios/baseline.toml"


@pytest.fixture(scope="module")
def run0():
    params = load_scenario_dict(BASELINE)
    m = MarketModel.from_params(params, seed=0)
    m.run()
    return m


def test_stock_flow_conservation(run0):
    sup = run0.supplier
    for k in run0.system_keys:
        gps = __import__("model.hardware.systems", fromlist=["systems"]).systems()[k].gpus_per_system
        shipped = sup.units_shipped_total[k] * gps
        delivered = sum(b.delivered[k] for b in run0.builders.values())
        transit = sum(g for b in run0.builders.values() for kk, g, _ in b.in_transit if kk == k)
        assert shipped == delivered + transit
        online = sum(b.online[k] for b in run0.builders.values())
        integ = sum(g for b in run0.builders.values() for kk, g, _ in b.integrating if kk == k)
        assert delivered == online + integ
        ordered = sum(b.ordered[k] for b in run0.builders.values())
        assert ordered == shipped + sup.backlog(k) * gps


def test_power_and_money(run0):
    df = pd.DataFrame(run0.agent_rows)
    assert (df.power_mw_used <= df.power_mw_online + 1e-6).all()
    for b in run0.builders.values():
        assert b.capex <= b.budget_cum + b.financing + 1e-3
    num = df.select_dtypes("number")
    assert (num.fillna(0) >= 0).all().all()


def test_tables_match_design(run0):
    df = pd.DataFrame(run0.agent_rows)
    cols = (
        ["date", "agent", "kind", "gpus_online"]
        + [f"gpus_online_{k}" for k in run0.system_keys]
        + [
            "h100e",
            "power_mw_online",
            "power_mw_used",
            "largest_cluster_gpus",
            "capex_usd_cumulative",
            "frontier_run_days",
        ]
    )
    assert list(df.columns) == cols
    assert set(df.kind) <= {"hyperscaler", "neocloud", "lab", "other"}
    mk = pd.DataFrame(run0.market_rows)
    assert list(mk.columns) == ["date", "nvidia_revenue_usd"] + [f"units_shipped_{k}" for k in run0.system_keys] + [
        f"backlog_units_{k}" for k in run0.system_keys
    ] + [f"rental_usd_per_gpu_hour_{k}" for k in run0.system_keys]
    assert len(mk) == 84


def test_seed_reproducible_and_different():
    a, b, c = (run_scenario(BASELINE, seed=s, overrides={"supplier.slip_after": "2024-06"}) for s in (3, 3, 4))
    for name in ("agents", "market", "events"):
        pd.testing.assert_frame_equal(a.tables()[name], b.tables()[name])
    assert not a.events.equals(c.events) or not a.agents.equals(c.agents)


def test_io_roundtrip_atomic(tmp_path, run0):
    res = run_scenario(BASELINE, seed=0)
    out = write_results(tmp_path / "r", res.tables(), res.manifest)
    back = read_results(out)
    pd.testing.assert_frame_equal(back["market"], res.market)
    assert back["manifest"]["seed"] == 0 and "scenario_sha256" in back["manifest"]
    bad = {"agents": res.agents, "market": object()}
    with pytest.raises(AttributeError):
        write_results(tmp_path / "bad", bad, {})
    assert not (tmp_path / "bad").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["r"]
