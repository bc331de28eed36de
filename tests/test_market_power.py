"""Campuses and power that grow like the real ones: grid connections that follow the sourced outlook after a buyer's
own figures end, campuses that grow phase by phase to several GW, no cap copied from an observed campus."""

from __future__ import annotations

import pytest

from model.market.model import MarketModel
from model.market.power import PowerOutlook, PowerPlan
from model.scenario import load_scenario, load_scenario_dict


@pytest.fixture(scope="module")
def outlook() -> PowerOutlook:
    return PowerOutlook(load_scenario("scenarios/baseline.toml").power_outlook)


def test_the_outlook_interpolates_its_sourced_anchors_geometrically(outlook):
    anchors = outlook.terms.datacenter_gw
    for year, gw in anchors.items():
        assert outlook.gw(int(year)) == pytest.approx(gw)
    assert outlook.gw(2027) == pytest.approx((anchors["2024"] * anchors["2030"]) ** 0.5)
    gws = [outlook.gw(y) for y in range(2020, 2040)]
    assert gws == sorted(gws)
    phases = [outlook.campus_phase_mw(y) for y in range(2023, 2036)]
    assert phases == sorted(phases) and phases[0] == pytest.approx(outlook.terms.campus_phase_mw["2023"])


def test_grid_connections_grow_with_the_outlook_after_the_buyer_s_last_figure(outlook):
    plan = PowerPlan(12, 6, 6, 10.0, {"2024": 300, "2025": 800}, outlook=outlook)
    assert plan.allowance_mw(2024) == 300 and plan.allowance_mw(2025) == 800  # sourced years as given
    later = [plan.allowance_mw(y) for y in range(2025, 2031)]
    assert later == sorted(later) and later[-1] > 1.5 * later[0]  # not a flat extrapolation
    assert plan.allowance_mw(2027) / plan.allowance_mw(2026) == pytest.approx(
        outlook.additions_gw(2027) / outlook.additions_gw(2026))
    flat = PowerPlan(12, 6, 6, 10.0, 800.0)  # no outlook: the number carries forward
    assert flat.allowance_mw(2030) == 800.0


def test_campuses_grow_a_phase_a_year_to_several_gw_without_a_copied_cap():
    tree = load_scenario_dict("scenarios/baseline.toml")
    assert "max_campus_mw" not in tree
    assert all("max_site_mw" not in tree["kinds"][k] for k in ("hyperscaler", "neocloud", "lab"))
    model = MarketModel.from_params(tree, seed=0)
    sizes = {(site.name, 2023): site.mw for b in model.buyers if b.kind != "other" for site in b.fleet.sites}
    while model.running:
        model.step()
        if model.month_of_year(model.month) == 12:
            for b in model.buyers:
                if b.kind != "other":
                    for site in b.fleet.sites:
                        sizes[(site.name, model.year)] = site.mw
    for (name, year), mw in sizes.items():
        before = sizes.get((name, year - 1), 0.0)
        assert mw - before <= model.power_outlook.campus_phase_mw(year) + 1e-6, (name, year)
    largest_2030 = max(mw for (_, year), mw in sizes.items() if year == 2030)
    largest_2025 = max(mw for (_, year), mw in sizes.items() if year == 2025)
    assert largest_2030 > 1500 and largest_2030 > 2 * largest_2025  # campuses keep growing where power can be had


@pytest.mark.parametrize("override", ["power_outlook.campus_phase_mw.2025=0", "power_outlook.datacenter_gw.2030=0"])
def test_an_outlook_of_no_power_is_refused_not_run_forever(override):
    """A campus phase of 0 MW once passed validation and made finished power loop forever in the fleet."""
    from model.errors import InputError
    from model.scenario import load_scenario

    with pytest.raises(InputError, match=override.split("=")[0].replace(".", r"\.")):
        load_scenario("scenarios/baseline.toml", [override])


def test_an_outlook_s_memo_lives_and_dies_with_it(outlook):
    """`gw` is memoised per outlook (a method cache would keep every outlook of a process alive)."""
    import gc
    import weakref

    assert outlook.gw(2027) == outlook.gw(2027)
    other = PowerOutlook(outlook.terms)
    other.gw(2028)
    ref = weakref.ref(other)
    del other
    gc.collect()
    assert ref() is None
