"""Outcomes the seeded baseline must reproduce. They emerge from the mechanisms; nothing in the code or the scenario
names who goes first. Tolerances: mid-2025 = June-September 2025; autumn 2025 = September-November 2025.
"""

from __future__ import annotations

import pytest

from model.market import MarketModel, run_params
from model.scenario.loading import load_scenario_dict

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def runs():
    params = load_scenario_dict("scenarios/baseline.toml")
    return {seed: run_params(params, seed=seed) for seed in SEEDS}


def _kind(result, agent: str) -> str:
    return result.agents.loc[result.agents.agent == agent, "kind"].iloc[0]


def _events(result, event: str, system: str):
    e = result.events
    return e[(e.event == event) & (e.system == system)].sort_values("date", kind="stable")


@pytest.mark.parametrize("seed", SEEDS)
def test_a_neocloud_brings_gb300_online_first_mid_2025(runs, seed):
    first = _events(runs[seed], "first_online", "gb300_nvl72").iloc[0]
    assert _kind(runs[seed], first.agent) == "neocloud"
    assert "2025-06" <= first.date[:7] <= "2025-09"
    # and it starts small: a few racks, not a cluster
    assert first.gpus < 4600


@pytest.mark.parametrize("seed", SEEDS)
def test_a_hyperscaler_brings_up_an_at_scale_gb300_cluster_in_autumn_2025(runs, seed):
    at_scale = _events(runs[seed], "first_cluster_at_scale", "gb300_nvl72")
    hyperscalers = at_scale[at_scale.agent.map(lambda a: _kind(runs[seed], a)) == "hyperscaler"]
    first = hyperscalers.iloc[0]
    assert "2025-09" <= first.date[:7] <= "2025-11"
    assert first.gpus >= 4600
    # it grows from there: that hyperscaler's GB300 fleet keeps growing through 2026
    agents = runs[seed].agents
    fleet = agents[agents.agent == first.agent].set_index("date")["gpus_online_gb300_nvl72"]
    assert fleet["2026-12-01"] > 10 * first.gpus


@pytest.mark.parametrize("seed", SEEDS)
def test_nvidia_fiscal_2025_revenue_near_the_reported_115bn(runs, seed):
    market = runs[seed].market
    fy2025 = market[(market.date >= "2024-02-01") & (market.date <= "2025-01-01")]
    assert len(fy2025) == 12
    assert 90e9 <= fy2025.nvidia_revenue_usd.sum() <= 140e9  # reported: $115.2B data-center revenue


def test_a_late_gb200_ramp_moves_hyperscaler_money_to_other_blackwell_systems():
    """When GB200's volume ramp slips (first racks on time, volume six months late), its queue lengthens and the
    procurement rule moves hyperscalers' money to the Blackwell systems they can get sooner (HGX B200/B300 and
    GB300 pre-orders). Whether GB300 in particular wins that money (Microsoft's choice in 2025) is decided by
    allocation and site readiness, not by this rule alone (issue 15)."""
    params = load_scenario_dict("scenarios/baseline.toml")
    params["end"] = "2025-06"  # GB300 ships from 2025-07: every GB300 order until then is a pre-order
    others = ("hgx_b200", "hgx_b300", "gb300_nvl72")

    def hyperscaler_orders(volume_delay_months: int) -> dict[str, int]:
        params["supplier"]["volume_delay_months"] = {"gb200_nvl72": volume_delay_months}
        model = MarketModel.from_params(params, seed=0)
        model.run()
        hyperscalers = [b for b in model.buyers if b.kind == "hyperscaler"]
        return {"other_blackwell": sum(b.ordered[k] for b in hyperscalers for k in others),
                "gb200": sum(b.ordered["gb200_nvl72"] for b in hyperscalers)}

    on_time, late = hyperscaler_orders(0), hyperscaler_orders(6)
    assert late["other_blackwell"] > 1.3 * on_time["other_blackwell"] > 0
    assert late["gb200"] < 0.8 * on_time["gb200"]
