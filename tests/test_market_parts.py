"""The market's building blocks, one at a time: scenario values by year, contract sizing, NVIDIA's ramp, queue and
allocation, and sites."""

from __future__ import annotations

import pytest

from model.hardware.systems import systems
from model.market import MarketModel
from model.market.contracts import contract_from_terms
from model.market.sites import Batch, Site
from model.scenario.loading import load_scenario_dict
from model.scenario.schema import by_year


def test_values_by_year_carry_forward_and_grow_after_the_last_entry():
    table = {"2024": 10.0, "2026": 20.0}
    assert by_year(table, 2023) == 10.0  # before the table: its first entry
    assert by_year(table, 2025) == 10.0  # a gap: the latest earlier entry
    assert by_year(table, 2026) == 20.0
    assert by_year(table, 2028, growth_after=0.5) == pytest.approx(45.0)
    assert by_year(7.0, 2030, growth_after=0.5) == 7.0  # a plain number is the same every year
    assert by_year({}, 2025) == 0.0


def test_a_contract_is_sized_in_gpus_from_value_duration_and_price():
    c = contract_from_terms("openai", "coreweave", signed_month=14, start_month=14, duration_years=5,
                            value_usd=11.9e9, system="hgx_b200", usd_per_gpu_hour=3.0)
    assert c.gpus == int(11.9e9 / (5 * 8760 * 3.0))
    assert c.end_month == 14 + 60 and c.annual_cost_usd == pytest.approx(11.9e9 / 5)
    assert c.remaining_value_usd(10) == 11.9e9 and c.remaining_value_usd(44) == pytest.approx(11.9e9 / 2)
    assert c.remaining_value_usd(74) == 0.0 and c.active(14) and not c.active(74)


def test_sites_account_for_the_power_their_batches_use_and_retire_whole_batches():
    site = Site("s", mw=10.0)
    site.add(Batch("hgx_h100", 4000, online_month=0, facility_kw_per_gpu=1.5))  # 6 MW
    assert site.free_mw() == pytest.approx(4.0) and site.gpus_by_system["hgx_h100"] == 4000
    site.add(Batch("gb200_nvl72", 720, online_month=12, facility_kw_per_gpu=2.2))
    old = site.retire_older_than(6)
    assert [b.system for b in old] == ["hgx_h100"] and site.gpus_by_system["hgx_h100"] == 0
    assert site.used_mw == pytest.approx(720 * 2.2 / 1000)


@pytest.fixture(scope="module")
def model():
    params = load_scenario_dict("scenarios/baseline.toml")
    return MarketModel.from_params({**params, "end": "2026-12"}, seed=0)


def test_a_new_system_ramps_geometrically_from_first_shipment_to_volume(model):
    sup = model.supplier
    k = "gb300_nvl72"
    first, volume = sup.first[k], sup.volume[k]
    ramp = [sup.ramp_fraction(k, t) for t in range(first - 1, volume + 2)]
    assert ramp[0] == 0.0 and ramp[1] == pytest.approx(sup.p.ramp_first_month_fraction)
    assert all(b > a for a, b in zip(ramp[1:-2], ramp[2:-1], strict=False)) and ramp[-1] == ramp[-2] == 1.0


def test_the_expected_wait_grows_with_the_queue_and_counts_months_to_first_shipment(model):
    sup = model.supplier
    k, t = "vr_nvl72", 12
    assert sup.expected_wait_months(k, t) == sup.first[k] - t  # nothing ahead: wait for the first racks
    waits = [sup.expected_wait_months(k, t, extra_units=n) for n in (0, 100, 1000, 10000)]
    assert waits == sorted(waits) and waits[-1] > waits[0]


class Consignee:
    """A stand-in buyer: NVIDIA delivers to anything with a name and `receive` (the supplier's narrow interface)."""

    def __init__(self, name: str):
        self.name = name
        self.received = 0

    def receive(self, system: str, units: int, paid_usd: float, month: int) -> None:
        self.received += units


