"""`airace perf train|serve`: DESIGN.md keys in --json output, batch mode in input order, bad input exits 2."""

import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "model", *args], capture_output=True, text=True, timeout=120)


def test_perf_train_json_has_contract_keys():
    out = run("perf", "train", "--system", "gb200_nvl72", "--gpus", "512", "--workload", "llama3.1-405b-mlperf",
              "--precision", "fp8", "--seq-len", "8192", "--global-batch", "896", "--tokens", "2.3e9", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    for key in ("tflops_per_gpu", "step_time_s", "mfu", "layout", "memory_gb_per_gpu", "time_to_train_s"):
        assert key in result
    assert set(result["layout"]) >= {"tp", "pp", "dp", "cp", "ep", "microbatch"}
    layout = result["layout"]
    assert layout["tp"] * layout["pp"] * layout["dp"] * layout["cp"] == 512
    assert 0 < result["mfu"] < 1


def test_perf_serve_json_has_contract_keys():
    out = run("perf", "serve", "--system", "hgx_h200", "--gpus", "8", "--workload", "llama2-70b", "--precision",
              "fp8", "--input-tokens", "300", "--output-tokens", "290", "--scenario", "server", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    for key in ("output_tokens_per_s", "output_tokens_per_s_per_gpu", "ttft_s", "tpot_s", "layout"):
        assert key in result
    assert result["output_tokens_per_s"] == pytest.approx(8 * result["output_tokens_per_s_per_gpu"])


def test_perf_train_batch_keeps_order_and_flags_bad_rows(tmp_path):
    cases = tmp_path / "cases.csv"
    cases.write_text(
        "system,gpus,workload,precision,seq_len,global_batch_seqs\n"
        "hgx_h100,512,gpt3-175b,fp8,2048,2048\n"
        "hgx_h999,8,gpt3-175b,fp8,2048,256\n"
        "gb300_nvl72,72,llama3-70b,bf16,8192,128\n"
    )
    out = run("perf", "train", "--batch", str(cases))
    assert out.returncode == 1, out.stderr  # a row failed: every row is still answered
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == 3
    assert [r["row"] for r in rows] == [1, 2, 3]
    assert not rows[0].get("error") and rows[1]["error"] and not rows[2].get("error")
    assert rows[1]["error"].startswith("row 2 (line 3): ") and "hgx_h999" in rows[1]["error"]


def test_unknown_system_exits_2_with_one_line():
    out = run("perf", "serve", "--system", "hgx_h999", "--gpus", "8", "--workload", "llama2-70b", "--precision",
              "fp8", "--input-tokens", "300", "--output-tokens", "290")
    assert out.returncode == 2
    assert "unknown system 'hgx_h999'" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_run_writes_result_folder_and_rejects_unknown_override(tmp_path):
    from pathlib import Path

    baseline = str(Path(__file__).resolve().parents[1] / "scenarios" / "baseline.toml")
    out = run("run", baseline, "--out", str(tmp_path / "base"), "--quiet")
    assert out.returncode == 0, out.stderr
    assert {p.name for p in (tmp_path / "base").iterdir()} == {"agents.parquet", "market.parquet",
                                                               "events.parquet", "manifest.json"}
    bad = run("run", baseline, "--out", str(tmp_path / "bad"), "--set", "supplierr.x=1")
    assert bad.returncode == 2
    assert "unknown key" in bad.stderr and "supplier" in bad.stderr
    assert not (tmp_path / "bad").exists()


def test_perf_serve_pareto_prints_one_json_object_per_point():
    out = run("perf", "serve", "--system", "hgx_b200", "--gpus", "8", "--workload", "llama3-70b", "--precision",
              "nvfp4", "--input-tokens", "1024", "--output-tokens", "1024", "--pareto")
    assert out.returncode == 0, out.stderr
    points = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(points) >= 3
    assert all({"user_tokens_per_s", "output_tokens_per_s_per_gpu", "ttft_s", "tpot_s", "layout"} <= set(p)
               for p in points)
    assert [p["user_tokens_per_s"] for p in points] == sorted((p["user_tokens_per_s"] for p in points), reverse=True)


def test_perf_serve_latency_target_and_prefill_system():
    out = run("perf", "serve", "--system", "vr_nvl72", "--gpus", "72", "--workload", "deepseek-r1", "--precision",
              "nvfp4", "--input-tokens", "16384", "--output-tokens", "1024", "--min-user-tokens-per-s", "40",
              "--max-ttft-s", "5", "--prefill-system", "rubin_cpx", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["user_tokens_per_s"] >= 40 and result["ttft_s"] <= 5
    layout = result["layout"]
    assert layout["disaggregated"] and layout["prefill_system"] == "rubin_cpx"
    assert {"prefill_gpus", "decode_gpus", "prefill", "decode"} <= set(layout)


def test_bad_date_and_unknown_prefill_system_exit_2_with_one_line():
    base = ("perf", "serve", "--system", "hgx_b200", "--gpus", "8", "--workload", "llama3-70b", "--precision", "nvfp4",
            "--input-tokens", "1024", "--output-tokens", "1024")
    bad_date = run(*base, "--date", "2025-13")
    assert bad_date.returncode == 2 and "2025-13" in bad_date.stderr
    bad_system = run(*base, "--prefill-system", "cpx")
    assert bad_system.returncode == 2 and "unknown system 'cpx'" in bad_system.stderr
    assert len(bad_system.stderr.strip().splitlines()) == 1
