"""Owners of custom chips keep the CoWoS their vendor reserved for them busy with their own chips first
(`supplier.owners_fill_reservation`): the reservation is booked ahead and paid for. Without it AWS, choosing month by
month on value per dollar alone, leaves most of its 2024 reservation unused and buys no Trainium1 at all, though
Epoch AI counts ~447k Trainium1 made in 2024."""

from __future__ import annotations

import pytest

from model.hardware.systems import systems
from model.market import MarketModel
from model.scenario.loading import load_scenario_dict


def _run(fill: bool) -> MarketModel:
    params = load_scenario_dict("scenarios/baseline.toml")
    params["end"] = "2024-12"
    params["supplier"] = {**params["supplier"], "owners_fill_reservation": fill}
    model = MarketModel.from_params(params, seed=0)
    model.run()
    return model


@pytest.fixture(scope="module")
def runs():
    return {fill: _run(fill) for fill in (True, False)}


def _aws_wafers_used(model: MarketModel) -> float:
    sup = model.supplier_of("trn2")
    return sum(sup.units_shipped_total[k] * systems()[k].gpus_per_system / sup.p.gpus_per_wafer[k] for k in sup.keys)


def test_the_baseline_fills_owners_reservations():
    assert load_scenario_dict("scenarios/baseline.toml")["supplier"]["owners_fill_reservation"] is True


def test_aws_fills_its_reservation_with_trainium_and_buys_fewer_hoppers(runs):
    fill, choose = runs[True].buyer("aws").procurement, runs[False].buyer("aws").procurement
    assert fill.ordered["trn1"] > 50_000 and choose.ordered["trn1"] == 0
    assert _aws_wafers_used(runs[True]) > 1.5 * _aws_wafers_used(runs[False])
    hopper = ("hgx_h100", "hgx_h200")
    assert sum(fill.ordered[k] for k in hopper) < sum(choose.ordered[k] for k in hopper)