def test_allocation_favours_big_orders_never_exceeds_an_order_and_ships_everything_it_can():
    params = load_scenario_dict("scenarios/baseline.toml")
    model = MarketModel.from_params({**params, "end": "2024-12"}, seed=0)  # not stepped: no orders yet
    sup = model.supplier
    big, small = Consignee("big"), Consignee("small")
    k = "hgx_h200"
    sup.place_order(big, k, 900, 1.0)
    sup.place_order(small, k, 100, 1.0)

    def allocate(units: int) -> tuple[int, int]:
        before = big.received, small.received
        sup.allocate(systems()[k], units, t=6)
        return big.received - before[0], small.received - before[1]

    to_big, to_small = allocate(500)
    assert to_big + to_small == 500
    exponent = sup.p.order_size_exponent
    share_big = 900**exponent / (900**exponent + 100**exponent)
    assert to_big == pytest.approx(500 * share_big, abs=1)  # (units outstanding)^exponent
    assert sup.backlog_units(k) == 500
    left_big, left_small = (sup.orders[k][name].units_outstanding for name in ("big", "small"))
    to_big, to_small = allocate(495)  # more than the big order's share can take: it is capped, the rest goes on
    assert to_big == left_big and to_small == 495 - left_big <= left_small
    assert sup.backlog_units(k) == 5 == sum(o.units_outstanding for o in sup.orders[k].values())
    assert "big" not in sup.orders[k]  # a filled order is closed


def test_a_treasury_lets_unplaced_budget_lapse_and_borrows_against_backlog():
    from model.market.money import CapexPlan, DebtTerms, Treasury

    plan = CapexPlan({"2025": 12.0}, growth_after_guidance=0.0, systems_share=0.5, multiplier=1.0, own_share=0.5)
    assert plan.monthly_budget_usd(2025) == pytest.approx(12e9 * 0.5 * 0.5 / 12)  # one flat year: flat months
    treasury = Treasury(plan, carry_months=3, debt=DebtTerms(multiple_of_backlog=0.5, lag_months=2))
    backlog: dict[int, float] = {}
    for _ in range(12):  # nothing is ordered: budget beyond three months of it lapses
        treasury.accrue(2025, lambda lag: backlog.get(lag, 0.0))
    monthly = plan.monthly_budget_usd(2025)
    assert treasury.budget_cum_usd == pytest.approx(3 * monthly)
    assert treasury.budget_lapsed_usd == pytest.approx(9 * monthly) and treasury.debt_usd == 0.0
    backlog[2] = 10e9
    treasury.accrue(2025, lambda lag: backlog.get(lag, 0.0))
    assert treasury.debt_usd == pytest.approx(5e9)  # half the backlog of contracts signed two months ago
    backlog[2] = 2e9
    treasury.accrue(2025, lambda lag: backlog.get(lag, 0.0))
    assert treasury.debt_usd == pytest.approx(5e9)  # debt raised stays raised
    assert treasury.budget_cum_usd == 0.0  # money beyond the carry, debt included, lapses from the budget
    treasury.commit(1e9)
    treasury.pay(0.4e9)
    assert treasury.cash_usd() == pytest.approx(5e9 - 1e9) and treasury.capex_usd == 0.4e9


def test_capex_grows_through_the_year_and_keeps_each_year_s_total():
    from model.market.money import CapexPlan

    plan = CapexPlan({"2024": 60.0, "2025": 120.0, "2026": 150.0}, growth_after_guidance=0.1, systems_share=0.5,
                     multiplier=1.0)
    for year, total in ((2024, 60e9), (2025, 120e9), (2026, 150e9), (2027, 165e9)):
        months = [plan.monthly_budget_usd(year, m) for m in range(1, 13)]
        assert sum(months) == pytest.approx(total * 0.5)  # the sourced yearly figure is kept
        assert months == sorted(months)  # growing capex grows month by month, no step each January
    assert plan.monthly_budget_usd(2025, 1) < plan.monthly_budget_usd(2024, 12) * 1.2  # annual steps: x2
    flat = CapexPlan({"2025": 12.0}, growth_after_guidance=0.0, systems_share=1.0, multiplier=1.0)
    assert {round(flat.monthly_budget_usd(2025, m)) for m in range(1, 13)} == {1e9}


def test_orders_waiting_at_nvidia_draw_on_the_coming_months_budget_not_the_cash_on_hand():
    from model.market.money import CapexPlan, Treasury

    treasury = Treasury(CapexPlan({"2025": 12.0}, 0.0, 1.0, 1.0), carry_months=12)
    treasury.accrue(2025, lambda lag: 0.0, month=1, advance_usd=0.0)
    assert treasury.cash_usd() == pytest.approx(1e9)
    treasury.commit(3e9)  # pre-orders worth three months of budget, unpaid
    treasury.accrue(2025, lambda lag: 0.0, month=2, advance_usd=2.5e9)
    assert treasury.cash_usd() == pytest.approx(2e9 - 3e9 + 2.5e9)  # the coming months pay part of them
    treasury.pay(3e9)  # they shipped and were paid: nothing is waiting, no advance
    assert treasury.cash_usd() == pytest.approx(2e9 - 3e9)


