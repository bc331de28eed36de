"""Properties the serving model must keep whatever its fitted parameters."""

from __future__ import annotations

import json

import pytest

from model.errors import InputError
from model.performance.serving import serve_batch, serve_estimate, serve_pareto


def per_gpu(system: str, precision: str = "fp8", workload: str = "llama2-70b", scenario: str = "offline") -> float:
    return serve_estimate(system, 8, workload, precision, 1000, 500, scenario).output_tokens_per_s_per_gpu


def test_newer_systems_not_slower_per_gpu() -> None:
    for workload in ("llama2-70b", "mixtral-8x7b"):
        chain = [per_gpu(s, "fp8", workload) for s in ("hgx_h100", "hgx_h200", "hgx_b200", "hgx_b300")]
        assert chain == sorted(chain), (workload, chain)
    assert per_gpu("hgx_b200", "nvfp4") <= per_gpu("hgx_b300", "nvfp4")


def test_interactive_le_server_le_offline() -> None:
    for system, workload in (("hgx_h200", "llama2-70b"), ("hgx_h100", "llama3.1-8b"), ("gb200_nvl72", "deepseek-r1")):
        gpus = 72 if system.startswith("gb") else 8
        thr = [serve_estimate(system, gpus, workload, "fp8", 2000, 500, sc).output_tokens_per_s
               for sc in ("interactive", "server", "offline")]
        assert thr[0] <= thr[1] <= thr[2], (system, workload, thr)


def test_model_that_cannot_fit_is_infeasible_with_reason() -> None:
    res = serve_estimate("hgx_h100", 1, "llama3.1-405b", "fp8", 1000, 500)
    assert not res.feasible
    assert "fit" in res.reason
    assert res.output_tokens_per_s == 0.0
    json.dumps(res.to_dict())


def test_unsupported_precision_is_infeasible() -> None:
    res = serve_estimate("hgx_h200", 8, "llama2-70b", "nvfp4", 1000, 500)
    assert not res.feasible and "nvfp4" in res.reason


def test_result_is_json_ready_with_design_keys() -> None:
    out = serve_estimate("hgx_h200", 8, "llama2-70b", "fp8", 1000, 500, "server").to_dict()
    for key in ("output_tokens_per_s", "output_tokens_per_s_per_gpu", "ttft_s", "tpot_s", "layout"):
        assert key in out
    for key in ("tp", "pp", "ep", "dp", "batch", "disaggregated", "prefill_gpus", "decode_gpus"):
        assert key in out["layout"]
    json.dumps(out)


def test_batch_mode_marks_bad_rows_and_keeps_order(tmp_path) -> None:
    path = tmp_path / "queries.csv"
    path.write_text(
        "system,gpus,workload,precision,input_tokens,output_tokens,scenario\n"
        "hgx_h200,8,llama2-70b,fp8,1000,500,offline\n"
        "no_such_system,8,llama2-70b,fp8,1000,500,offline\n"
        "hgx_h100,1,llama3.1-405b,fp8,1000,500,offline\n"
        "hgx_h200,eight,llama2-70b,fp8,1000,500,server\n"
        "hgx_b200,8,llama3.1-8b,nvfp4,1000,500,interactive\n"
    )
    rows = serve_batch(path)
    assert [r["line"] for r in rows] == [2, 3, 4, 5, 6]
    assert [r["error"] is None for r in rows] == [True, False, False, False, True]
    assert rows[0]["output_tokens_per_s"] > 0
    json.dumps(rows)


def test_newer_software_never_slower() -> None:
    months = ["2024-06", "2025-01", "2025-09", "2026-04", "2027-01"]
    for system, workload, precision in (("hgx_h200", "llama2-70b", "fp8"), ("gb200_nvl72", "deepseek-r1", "nvfp4")):
        gpus = 72 if system.startswith("gb") else 8
        thr = [serve_estimate(system, gpus, workload, precision, 1000, 500, date=d).output_tokens_per_s
               for d in months]
        assert thr == sorted(thr), (system, thr)
        assert thr[-1] > thr[0]


