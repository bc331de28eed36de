"""Physical sanity of the training model: scaling, generations, feasibility, goodput and batch mode."""

import csv

from model.performance.goodput import goodput_fraction
from model.performance.training import frontier_run_days, train_batch, train_estimate

TOKENS = 15e12


def test_more_gpus_never_much_slower() -> None:
    times = []
    for gpus in (1024, 2048, 4096, 8192, 16384):
        result = train_estimate("hgx_h100", gpus, "llama3.1-405b", "bf16", 8192, 2048, TOKENS)
        assert result.feasible, result.reason
        times.append(result.time_to_train_s)
    for smaller, larger in zip(times, times[1:], strict=False):
        assert larger <= smaller * 1.03, times


def test_newer_systems_not_slower() -> None:
    order = ("hgx_h100", "hgx_h200", "hgx_b200", "gb200_nvl72", "gb300_nvl72", "vr_nvl72")
    tput = []
    for system in order:
        result = train_estimate(system, 1152, "llama3.1-405b", "fp8", 8192, 1152)
        assert result.feasible, (system, result.reason)
        tput.append(result.tokens_per_s)
    assert tput[0] < tput[1], tput
    for older, newer in zip(tput[1:], tput[2:], strict=False):
        assert newer >= older * 0.99, dict(zip(order, tput, strict=False))


def test_too_big_model_is_infeasible() -> None:
    result = train_estimate("hgx_h100", 8, "llama3.1-405b", "bf16", 8192, 64)
    assert not result.feasible
    assert "fit" in result.reason


def test_mfu_and_layout_are_sane() -> None:
    result = train_estimate("gb200_nvl72", 256, "deepseek-v3", "fp8", 4096, 4096)
    assert result.feasible, result.reason
    assert 0.05 < result.mfu < 0.7
    assert set(result.to_dict()["layout"]) >= {"tp", "pp", "dp", "cp", "ep", "microbatch"}
    lay = result.layout
    assert lay["tp"] * lay["pp"] * lay["dp"] * lay["cp"] == 256


def test_goodput_in_range_and_falls_with_scale() -> None:
    values = [goodput_fraction(g) for g in (8, 1024, 16384, 131072)]
    assert all(0 < v <= 1 for v in values)
    assert values == sorted(values, reverse=True) and values[0] > values[-1]


def test_frontier_run_days() -> None:
    days = frontier_run_days("gb200_nvl72", 16384, 3.8e25)
    assert days is not None and 10 < days < 400
    assert frontier_run_days("hgx_h100", 8, 3.8e25) is None


def test_batch_keeps_order_and_flags_bad_rows(tmp_path) -> None:
    path = tmp_path / "jobs.csv"
    rows = [
        ["system", "gpus", "workload", "precision", "seq_len", "global_batch_seqs", "tokens"],
        ["hgx_h100", "64", "llama3-70b", "fp8", "8192", "128", "1e12"],
        ["no_such_system", "64", "llama3-70b", "fp8", "8192", "128", ""],
        ["gb200_nvl72", "8", "llama3.1-8b", "bf16", "8192", "16", ""],
        ["hgx_h100", "sixty", "llama3-70b", "fp8", "8192", "128", ""],
    ]
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    out = train_batch(path)
    assert len(out) == 4
    assert "error" not in out[0] and out[0]["time_to_train_s"] > 0
    assert "error" in out[1] and "no_such_system" in out[1]["error"]
    assert "error" not in out[2] and out[2]["system"] == "gb200_nvl72"
    assert "error" in out[3]