def test_the_contract_book_answers_for_providers_labs_and_the_market():
    from model.market.contracts import ContractBook

    book = ContractBook()
    a = contract_from_terms("openai", "coreweave", 0, 6, 2, 1e9, "hgx_b200", 3.0)
    b = contract_from_terms("meta_ai", "coreweave", 3, 3, 1, 1e9, "hgx_b200", 3.0)
    c = contract_from_terms("openai", "oracle", 4, 4, 1, 2e9, "hgx_b200", 3.0)
    for contract in (a, b, c):
        book.add(contract)
    assert len(book) == 3 and book.of_provider("coreweave", 5) == [a, b] and book.of_lab("openai", 5) == [a, c]
    assert book.sold_h100e("coreweave", 5) == pytest.approx(a.h100e + b.h100e)
    assert book.sold_h100e("coreweave", 5, excluding="openai") == pytest.approx(b.h100e)
    assert book.backlog_usd("coreweave", 5, signed_by=2) == pytest.approx(a.remaining_value_usd(5))  # not b yet
    assert book.held_h100e_by_provider("openai", 5) == {"oracle": pytest.approx(c.h100e)}  # a starts in month 6
    assert book.active_h100e(5) == pytest.approx(b.h100e + c.h100e)
    assert book.annual_cost_usd("openai", 5) == pytest.approx(a.annual_cost_usd + c.annual_cost_usd)
    # once over, a contract counts for nothing: b ends in month 15, c in 16
    assert book.of_provider("coreweave", 15) == [a] and book.sold_h100e("coreweave", 15) == pytest.approx(a.h100e)
    assert book.active_h100e(16) == pytest.approx(a.h100e) and len(book) == 3


def test_system_prices_fall_with_age_to_the_floor_and_rentals_clear_between_cost_and_scarcity():
    from model.market.pricing import rental_cost_usd_per_gpu_hour, rental_usd_per_gpu_hour, system_price_usd
    from model.scenario import load_scenario

    scenario = load_scenario("scenarios/baseline.toml")
    s = systems()["gb200_nvl72"]
    prices = [system_price_usd(s, age, scenario.supplier) for age in range(0, 121, 6)]
    assert prices == sorted(prices, reverse=True) and prices[-1] == s.price_usd_low
    assert system_price_usd(s, -5, scenario.supplier) == prices[0]  # before first shipment: the launch price
    terms = scenario.rental
    floor, cost_plus = rental_cost_usd_per_gpu_hour(s, prices[0], terms)
    target = terms.utilization
    plain = rental_usd_per_gpu_hour(s, prices[0], terms, backlog_units=0, output_units=100, utilisation=target)
    assert plain == pytest.approx(cost_plus)
    slack = [rental_usd_per_gpu_hour(s, prices[0], terms, 0, 100, u) for u in (0.0, target / 2, target * 0.99)]
    assert slack[0] == pytest.approx(floor) and slack == sorted(slack) and slack[-1] < plain  # cost is the floor
    scarce = [rental_usd_per_gpu_hour(s, prices[0], terms, backlog, 100, u)
              for backlog, u in ((100, target), (300, target), (0, (1 + target) / 2), (10_000, 1.0), (0, 3.0))]
    assert plain < scarce[0] < scarce[1] and plain < scarce[2] < scarce[3]
    assert max(scarce) == pytest.approx(cost_plus * (1 + terms.scarcity_premium))  # the premium is bounded


def test_the_market_imports_the_core_of_mesa_and_the_rest_on_demand():
    """Mesa's package imports grids and networks (scipy.spatial, networkx) the market never uses; the market
    leaves them out of a fresh process, and asking Mesa for anything else still gets the whole package."""
    import subprocess
    import sys

    code = ("import sys, model.market\n"
            "light = not any(m in sys.modules for m in ('scipy.spatial', 'networkx'))\n"
            "import mesa\n"
            "from model.market.agents import Buyer\n"
            "print(light, issubclass(Buyer, mesa.Agent), mesa.__version__.startswith('3.5'), bool(mesa.space),\n"
            "      'scipy.spatial' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stdout.split() == ["True", "True", "True", "True", "True"]
