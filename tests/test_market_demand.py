"""Demand drives investment: labs' demand from revenue and the frontier trend, providers' investment against their
contract backlog, rental prices that clear between cost and scarcity."""

from __future__ import annotations

import copy

import pytest

from model.market.agents import Lab
from model.market.model import MarketModel
from model.scenario import load_scenario_dict


@pytest.fixture(scope="module")
def tree() -> dict:
    tree = load_scenario_dict("scenarios/baseline.toml")
    tree["end"] = "2026-06"
    return tree


def _run(tree: dict, months: int | None = None, seed: int = 0) -> MarketModel:
    model = MarketModel.from_params(tree, seed=seed)
    for _ in range(months or model.n_months):
        model.step()
    return model


def test_a_lab_s_demand_follows_its_revenue_and_the_frontier_trend(tree):
    model = _run(tree, months=1)
    openai = model.buyer("openai")
    assert isinstance(openai, Lab)
    demand = model.spec.demand
    base = openai.compute_demand_h100e(12)
    doubled = copy.deepcopy(tree)
    doubled["demand"]["tokens_served_per_usd"] = demand.tokens_served_per_usd * 2
    more = MarketModel.from_params(doubled, seed=0).buyer("openai").compute_demand_h100e(12)
    training = openai.runs.trend_flop(12) / (model.spec.frontier.max_run_days * 86400 * 989e12 * demand.training_mfu)
    nvidia = openai.spec.nvidia_share_of_compute
    assert more - base == pytest.approx(base - training * nvidia)  # serving doubles, training stays
    assert openai.compute_demand_h100e(24) > base  # revenue and the frontier grow
    assert model.buyer("xai").compute_demand_h100e(12) == 0  # owns its compute: rents nothing


def test_providers_invest_against_their_contract_backlog(tree):
    """A large contract starting soon makes its provider buy more than its own plan pays for, funded by the
    customer's commitment; without the contract it does not."""
    without = copy.deepcopy(tree)
    without["contracts"] = [c for c in tree["contracts"] if c["provider"] != "oracle"]
    with_contract = copy.deepcopy(without)
    with_contract["contracts"].append({"lab": "openai", "provider": "oracle", "date": "2024-06",
                                       "value_usd_bn": 60, "duration_years": 5})
    plain, funded = _run(without), _run(with_contract)
    assert plain.buyer("oracle").treasury.contract_funding_usd == 0
    assert funded.buyer("oracle").treasury.contract_funding_usd > 10e9
    assert funded.buyer("oracle").capex_usd > plain.buyer("oracle").capex_usd + 10e9


def test_rental_prices_rise_with_labs_demand_and_never_fall_below_cost(tree):
    from model.hardware.systems import systems
    from model.market.pricing import rental_cost_usd_per_gpu_hour

    richer = copy.deepcopy(tree)
    for lab in richer["lab"].values():
        if "revenue_usd_bn" in lab:
            lab["revenue_usd_bn"] = {y: v * 3 for y, v in lab["revenue_usd_bn"].items()}
    months = 20
    base, more = _run(tree, months), _run(richer, months)
    assert more.rental_utilisation() > base.rental_utilisation()
    assert more.rental_usd_per_gpu_hour("hgx_h100") >= base.rental_usd_per_gpu_hour("hgx_h100")
    market = base.market_frame()
    h100 = systems()["hgx_h100"]
    for t, price in enumerate(market["rental_usd_per_gpu_hour_hgx_h100"]):
        floor, _ = rental_cost_usd_per_gpu_hour(h100, base.supplier.price_usd("hgx_h100", t), base.spec.rental)
        assert price >= floor - 1e-9


def test_rental_utilisation_follows_retirements_within_a_month(tree):
    """Providers' compute that retires in the middle of a month is no longer rentable: utilisation is asked again
    after the retirement, not kept from before it (the cache is keyed by what it is computed from)."""
    model = _run(tree, months=6)
    before = model.rental_utilisation()
    provider = model.providers[0]
    k = max(provider.fleet.online, key=provider.fleet.online.get)
    gone = provider.fleet.online[k] // 2
    provider.fleet.online[k] -= gone  # as `Fleet.retire` does, without touching placements
    provider.fleet._h100e = None  # and, as it does, forgets the fleet's H100e sum
    rentable = sum(p.h100e() * p.terms.contract_capacity_share for p in model.providers)
    assert model.rental_utilisation() > before
    assert model.rental_utilisation() == pytest.approx(model._spoken_for[1] / rentable)


