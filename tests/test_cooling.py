"""Which systems need liquid-cooled space: a rack that draws more than air can remove. A system that spans several
racks (a Trn2 UltraServer, a TPU v5e or v6e pod) is cooled rack by rack, so its draw is split over its racks."""

from __future__ import annotations

import pytest
from conftest import catalog_with_value

from model.errors import InputError
from model.hardware.systems import load_systems, systems
from model.market.cooling import needs_liquid
from model.scenario import load_scenario

BASELINE = "scenarios/baseline.toml"


@pytest.fixture(scope="module")
def above_kw_per_rack() -> float:
    return load_scenario(BASELINE).bring_up.liquid_cooling_above_kw_per_rack


def test_a_trn2_ultraserver_draws_half_its_power_per_rack():
    """57.6 kW over two racks (AWS's photos): within what air removes, like the Trn2 servers AWS air-cools."""
    assert systems()["trn2_ultraserver"].rack_power_kw == pytest.approx(28.8)


def test_rack_scale_systems_need_liquid_and_multi_rack_air_systems_do_not(above_kw_per_rack):
    """NVL72 racks (120-200 kW) and Ironwood racks need liquid; HGX servers and the two-rack Trn2 UltraServer, whose
    whole-system draw is above the threshold but whose racks are not, are air-cooled as in AWS's deployment."""
    liquid = {k for k in systems() if needs_liquid(k, above_kw_per_rack)}
    assert {"gb200_nvl72", "gb300_nvl72", "vr_nvl72", "tpu_v7", "trn3", "mi450_helios"} <= liquid
    assert not liquid & {"hgx_h100", "hgx_b200", "hgx_b300", "mi355x", "trn2", "trn2_ultraserver", "tpu_v6e"}
    assert systems()["trn2_ultraserver"].system_power_kw > above_kw_per_rack  # per system it would have been liquid


def test_a_lower_air_limit_makes_more_systems_liquid():
    """Monotone in the threshold: whatever is liquid at 50 kW per rack is liquid at 25 kW, and more besides."""
    at_50 = {k for k in systems() if needs_liquid(k, 50)}
    at_25 = {k for k in systems() if needs_liquid(k, 25)}
    assert at_50 < at_25 and "trn2_ultraserver" in at_25 - at_50


@pytest.mark.parametrize("value, expected", [("0", "expected a positive number"), ("1.5", "expected a whole number")])
def test_a_bad_rack_count_is_refused_with_one_line(tmp_path, value, expected):
    bad_file, number = catalog_with_value(tmp_path, "trn2_ultraserver", "racks_per_system", value)
    with pytest.raises(InputError, match=f"line {number} .*'trn2_ultraserver'.*'racks_per_system'.*{expected}"):
        load_systems(bad_file)
