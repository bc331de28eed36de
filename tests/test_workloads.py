"""Workload catalog: parameter counts from shape against published counts; FLOPs per token convention."""

import pytest

from model.errors import InputError
from model.hardware import custom_workload, get_workload, workloads

REQUIRED = ["gpt3-175b", "llama2-70b", "llama3-70b", "llama3.1-8b", "llama3.1-405b", "llama3.1-405b-mlperf",
            "mixtral-8x7b", "deepseek-v3", "deepseek-r1", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b"]


def test_catalog_has_the_required_workloads():
    assert set(REQUIRED) <= set(workloads())


@pytest.mark.parametrize("key", REQUIRED)
def test_computed_parameter_counts_within_2_percent_of_published(key):
    w = get_workload(key)
    assert w.params_total / 1e9 == pytest.approx(w.published_params_b, rel=0.02)
    if w.is_moe:
        active = w.params_active - (w.embedding_params if w.published_active_excludes_input_embedding else 0)
        assert active / 1e9 == pytest.approx(w.published_active_params_b, rel=0.02)


def test_mlperf_405b_flops_per_token():
    # MLPerf convention: 6 (N - N_embedding) + 6 L s d = 2.51e12 at sequence 8192 with the 32k vocabulary.
    assert get_workload("llama3.1-405b-mlperf").flops_per_token(8192) == pytest.approx(2.51e12, rel=0.005)


def test_moe_flops_use_active_parameters():
    v3 = get_workload("deepseek-v3")
    assert v3.flops_per_token(4096) < 6 * 40e9 + 6 * 61 * 4096 * 7168
    assert v3.uses_mla and v3.kv_cache_bytes_per_token(1) == 61 * (512 + 64)


def test_custom_dense_model_by_parameter_count():
    w = custom_workload("frontier", params_b=2000)
    assert w.params_total / 1e9 == pytest.approx(2000, rel=0.02)
    assert 80 < w.hidden / w.layers < 180  # a Llama-like aspect ratio


def test_custom_moe_model_by_parameter_count():
    w = custom_workload("frontier-moe", params_b=2000, active_params_b=100, experts_routed=256, experts_active=8)
    assert w.is_moe
    assert w.params_total / 1e9 == pytest.approx(2000, rel=0.05)
    assert w.params_active < w.params_total / 5


def test_custom_model_by_shape_and_bad_values():
    w = custom_workload("shape", layers=24, hidden=2048, heads=16, kv_heads=16, vocab=131072, ffn_hidden=8192,
                        mlp="gelu")
    assert w.params_total > 1.5e9
    with pytest.raises(InputError, match="params_b"):
        custom_workload("bad", params_b=-1)
    with pytest.raises(InputError, match="unknown workload"):
        get_workload("gpt-7")
