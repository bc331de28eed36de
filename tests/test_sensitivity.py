"""Sensitivity indices checked on the Ishigami function, whose variance-based indices are known analytically, through
the same code path as a sweep: the sweep's design sampler (`model.sweep.design`: Latin hypercube, SALib's Sobol'
and Morris samplers) and each parameter's inverse CDF make the inputs, `analysis.sensitivity.analyse` (what the
sensitivity figure calls for every outcome) makes the indices. Plus the `[sweep] method` validation.

Analytical values (Ishigami a = 7, b = 0.1, inputs uniform on [-pi, pi]): V = 1/2 + a^2/8 + b^2 pi^8/18 + b pi^4/5;
V1 = (1 + b pi^4/5)^2 / 2, V2 = a^2/8, V13 = 8 b^2 pi^8/225 (Saltelli et al. 2008, The Primer; OpenTURNS' use case).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from SALib.test_functions import Ishigami

from analysis import sensitivity as S
from model.errors import InputError
from model.scenario import load_scenario_dict
from model.sweep import design as D

A, B = 7.0, 0.1
V = 0.5 + A**2 / 8 + B**2 * math.pi**8 / 18 + B * math.pi**4 / 5
V1, V2, V13 = 0.5 * (1 + B * math.pi**4 / 5) ** 2, A**2 / 8, 8 * B**2 * math.pi**8 / 225
S1 = {"x1": V1 / V, "x2": V2 / V, "x3": 0.0}
ST = {"x1": (V1 + V13) / V, "x2": V2 / V, "x3": V13 / V}
SPECS = tuple(D.ParamSpec(f"x{i}", "uniform", {"low": -math.pi, "high": math.pi}, False) for i in (1, 2, 3))


def _inputs(unit: np.ndarray) -> pd.DataFrame:
    """Unit-cube points through each parameter's inverse CDF, as a sweep maps them."""
    return pd.DataFrame({s.path: s.inverse_cdf(unit[:, j]) for j, s in enumerate(SPECS)})


def _analyse(unit: np.ndarray, design: str) -> pd.DataFrame:
    x = _inputs(unit)
    return S.analyse(x, Ishigami.evaluate(x.to_numpy(), A, B), design).set_index("parameter")


def test_analytical_values_are_the_known_ones():
    assert (S1["x1"], S1["x2"], ST["x1"], ST["x3"]) == pytest.approx((0.3139, 0.4424, 0.5576, 0.2437), abs=1e-4)


@pytest.mark.slow
def test_latin_hypercube_rbd_fast_and_delta_against_ishigami():
    got = _analyse(D.lhs_unit(1000, 3, seed=7), "lhs")
    for p in ("x1", "x2", "x3"):  # RBD-FAST estimates first-order indices: within its interval (and 0.06) of S1
        assert got.loc[p, "rbd_fast"] == pytest.approx(S1[p], abs=max(0.06, got.loc[p, "rbd_fast_conf"]))
    assert not got.loc["x1", "rbd_fast_within_noise"] and not got.loc["x2", "rbd_fast_within_noise"]
    assert got.loc["x3", "rbd_fast_within_noise"]  # no first-order effect: indistinguishable from the dummy
    # delta sees the whole distribution: x3 (which moves only the spread, through x1) is above the dummy too
    assert not got.loc[["x1", "x2", "x3"], "delta_within_noise"].any()
    assert got.loc[S.DUMMY, "within_noise"] and got.loc[S.DUMMY, "delta"] < got.loc["x3", "delta"]
    assert got.loc["x2", "delta"] > got.loc["x3", "delta"] and got["delta"].between(0, 1).all()
    # Spearman: sin(x1) rises over most of its range; sin(x2)^2 and x3^4 are symmetric
    assert got.loc["x1", "spearman_rho"] > 0.3 and abs(got.loc["x2", "spearman_rho"]) < 0.1
    assert got.loc["x1", "spearman_p"] < 0.05 and got.loc["x3", "spearman_within_noise"]


