"""Export controls: China buys only the systems made for it (HGX H20), nobody else buys those, and they stop when
their maker may no longer ship them; the H20 wafers are wafers the rest of NVIDIA's buyers do not get."""

from __future__ import annotations

import pytest

from model.errors import InputError
from model.hardware.systems import systems
from model.market import MarketModel
from model.scenario.loading import load_scenario_dict


@pytest.fixture(scope="module")
def params():
    p = load_scenario_dict("scenarios/baseline.toml")
    p["end"] = "2025-06"
    return p


def test_china_orders_only_the_h20_and_nobody_else_does(params):
    model = MarketModel.from_params(params, seed=0)
    assert model.buyer("china").procurement.candidates == ("hgx_h20",)
    for buyer in model.buyers:
        if buyer.name != "china":
            assert "hgx_h20" not in buyer.procurement.candidates, buyer.name
    model.run()
    china = model.buyer("china")
    assert china.procurement.ordered["hgx_h20"] > 0
    assert all(n == 0 for k, n in china.procurement.ordered.items() if k != "hgx_h20")
    # sold from its first shipment (April 2024) to the last month before the licence requirement (March 2025)
    h20 = systems()["hgx_h20"]
    assert (h20.first_shipment, h20.last_shipment) == ("2024-04", "2025-03")
    shipped = model.datacollector.get_model_vars_dataframe()["units_shipped_hgx_h20"]
    assert shipped.iloc[:3].sum() == 0 and shipped.iloc[15:].sum() == 0 and shipped.sum() > 0


def test_h20_wafers_are_taken_from_the_rest_of_nvidias_output(params):
    """While Hopper is short (May-July 2024, orders waiting), the CoWoS that makes China's H20 does not make H100 or
    H200 for NVIDIA's other buyers: without China they get more."""
    def hopper_may_to_july_2024(p) -> float:
        model = MarketModel.from_params(p, seed=0)
        model.run()
        shipped = model.datacollector.get_model_vars_dataframe()
        return float(shipped[["units_shipped_hgx_h100", "units_shipped_hgx_h200"]].iloc[4:7].to_numpy().sum())

    without = dict(params)
    without["other"] = {k: v for k, v in params["other"].items() if k != "china"}
    assert hopper_may_to_july_2024(without) > hopper_may_to_july_2024(params)


def test_an_unknown_export_market_is_one_line(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('extends = "' + str((__import__("pathlib").Path("scenarios/baseline.toml")).resolve().as_posix())
                    + '"\n[other.china]\nexport_market = "Mars"\ncapex_usd_bn = { "2024" = 1 }\n')
    with pytest.raises(InputError, match=r"x.toml: other.china.export_market: expected a market the catalog makes "
                                         r"systems for \(China\), got 'Mars'") as info:
        load_scenario_dict(path)
    assert "\n" not in str(info.value)


def _run(params, seed=0):
    model = MarketModel.from_params(params, seed=seed)
    model.run()
    return model


def test_an_export_rule_strands_the_h20s_already_in_the_packaging_pipeline(params):
    """The H20's licence requirement (April 2025) took effect at once: what was packaged in the two months before
    for China's orders is made and never sold (NVIDIA's $4.5B H20 charge). No revenue is booked for it, China's money
    for it is free again, and units ordered = shipped + stranded + still on order."""
    assert params["supplier"]["packaging_to_shipment_months"] == 2
    model = _run(params)
    nvidia = model.supplier_of("hgx_h20")
    stranded = nvidia.units_stranded_total["hgx_h20"]
    assert stranded > 0 and nvidia.stranded_usd_total > 0
    # only H20 (made for an export market) strands; planned ends of production strand nothing
    assert all(n == 0 for k, n in nvidia.units_stranded_total.items() if k != "hgx_h20")
    shipped = model.datacollector.get_model_vars_dataframe()["units_shipped_hgx_h20"]
    assert shipped.iloc[15:].sum() == 0  # nothing ships after March 2025
    china = model.buyer("china")
    on_order = china.procurement.on_order_units["hgx_h20"]
    assert on_order == nvidia.backlog_units("hgx_h20") >= 0
    assert china.procurement.ordered["hgx_h20"] == 8 * (nvidia.units_shipped_total["hgx_h20"] + on_order)
    # China committed money only for what is still on order: what it paid for shipped units is spent
    assert china.treasury.committed_usd == pytest.approx(
        china.treasury.capex_usd + sum(o.usd_outstanding for o in nvidia.orders["hgx_h20"].values()), rel=1e-9)


def test_without_a_packaging_lag_nothing_strands_and_output_ships_a_lag_earlier(params):
    """The lag moves the sourced CoWoS and HBM series later by whole months (a month ships what was packaged
    `packaging_to_shipment_months` before) and is what strands chips: with 0 nothing is stranded."""
    import numpy as np

    from model.market.foundry import lagged

    series = np.array([1.0, 2.0, 3.0, 4.0])
    assert list(lagged(series, 0)) == [1, 2, 3, 4]
    assert list(lagged(series, 2)) == [1, 1, 1, 2]
    assert list(lagged(series, 9)) == [1, 1, 1, 1]
    no_lag = {**params, "supplier": {**params["supplier"], "packaging_to_shipment_months": 0}}
    lag = MarketModel.from_params(params, seed=0)
    flat = MarketModel.from_params(no_lag, seed=0)
    for resource in ("cowos_wafers", "hbm_tb"):
        assert np.array_equal(lag.foundry.total[resource][2:], flat.foundry.total[resource][:-2])
    model = _run(no_lag)
    assert model.supplier_of("hgx_h20").units_stranded_total["hgx_h20"] == 0
