"""A buyer's fleet of sites: where GPUs go, when they retire, and the rest of the market's many small sites.

The fleet keeps indexes so that a month's work does not grow with the sites it has accumulated; these tests hold
its choices to the plain rule they implement."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.hardware.systems import systems
from model.market.deliveries import Inbound, bring_up_schedule
from model.market.fleet import Fleet
from model.market.sites import Batch, Site

KEYS = tuple(systems())
SYSTEMS = ("hgx_h100", "hgx_h200", "hgx_b200", "gb200_nvl72", "gb300_nvl72", "vr_nvl72")
FABRIC = 20_000


def fleet(unconstrained: bool = False, lifetime_months: int = 24, fabric: int = FABRIC) -> Fleet:
    return Fleet("x", 1.3, fabric, unconstrained, KEYS, lambda k: systems()[k].dense_tflops("bf16"), lifetime_months)


def plain_choice(f: Fleet, system: str) -> Site | None:
    """The rule, without indexes: of the sites with free power that fit one unit, the first (in the order they
    joined the open sites) with most GPUs of the system's architecture (up to the fabric), then most free power."""
    s = systems()[system]
    unit_mw = f.facility_kw_per_gpu(system) * s.gpus_per_system / 1000.0
    fits = [site for site in f.open_sites() if site.free_mw() >= unit_mw]
    fabric = f.fabric_max_gpus
    return max(fits, key=lambda x: (min(x.gpus_of_architecture(s.architecture), fabric), x.free_mw()), default=None)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), fabric=st.sampled_from([8, 72, FABRIC]), lifetime=st.sampled_from([2, 5, 24]))
def test_each_unit_goes_where_the_plain_rule_says(seed, fabric, lifetime):
    """A random stream of power added, months passing (GPUs retiring) and units placed one at a time: every unit
    lands where the plain rule says. (A small fabric makes clusters in several sites tie, so the order among equals
    is tested too; short lifetimes leave sites partly used.)"""
    rng = random.Random(seed)
    f, month = fleet(fabric=fabric, lifetime_months=lifetime), 0
    for _ in range(80):
        draw = rng.random()
        if draw < 0.2:
            f.add_power(rng.choice([0.5, 2.0, 8.0, 30.0]), max_site_mw=10.0)
        elif draw < 0.4:
            month += 1
            f.retire(month)
        else:
            system = rng.choice(SYSTEMS)
            gps = systems()[system].gpus_per_system
            for _ in range(rng.randint(1, 20)):
                expected = plain_choice(f, system)
                before = {site.seq: site.gpus_by_system.get(system, 0) for site in f.sites}
                left = f.place(system, gps, month, max_site_mw=10.0)
                if expected is None:
                    assert left == gps
                    break
                gained = [site.seq for site in f.sites if site.gpus_by_system.get(system, 0) > before[site.seq]]
                assert gained == [expected.seq] and left == 0
        online = f.gpus_online()
        assert sum(online.values()) == sum(g for site in f.sites for g in site.gpus_by_system.values())
        assert all(site.used_mw <= site.mw + 1e-9 for site in f.sites)


def test_gpus_retire_after_their_lifetime_and_free_their_power():
    f = fleet(lifetime_months=24)
    f.add_power(20.0, max_site_mw=20.0)
    f.place("hgx_h100", 800, online_month=3, max_site_mw=20.0)
    f.place("gb200_nvl72", 720, online_month=5, max_site_mw=20.0)
    used = f.power_used_mw()
    for month in range(6, 28):
        f.retire(month)
    assert f.gpus_online()["hgx_h100"] == 800  # online since month 3: retires once 24 months have passed
    f.retire(28)
    assert f.gpus_online()["hgx_h100"] == 0 and f.retired["hgx_h100"] == 800
    assert f.gpus_online()["gb200_nvl72"] == 720 and f.power_used_mw() < used
    f.retire(29)
    f.retire(30)
    assert f.gpus_online()["gb200_nvl72"] == 0 and f.power_used_mw() == pytest.approx(0.0, abs=1e-9)