def test_sobol_first_total_and_second_order_against_ishigami():
    got = _analyse(D.sobol_unit(2048 * 8, 3, seed=7), "sobol")
    for p in ("x1", "x2", "x3"):
        assert got.loc[p, "S1"] == pytest.approx(S1[p], abs=max(0.04, got.loc[p, "S1_conf"]))
        assert got.loc[p, "ST"] == pytest.approx(ST[p], abs=max(0.04, got.loc[p, "ST_conf"]))
    assert got.loc["x3", "S1_within_noise"] and not got.loc["x3", "ST_within_noise"]
    s2 = got.attrs["S2"].set_index(["parameter", "other"])
    assert s2.loc[("x1", "x3"), "S2"] == pytest.approx(V13 / V, abs=max(0.06, s2.loc[("x1", "x3"), "S2_conf"]))
    assert s2.loc[("x1", "x2"), "within_noise"] and s2.loc[("x2", "x3"), "within_noise"]
    assert list(got.sort_values("importance", ascending=False).index) == ["x1", "x2", "x3"]


def test_morris_elementary_effects_against_ishigami():
    got = _analyse(D.morris_unit(200 * 4, 3, seed=7), "morris")
    assert S.MORRIS_LEVELS == D.MORRIS_LEVELS  # the analysis divides by the grid the design sampled
    assert not got["within_noise"].any()
    # x3 acts only through its interaction with x1 (b x3^4 sin x1): a large spread of effects that cancel in sign
    assert got.loc["x3", "sigma"] > got.loc["x3", "mu_star"] and abs(got.loc["x3", "mu"]) < 0.5 * got.loc["x3",
                                                                                                         "mu_star"]
    assert min(got.loc["x1", "mu_star"], got.loc["x2", "mu_star"]) > got.loc["x3", "mu_star"]


def test_a_constant_outcome_has_no_index():
    x = _inputs(D.lhs_unit(20, 3, seed=1))
    got = S.analyse(x, np.ones(20), "lhs")
    assert got["within_noise"].all() and got["importance"].isna().all() and set(got["note"]) == {"constant across runs"}


def test_incomplete_blocks_are_left_out_of_sobol_and_morris():
    runs = pd.Series(range(12))
    y = pd.Series([1.0] * 12)
    y[5] = np.nan
    assert S.complete_rows(runs, y, "morris", 2, 12).tolist() == [True] * 3 + [False] * 3 + [True] * 6
    assert S.complete_rows(runs, y, "sobol", 2, 12).tolist() == [False] * 6 + [True] * 6
    assert S.complete_rows(runs.drop(index=7), y.drop(index=7), "lhs", 2, 12).sum() == 10
    assert S.complete_rows(runs[:11], y[:11].fillna(1.0), "morris", 2, 12).tolist() == [True] * 9 + [False] * 2


# -- [sweep] method ---------------------------------------------------------------------------------------------------
def _uncertainty(method: str) -> dict:
    params = load_scenario_dict("scenarios/uncertainty.toml")
    params["sweep"]["method"] = method
    return params


def test_sobol_and_morris_designs_sample_the_sweep_table():
    d = len(_uncertainty("lhs")["sweep"]) - 1
    sobol = D.build_design(_uncertainty("sobol"), 2 * (2 * d + 2), 3, "u.toml")
    assert sobol.design == "sobol" and len(sobol.samples) == 2 * (2 * d + 2)
    morris = D.build_design(_uncertainty("morris"), 3 * (d + 1), 3, "u.toml")
    frame = pd.DataFrame(morris.samples)
    steps = (frame.ne(frame.shift()).sum(axis=1)).to_numpy().reshape(3, d + 1)
    assert (steps[:, 1:] == 1).all()  # along a trajectory every step moves exactly one parameter, and moves it
    assert D.build_design(_uncertainty("morris"), 3 * (d + 1), 3, "u.toml").samples == morris.samples


_D = len(load_scenario_dict("scenarios/uncertainty.toml")["sweep"])  # parameters the uncertainty scenario samples


@pytest.mark.parametrize("method, runs, message", [
    ("sobol", 2 * _D + 3, f"N x {2 * _D + 2} runs with N a power of two; expected one of {2 * _D + 2}, "
                          f"{4 * _D + 4}, {8 * _D + 8}"),
    ("sobol", 3 * (2 * _D + 2), "power of two"),
    ("morris", _D + 2, f"runs r trajectories of {_D} + 1 = {_D + 1} runs, r >= 2; expected a multiple of {_D + 1}"),
    ("morris", _D + 1, "r >= 2"),
    ("sobolx", 20, "[sweep] method: expected one of lhs, sobol, morris, got 'sobolx' (did you mean 'sobol'?)"),
])
def test_design_errors_say_what_runs_would_do(method, runs, message):
    with pytest.raises(InputError) as err:
        D.build_design(_uncertainty(method), runs, 0, "u.toml")
    assert message in str(err.value) and str(err.value).startswith("u.toml: ")


