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


def test_expert_imbalance_slows_moe_training() -> None:
    balanced = train_estimate("gb200_nvl72", 256, "deepseek-v3", "fp8", 4096, 4096)
    skewed = train_estimate("gb200_nvl72", 256, "deepseek-v3", "fp8", 4096, 4096, expert_imbalance=1.5)
    assert skewed.tflops_per_gpu < balanced.tflops_per_gpu * 0.98


def test_newer_software_never_slower() -> None:
    for system, workload, gpus, gbs, seq in (("hgx_h100", "llama3-70b", 64, 128, 8192),
                                             ("gb200_nvl72", "qwen3-30b-a3b", 8, 512, 4096)):
        months = ["2024-06", "2025-01", "2025-06", "2025-12", "2026-06", "2027-06"]
        tput = [train_estimate(system, gpus, workload, "fp8", seq, gbs, date=d).tflops_per_gpu for d in months]
        assert tput == sorted(tput), (system, workload, tput)
        assert tput[-1] > tput[0]


def test_new_architecture_starts_with_immature_software() -> None:
    """The same month is early for Blackwell and late for Hopper: the Blackwell/Hopper ratio grows with time."""
    def ratio(date):
        gb = train_estimate("gb200_nvl72", 256, "llama3.1-405b", "fp8", 8192, 1536, date=date).tflops_per_gpu
        h = train_estimate("hgx_h100", 256, "llama3.1-405b", "fp8", 8192, 1536, date=date).tflops_per_gpu
        return gb / h

    assert ratio("2024-12") < ratio("2026-06")


def test_in_network_reduction_never_slower_and_helps_latency_bound_reductions() -> None:
    from dataclasses import replace

    from model.hardware.systems import get_system
    from model.hardware.workloads import get_workload
    from model.performance.training import estimate_uncached

    h100 = get_system("hgx_h100")
    ring = replace(h100, scaleout_in_network_reduction=False)
    w = get_workload("llama3.1-8b")
    for gpus, gbs in ((512, 512), (4096, 4096)):
        tree = estimate_uncached(h100, w, "fp8", 8192, gbs, gpus, None)
        flat = estimate_uncached(ring, w, "fp8", 8192, gbs, gpus, None)
        assert tree.step_time_s <= flat.step_time_s
        assert tree.breakdown["dp_comm_s"] <= flat.breakdown["dp_comm_s"]


def test_hierarchical_reduction_beats_scaleout_only() -> None:
    """A data-parallel group that stays inside an NVLink domain reduces faster than the same group over the NIC."""
    from dataclasses import replace

    from model.hardware.systems import get_system
    from model.hardware.workloads import get_workload
    from model.performance.training import estimate_uncached

    gb200 = get_system("gb200_nvl72")
    small_domain = replace(gb200, nvlink_domain_gpus=4)
    w = get_workload("llama3-70b")
    big = estimate_uncached(gb200, w, "fp8", 8192, 64, 64, None)
    small = estimate_uncached(small_domain, w, "fp8", 8192, 64, 64, None)
    assert big.tflops_per_gpu >= small.tflops_per_gpu


def test_output_layer_weighs_on_the_last_pipeline_stage() -> None:
    """A huge vocabulary costs more than its share of FLOPs when pipelined: the last stage sets the pace."""
    from model.hardware.workloads import custom_workload

    small_vocab = custom_workload("v32k", layers=32, hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8, vocab=32000)
    big_vocab = custom_workload("v512k", layers=32, hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8, vocab=512000)
    for w in (small_vocab, big_vocab):
        assert train_estimate("hgx_h100", 64, w, "bf16", 4096, 256).feasible
    slow = train_estimate("hgx_h100", 64, big_vocab, "bf16", 4096, 256)
    fast = train_estimate("hgx_h100", 64, small_vocab, "bf16", 4096, 256)
    # model FLOPs count the output layer, so TFLOP/s need not fall, but time per token must grow with it
    assert slow.step_time_s > fast.step_time_s


def test_bad_training_input_raises_with_the_field_named() -> None:
    import pytest

    from model.errors import InputError

    with pytest.raises(InputError, match="date"):
        train_estimate("hgx_h100", 64, "llama3-70b", "fp8", 8192, 128, date="2025-13")
    with pytest.raises(InputError, match="expert_imbalance"):
        train_estimate("hgx_h100", 64, "llama3-70b", "fp8", 8192, 128, expert_imbalance=0.5)