def test_funded_compute_is_counted_once_wherever_it_is():
    """A block customers funded is money until ordered, then systems on the way, then GPUs online: at every stage
    the three parts add up to the block, never more; blocks queue behind each other, and contracts that end
    release the oldest first."""
    from model.market.money import ContractFunding

    ledger = ContractFunding()
    ledger.fund(100.0, 2.0, ordered_h100e=50.0)  # the provider had ordered 50 H100e before
    ledger.fund(40.0, 3.0, ordered_h100e=60.0)  # queues behind the first block (spent first)
    stages = [(50.0, 0.0), (110.0, 0.0), (150.0, 0.0), (190.0, 60.0), (190.0, 190.0)]  # (ordered, online) so far
    for ordered, online in stages:
        cash_usd, coming, up = ledger.split(ordered, online)
        first_cash = min(100.0, max(0.0, 150.0 - ordered))
        assert cash_usd == pytest.approx(first_cash * 2.0 + min(40.0, 190.0 - max(ordered, 150.0)) * 3.0)
        assert first_cash + (cash_usd - first_cash * 2.0) / 3.0 + coming + up == pytest.approx(140.0)
    assert ledger.split(190.0, 190.0) == (0.0, 0.0, pytest.approx(140.0))
    ledger.release_beyond(100.0)  # contracts over: the oldest block goes first
    assert ledger.h100e == pytest.approx(100.0)
    assert ledger.blocks[-1].h100e == pytest.approx(40.0)


def test_a_funded_gap_raises_the_provider_s_cover_by_the_gap_only(tree):
    """Funding a gap adds the gap to what covers the contracts, once: its money is not also counted as cash,
    and it is not counted against GPUs the provider had already (which would make it under-invest later)."""
    contracted = copy.deepcopy(tree)
    contracted["contracts"].append({"lab": "openai", "provider": "oracle", "date": "2024-03",
                                    "value_usd_bn": 60, "duration_years": 5})
    model = _run(contracted, months=3)
    oracle = model.buyer("oracle")
    usd = 20_000.0
    before = oracle.contract_cover_h100e(usd)
    oracle.funding.fund(1e5, usd, oracle._ordered_h100e())
    oracle.treasury.fund(1e5 * usd)
    assert oracle.contract_cover_h100e(usd) == pytest.approx(before + 1e5)
    t = model.month
    funded = oracle.treasury.contract_funding_usd
    oracle.invest_against_backlog(t)
    once = oracle.treasury.contract_funding_usd
    oracle.invest_against_backlog(t)  # nothing new is due: the same month funds nothing twice
    assert oracle.treasury.contract_funding_usd == once >= funded


def test_after_guidance_providers_invest_against_the_utilisation_of_what_they_have():
    """Capex after the guidance years responds to utilisation: with labs' demand ten times higher, providers'
    compute is used beyond the target and they raise money for more and spend more; in a market below the target
    (the baseline through 2027) nothing is added; without room to raise money (`demand_capex_max_share` = 0)
    nothing is added either."""
    tree = load_scenario_dict("scenarios/baseline.toml")
    tree["end"] = "2027-12"
    richer = copy.deepcopy(tree)
    for lab in richer["lab"].values():
        if "revenue_usd_bn" in lab:
            lab["revenue_usd_bn"] = {y: v * 10 for y, v in lab["revenue_usd_bn"].items()}
    capped = copy.deepcopy(richer)
    for kind in ("hyperscaler", "neocloud"):
        capped["kinds"][kind]["demand_capex_max_share"] = 0.0
    base, more, none = _run(tree), _run(richer), _run(capped)

    def raised(model: MarketModel) -> float:
        return sum(p.treasury.demand_funding_usd for p in model.providers)

    def capex(model: MarketModel) -> float:
        return sum(p.capex_usd for p in model.providers)

    assert raised(base) == 0.0 and raised(none) == 0.0
    assert raised(more) > 10e9
    assert capex(more) > capex(none) + 5e9
    for p in more.providers:  # never more than the room the plan gives, year by year
        for year, usd in p._raised_for_demand_usd.items():
            assert year > p.last_guidance_year
            assert usd <= p.terms.demand_capex_max_share * p.treasury.plan.annual_budget_usd(year) + 1e-3


def test_a_month_s_budget_can_be_asked_for_any_month_ahead():
    """`_monthly_budget` fills the plan's months up to the one asked (it used to stop one short: an IndexError in
    some sampled runs of the uncertainty sweep)."""
    tree = load_scenario_dict("scenarios/baseline.toml")
    model = MarketModel.from_params(tree, seed=0)
    provider = model.buyer("oracle")
    for month in (60, 61, 30, 90):
        expected = provider.treasury.monthly_budget_usd(model.year_at(month), model.month_of_year(month))
        assert provider._monthly_budget(month) == expected