def test_morris_refuses_what_its_grid_cannot_step():
    params = _uncertainty("morris")
    params["sweep"]["kinds.hyperscaler.capex_multiplier"] = {"dist": "normal", "mean": 1.0, "sd": 0.1}
    with pytest.raises(InputError, match="give this normal distribution low and high"):
        D.build_design(params, 40, 0, "u.toml")
    params = _uncertainty("morris")
    params["sweep"]["kinds.hyperscaler.wait_tau_months"] = {"dist": "uniform", "low": 6, "high": 6.6}
    with pytest.raises(InputError, match="does not change its value"):
        D.build_design(params, 40, 0, "u.toml")


# -- a sampled sweep through the model, then its figure -------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("method, runs", [("sobol", 2 * (2 * 2 + 2)), ("morris", 3 * (2 + 1))])
def test_a_sobol_or_morris_sweep_gets_its_analysis(tmp_path, method, runs):
    from model.results import read_folders
    from model.sweep import run_sweep

    root = Path(__file__).resolve().parents[1]
    scenario = tmp_path / f"{method}.toml"
    scenario.write_text(f'extends = "{(root / "scenarios" / "baseline.toml").as_posix()}"\nend = "2024-12"\n'
                        f'[sweep]\nmethod = "{method}"\n'
                        '"supplier.supply_growth_multiplier" = { dist = "uniform", low = 0.5, high = 1.5 }\n'
                        '"power_lead_time_multiplier" = { dist = "uniform", low = 0.7, high = 2.0 }\n')
    folder = run_sweep(scenario, runs, out=tmp_path / "sweep", base_seed=0, workers=2)
    files = S.make(read_folders([folder]), tmp_path / "figs")
    names = {f.name for f in files}
    assert names == ({"sensitivity", "sensitivity_second_order"} if method == "sobol" else {"sensitivity"})
    idx = pd.read_csv(tmp_path / "figs" / "sensitivity.csv")
    assert set(idx["design"]) == {method} and set(idx["parameter"]) == {"supplier.supply_growth_multiplier",
                                                                          "power_lead_time_multiplier"}
    columns = {"sobol": ["S1", "S1_conf", "ST", "ST_conf"], "morris": ["mu", "mu_star", "mu_star_conf", "sigma"]}
    revenue = idx[idx["outcome"] == "nvidia_revenue_usd_2024"]
    assert revenue[columns[method]].notna().all().all() and (revenue["runs"] == runs).all()
    if method == "sobol":
        s2 = pd.read_csv(tmp_path / "figs" / "sensitivity_second_order.csv")
        assert set(s2["outcome"]) >= {"nvidia_revenue_usd_2024"} and s2["S2"].notna().all()


def test_a_five_run_sweep_of_many_parameters_gives_delta_and_no_rbd_fast_instead_of_a_crash():
    """RBD-FAST's bootstrap needs more runs than its harmonics; with five runs it has none to give (SALib divides
    by zero): the index is missing, delta still answers."""
    from analysis.sensitivity import analyse

    rng = np.random.default_rng(0)
    x = pd.DataFrame(rng.uniform(size=(5, 31)), columns=[f"p{i}" for i in range(31)])
    out = analyse(x, rng.normal(size=5), "lhs")
    assert out["rbd_fast"].isna().all() and out["delta"].notna().all()


def test_an_outcome_most_runs_share_gets_no_delta_but_bounded_rbd_fast():
    """198 of 200 runs give the same month (GB300's first online in the uncertainty sweep): the kernel density
    delta needs is a spike, and SALib returned indices of ~1e12 for it. Delta is left out with a note, and the
    importance falls back to RBD-FAST, a share of variance (at most 1)."""
    from analysis.sensitivity import analyse

    rng = np.random.default_rng(1)
    x = pd.DataFrame(rng.uniform(size=(200, 5)), columns=[f"p{i}" for i in range(5)])
    y = np.full(200, 18.0)
    y[[3, 150]] = 19.0
    out = analyse(x, y, "lhs")
    assert out["delta"].isna().all() and (out["note"] == "too few distinct runs for delta").all()
    assert (out["importance"].abs() <= 1).all() and out["importance"].equals(out["rbd_fast"])