def test_faster_users_cost_throughput() -> None:
    """Raising the per-user rate or cutting the TTFT limit never raises throughput per GPU."""
    for system, workload, gpus in (("hgx_b200", "llama3-70b", 8), ("gb200_nvl72", "deepseek-r1", 72)):
        thr = []
        for rate in (10, 30, 60, 100, 150):
            r = serve_estimate(system, gpus, workload, "nvfp4", 1024, 1024, min_user_tokens_per_s=rate)
            thr.append(r.output_tokens_per_s_per_gpu if r.feasible else 0.0)
            if r.feasible:
                assert r.user_tokens_per_s >= rate * (1 - 1e-9)
        assert thr == sorted(thr, reverse=True), (system, thr)
        assert thr[0] > thr[-1]
        loose = serve_estimate(system, gpus, workload, "nvfp4", 8192, 1024, max_ttft_s=10.0)
        tight = serve_estimate(system, gpus, workload, "nvfp4", 8192, 1024, max_ttft_s=0.5)
        assert tight.output_tokens_per_s_per_gpu <= loose.output_tokens_per_s_per_gpu
        assert not tight.feasible or tight.ttft_s <= 0.5


def test_pareto_frontier_is_a_frontier_and_agrees_with_the_target_search() -> None:
    points = serve_pareto("gb200_nvl72", 72, "deepseek-r1", "nvfp4", 1024, 1024)
    assert len(points) >= 5
    users = [p["user_tokens_per_s"] for p in points]
    thr = [p["output_tokens_per_s_per_gpu"] for p in points]
    assert users == sorted(users, reverse=True)
    assert thr == sorted(thr)
    for point in points[:: max(1, len(points) // 6)]:
        best = serve_estimate("gb200_nvl72", 72, "deepseek-r1", "nvfp4", 1024, 1024,
                              min_user_tokens_per_s=point["user_tokens_per_s"] * (1 - 1e-9))
        assert best.output_tokens_per_s_per_gpu == pytest.approx(point["output_tokens_per_s_per_gpu"], rel=1e-6)
    json.dumps(points)


def test_disaggregated_layout_accounts_for_every_gpu() -> None:
    r = serve_estimate("gb200_nvl72", 72, "deepseek-r1", "nvfp4", 8192, 1024, min_user_tokens_per_s=20)
    lay = r.layout
    assert lay["prefill_gpus"] + lay["decode_gpus"] <= 72 or not lay["disaggregated"]
    if lay["disaggregated"]:
        assert lay["prefill"]["instances"] * lay["prefill"]["gpus_per_instance"] == lay["prefill_gpus"]
        assert lay["decode"]["instances"] * lay["decode"]["gpus_per_instance"] == lay["decode_gpus"]


def test_context_accelerator_as_prefill_pool() -> None:
    r = serve_estimate("vr_nvl72", 72, "deepseek-r1", "nvfp4", 32768, 1024, prefill_system="rubin_cpx")
    assert r.feasible, r.reason
    assert r.layout["disaggregated"] and r.layout["prefill_system"] == "rubin_cpx"
    assert r.layout["prefill_gpus"] >= 1 and r.layout["decode_gpus"] >= 1
    assert r.prefill_system == "rubin_cpx"


def test_fp4_gain_is_below_the_peak_ratio() -> None:
    """NVFP4 doubles the tensor peak over FP8 on Blackwell, but attention, HBM and fixed costs do not follow."""
    for workload, isl, osl in (("llama3-70b", 1024, 1024), ("deepseek-r1", 8192, 1024)):
        fp8 = serve_estimate("gb200_nvl72", 72, workload, "fp8", isl, osl).output_tokens_per_s_per_gpu
        fp4 = serve_estimate("gb200_nvl72", 72, workload, "nvfp4", isl, osl).output_tokens_per_s_per_gpu
        assert 1.0 < fp4 / fp8 < 2.0, (workload, fp4 / fp8)


def test_gb300_gain_over_gb200_is_below_its_fp4_peak_ratio() -> None:
    """Same HBM bandwidth: at serving batch sizes GB300 gains far less than its 1.5x NVFP4 peak."""
    for workload in ("llama3-70b", "deepseek-r1"):
        gb3 = serve_estimate("gb300_nvl72", 72, workload, "nvfp4", 1024, 1024, "server").output_tokens_per_s_per_gpu
        gb2 = serve_estimate("gb200_nvl72", 72, workload, "nvfp4", 1024, 1024, "server").output_tokens_per_s_per_gpu
        assert 1.0 <= gb3 / gb2 < 1.45, (workload, gb3 / gb2)


def test_bad_targets_raise() -> None:
    with pytest.raises(InputError, match="min_user_tokens_per_s"):
        serve_estimate("hgx_h200", 8, "llama2-70b", "fp8", 1000, 500, min_user_tokens_per_s=-1.0)
    with pytest.raises(InputError, match="date"):
        serve_estimate("hgx_h200", 8, "llama2-70b", "fp8", 1000, 500, date="May 2025")
    with pytest.raises(InputError, match="unknown system"):
        serve_estimate("hgx_h200", 8, "llama2-70b", "fp8", 1000, 500, prefill_system="cpx")
