"""Properties the serving model must keep whatever its fitted parameters."""

from __future__ import annotations

import json

from model.performance.serving import serve_batch, serve_estimate, software_maturity


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


def test_maturity_monotone_bounded_and_calibrated() -> None:
    months = [f"{y}-{m:02d}" for y in range(2023, 2030) for m in range(1, 13)]
    values = [software_maturity(d) for d in months]
    assert all(a <= b for a, b in zip(values, values[1:], strict=False))
    assert values[0] > 0.5 and values[-1] < 2.5
    assert abs(software_maturity("2025-09") - 1.0) < 0.01
    assert 1.6 <= software_maturity("2026-04") <= 1.8
    later = serve_estimate("hgx_h200", 8, "llama2-70b", "fp8", 1000, 500, date="2026-04").output_tokens_per_s
    assert later > serve_estimate("hgx_h200", 8, "llama2-70b", "fp8", 1000, 500).output_tokens_per_s
