"""Outcomes the seeded baseline should reproduce. They must emerge; nothing in code or scenario names who is first.

Tolerances: mid-2025 = Jun-Sep 2025; autumn 2025 = Sep-Nov 2025; FY2025 revenue within 90-140 USD bn.
"""

from __future__ import annotations

import pytest

from model.market import run_scenario

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def runs():
    return {s: run_scenario("scenarios/baseline.toml", seed=s) for s in SEEDS}


def _first(res, event, system):
    e = res.events[(res.events.event == event) & (res.events.system == system)].sort_values("date")
    return e.iloc[0] if len(e) else None


def _kind(res, agent):
    return res.agents[res.agents.agent == agent].kind.iloc[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_neocloud_first_gb300_online_mid_2025(runs, seed):
    ev = _first(runs[seed], "first_online", "gb300_nvl72")
    assert ev is not None and _kind(runs[seed], ev.agent) == "neocloud"
    assert "2025-06" <= ev.date[:7] <= "2025-09"


@pytest.mark.parametrize("seed", SEEDS)
def test_first_gb300_online_is_a_neocloud(runs, seed):
    ev = _first(runs[seed], "first_online", "gb300_nvl72")
    assert ev is not None and _kind(runs[seed], ev.agent) == "neocloud"


@pytest.mark.parametrize("seed", SEEDS)
def test_hyperscaler_gb300_cluster_autumn_2025(runs, seed):
    e = runs[seed].events
    e = e[(e.event == "first_cluster_at_scale") & (e.system == "gb300_nvl72")].sort_values("date")
    hs = [r for r in e.itertuples() if _kind(runs[seed], r.agent) == "hyperscaler"]
    assert hs and "2025-09" <= hs[0].date[:7] <= "2025-11"


@pytest.mark.parametrize("seed", SEEDS)
def test_nvidia_fy2025_revenue_near_115bn(runs, seed):
    m = runs[seed].market
    fy = m[(m.date >= "2024-02") & (m.date <= "2025-01-31")].nvidia_revenue_usd.sum() / 1e9
    assert 90 <= fy <= 140
