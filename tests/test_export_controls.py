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