def test_power_not_modelled_means_sites_hold_what_their_gpus_use_and_go_when_empty():
    """The rest of the market: one site at a time is being filled; closed sites hold only the power their GPUs
    use; a site whose GPUs all retired is gone; a month's many identical small sites are one record."""
    f = fleet(unconstrained=True, lifetime_months=12)
    per_site = int(50.0 // (f.facility_kw_per_gpu("gb200_nvl72") * 72 / 1000.0)) * 72
    left = f.place("gb200_nvl72", 1000 * per_site + 144, online_month=0, max_site_mw=50.0)
    assert left == 0 and f.gpus_online()["gb200_nvl72"] == 1000 * per_site + 144
    assert len(f.sites) <= 4  # not a thousand records
    open_sites = f.open_sites()
    assert len(open_sites) == 1
    for site in f.sites:
        if site is not open_sites[0]:
            assert site.mw == pytest.approx(site.used_mw)
    assert f.power_online_mw() - f.power_used_mw() < 50.0  # only the site being filled has power to spare
    assert f.power_used_mw() == pytest.approx((1000 * per_site + 144) * f.facility_kw_per_gpu("gb200_nvl72") / 1000)
    f.place("hgx_b200", 800, online_month=6, max_site_mw=50.0)
    for month in range(1, 14):
        f.retire(month)
    assert f.gpus_online()["gb200_nvl72"] == 0 and f.gpus_online()["hgx_b200"] == 800
    assert all(not site.empty or site in f.open_sites() for site in f.sites)  # emptied sites are gone
    assert f.power_online_mw() - f.power_used_mw() < 50.0


def test_sites_retire_batches_in_the_order_they_came_online():
    site = Site("s", mw=10.0)
    for month, gpus in ((0, 800), (2, 400), (2, 80), (5, 160)):
        site.add(Batch("hgx_h100", gpus, online_month=month, facility_kw_per_gpu=1.5))
    assert [b.gpus for b in site.retire_older_than(3)] == [800, 400, 80]
    assert site.gpus_by_system["hgx_h100"] == 160 and site.gpus_of_architecture("Hopper") == 160
    assert site.used_mw == pytest.approx(160 * 1.5 / 1000)


def test_a_month_s_arrivals_come_up_as_one_batch_per_site_they_go_to():
    """Racks arriving together split by the site that will hold them (placement order, free power after the GPUs
    already waiting to go online), the rest one campus phase each: whole systems, adding up to the arrival, no batch
    larger than its site holds."""
    f = fleet()
    f.new_site(10.0)
    f.new_site(30.0)
    k = "hgx_h100"
    per_system = systems()[k].gpus_per_system
    unit_mw = f.facility_kw_per_gpu(k) * per_system / 1000.0
    per_mw = per_system / unit_mw
    arriving = 40_000
    batches = f.bring_up_batches(k, arriving, max_site_mw=20.0)
    assert sum(batches) == arriving and all(b % per_system == 0 for b in batches[:-1])
    assert batches[0] == int(30.0 // unit_mw) * per_system  # the site with most free power first
    assert batches[1] == int(10.0 // unit_mw) * per_system
    assert all(b <= 20.0 * per_mw for b in batches[2:])  # sites yet to come: one phase each
    waiting = [(k, batches[0], 0)]  # GPUs already waiting fill the first site: the next arrival goes elsewhere
    after = f.bring_up_batches(k, arriving, max_site_mw=20.0, waiting=waiting)
    assert sum(after) == arriving and after[0] == batches[1]


def test_arrivals_split_over_sites_are_online_no_later_and_some_sooner_than_one_batch():
    """Sites bring up their share in parallel: a big arrival split over sites is ready, GPU by GPU, no later than
    the same arrival brought up as one batch, and most of it months sooner."""
    k, gpus = "hgx_h100", 64_000

    def schedule(system, n):
        return bring_up_schedule(system, n, 14, 10)

    def ready_by_month(split):
        inbound = Inbound(KEYS, 0, schedule, split)
        inbound.ship(k, gpus, 0)
        inbound.arrive(0)
        months = sorted(month for _, _, month in inbound.integrating)
        return [sum(g for _, g, m in inbound.integrating if m <= month) for month in range(months[-1] + 1)]

    one = ready_by_month(lambda system, n: [n])
    per_site = ready_by_month(lambda system, n: [n // 4] * 4)
    assert per_site[-1] == one[-1] == gpus
    assert len(per_site) <= len(one)
    assert all(a >= b for a, b in zip(per_site, one, strict=False))
    assert any(a >= gpus / 2 > b for a, b in zip(per_site, one, strict=False))
