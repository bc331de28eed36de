"""Serving estimates: output tokens/s, TTFT and TPOT for a workload on a cluster (pure numpy, no Mesa, no I/O).

Physics, per model instance of `g = tp x pp` GPUs (MoE experts spread over all `g` GPUs, i.e. `ep = g`):

- Prefill is compute-bound: 2 x N_active FLOPs per token plus causal attention, at dense peak x `PREFILL_EFF`.
- Decode is memory-bound: each step reads the weights once for the whole batch (for MoE only the experts the batch
  hits, E x (1 - (1 - k/E)^tokens)) and every sequence's KV cache (MLA caches the compressed latent); the roofline
  takes the larger of that and the step's FLOPs at peak x `DECODE_EFF`, then adds TP all-reduces / EP all-to-alls
  (NVLink inside the domain, scale-out beyond it) and pipeline hand-offs.
- The batch is bounded by the HBM left after weights, at the mean context (input + output / 2, paged KV).
- Aggregated serving interleaves prefill into decode steps; disaggregated serving splits replicas into prefill and
  decode pools, and wins when the TPOT limit is tight.

Layouts (tp, pp, instance size) and batch sizes are searched together as numpy arrays. The few efficiency
parameters are global (no per-system or per-case factors), fitted on validation/inference_calibration.csv
(MLPerf Inference v5.1, software of Sept 2025); `software_maturity(date)` scales to other months.

Shared helpers (efficiency constants, collective costs) are local copies for now; training.py keeps its own.
"""

from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from model.hardware.systems import System, get_system
from model.hardware.workloads import Workload, get_workload

# -- fitted efficiency parameters (global; fitted on MLPerf Inference v5.1, see tests/test_serving_validation.py) --
MEM_EFF = 0.80  # achieved fraction of HBM bandwidth in decode (weights + KV streaming)
PREFILL_EFF = 0.55  # achieved fraction of dense tensor peak in prefill GEMMs + attention
DECODE_EFF = 0.45  # achieved fraction of dense peak in decode GEMMs (small-M, less efficient than prefill)
LATENCY_TAIL = 1.6  # p99 / mean for TTFT and TPOT under MLPerf's Poisson server load
SERVER_LOAD = 0.95  # sustainable utilisation under Poisson arrivals relative to offline at the same batch
MOE_GEMM_EFF = 0.35  # routed-expert FLOPs run at this fraction of dense GEMM efficiency (grouped GEMMs, routing,
#                      permutation kernels); fitted on the Mixtral rows, the only MoE in the calibration

# -- fixed (not fitted) assumptions --
COLLECTIVE_LATENCY_S = 8e-6  # per NVLink all-reduce / all-to-all launch (NCCL small-message latency, ~5-10 us)
SCALEOUT_LATENCY_S = 20e-6  # per collective across InfiniBand / Ethernet
HBM_USABLE = 0.90  # HBM left after the runtime, CUDA graphs and activation workspace
ACTIVATION_BYTES = 2.0  # bf16 activations in collectives
MAX_BATCH_PER_GPU = 1024  # engine limit on concurrent sequences per GPU (TensorRT-LLM / vLLM max batch)
AMORTISATION_YEARS = 4.0  # straight-line capex amortisation for the per-dollar figure (no opex, full utilisation)
SECONDS_PER_YEAR = 365.25 * 86400.0

BYTES_PER_PARAM = {"bf16": 2.0, "fp8": 1.0, "nvfp4": 4.5 / 8.0}  # NVFP4: 4-bit values + an FP8 scale per 16
KV_BYTES_PER_VALUE = {"bf16": 2.0, "fp8": 1.0, "nvfp4": 1.0}  # KV cache stays FP8 with FP4 weights

# MLPerf Inference latency limits (TTFT s, TPOT s), from mlcommons/inference_policies inference_rules.adoc
# (https://github.com/mlcommons/inference_policies/blob/master/inference_rules.adoc, section "Benchmarks").
LATENCY_LIMITS_S: dict[tuple[str, str], tuple[float, float]] = {
    ("llama2-70b", "server"): (2.0, 0.200),
    ("llama2-70b", "interactive"): (0.450, 0.040),
    ("llama3.1-405b", "server"): (6.0, 0.175),
    ("llama3.1-405b", "interactive"): (4.5, 0.080),
    ("llama3.1-8b", "server"): (2.0, 0.100),
    ("llama3.1-8b", "interactive"): (0.5, 0.030),
    ("mixtral-8x7b", "server"): (2.0, 0.200),
    ("deepseek-r1", "server"): (2.0, 0.080),
}
GENERIC_LIMITS_S = {"server": (2.0, 0.100), "interactive": (0.5, 0.030)}  # assumption for other workloads
SCENARIOS = ("offline", "server", "interactive")

# -- software era --------------------------------------------------------------------------------------------
# Same hardware served DeepSeek-R1 1.6-1.8x faster in MLPerf Inference v6.0 (~2026-04) than in v5.1 (2025-09)
# (validation/README.md). Assumption: a logistic in months, 1.0 at 2025-09 and 1.7 at 2026-04, bounded
# between 0.6 (early-2024 software) and 2.2 (the gains of kernels, speculative decoding and wide EP saturate).
CALIBRATION_DATE = "2025-09"
MATURITY_LOW, MATURITY_HIGH = 0.6, 2.2
MATURITY_CENTRE_MONTHS = 4.07  # months after 2025-09; solves m(2025-09) = 1.0, m(2026-04) = 1.7
MATURITY_WIDTH_MONTHS = 3.71


def _months(date: str) -> float:
    year, month = date[:7].split("-")
    return int(year) * 12 + int(month) - 1


def software_maturity(date: str | None = None) -> float:
    """Serving-software speed factor relative to MLPerf v5.1 (Sept 2025); smooth, bounded, non-decreasing."""
    if date is None:
        return 1.0
    x = (_months(date) - _months(CALIBRATION_DATE) - MATURITY_CENTRE_MONTHS) / MATURITY_WIDTH_MONTHS
    return MATURITY_LOW + (MATURITY_HIGH - MATURITY_LOW) / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class ServeResult:
    """Best serving configuration found. Throughputs are output tokens; latencies are means (limits use p99)."""

    feasible: bool
    reason: str
    system: str
    gpus: int
    workload: str
    precision: str
    scenario: str
    output_tokens_per_s: float = 0.0
    output_tokens_per_s_per_gpu: float = 0.0
    ttft_s: float = math.inf
    tpot_s: float = math.inf
    tokens_per_s_per_mw: float = 0.0  # per MW of system power (the GPUs' share of their systems)
    tokens_per_s_per_usd_year: float = 0.0  # per USD/year of capex, price_usd_mid over AMORTISATION_YEARS
    software_maturity: float = 1.0
    layout: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready (infinities become None), with the DESIGN.md keys."""
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, float) and not math.isfinite(value):
                out[key] = None
        return out


def _pow2_upto(n: int) -> list[int]:
    return [1 << i for i in range(int(math.log2(max(1, n))) + 1)]


def _candidates(sys: System, gpus: int, wl: Workload) -> np.ndarray:
    """(tp, pp, g) triples: instance sizes are powers of two (or the NVLink domain); replicas fill the cluster."""
    sizes = set(_pow2_upto(gpus))
    if sys.nvlink_domain_gpus <= gpus:
        sizes.add(sys.nvlink_domain_gpus)
    rows = []
    for g in sorted(sizes):
        for tp in _pow2_upto(min(g, sys.nvlink_domain_gpus, wl.heads)):
            if g % tp == 0 and g // tp <= max(1, wl.layers // 4):  # at least 4 layers per pipeline stage
                rows.append((tp, g // tp, g))
    return np.array(rows, dtype=float)


def _limits(wl: Workload, scenario: str, ttft: float | None, tpot: float | None) -> tuple[float, float]:
    if scenario == "offline":
        return (ttft or math.inf, tpot or math.inf)
    key = "llama2-70b" if wl.key.startswith("llama2-70b") else wl.key
    default = LATENCY_LIMITS_S.get((key, scenario), GENERIC_LIMITS_S[scenario])
    return (ttft or default[0], tpot or default[1])


def _infeasible(reason: str, **ids) -> ServeResult:
    return ServeResult(feasible=False, reason=reason, **ids)


@lru_cache(maxsize=4096)
def serve_estimate(
    system: str,
    gpus: int,
    workload: str | Workload,
    precision: str,
    input_tokens: int,
    output_tokens: int,
    scenario: str = "offline",
    date: str | None = None,
    ttft_limit_s: float | None = None,
    tpot_limit_s: float | None = None,
) -> ServeResult:
    """Best output tokens/s of `gpus` GPUs of `system` serving `workload`, over layouts, batch and disaggregation.

    `offline` maximises throughput; `server`/`interactive` maximise it subject to p99 TTFT and TPOT limits
    (MLPerf's per benchmark, or the ones given). `date` (YYYY-MM) applies `software_maturity`.
    """
    sys = get_system(system)
    wl = get_workload(workload)
    precision = "nvfp4" if precision == "fp4" else precision
    ids = dict(system=sys.key, gpus=gpus, workload=wl.key, precision=precision, scenario=scenario)
    if scenario not in SCENARIOS:
        return _infeasible(f"unknown scenario {scenario!r}; expected one of {', '.join(SCENARIOS)}", **ids)
    if precision not in BYTES_PER_PARAM:
        return _infeasible(f"unknown precision {precision!r}; expected bf16, fp8 or nvfp4", **ids)
    if gpus < 1 or input_tokens < 1 or output_tokens < 1:
        return _infeasible("gpus, input_tokens and output_tokens must be positive", **ids)
    peak_tflops = sys.dense_tflops(precision)
    if peak_tflops is None:
        return _infeasible(f"{sys.key} does not support {precision}", **ids)
    maturity = software_maturity(date)
    ttft_lim, tpot_lim = _limits(wl, scenario, ttft_limit_s, tpot_limit_s)

    lay = _candidates(sys, gpus, wl)
    tp, pp, g = lay[:, 0:1], lay[:, 1:2], lay[:, 2:3]  # column vectors, broadcast against batch (row)
    isl, osl = float(input_tokens), float(output_tokens)
    ctx = isl + osl / 2.0  # mean context held in (paged) KV cache
    bpp, kvb = BYTES_PER_PARAM[precision], KV_BYTES_PER_VALUE[precision]
    peak = peak_tflops * 1e12 * maturity
    bw = sys.hbm_tb_s * 1e12 * MEM_EFF * maturity
    in_domain = g <= sys.nvlink_domain_gpus
    link = np.where(in_domain, sys.nvlink_gb_s * 1e9 / 2.0, sys.scaleout_gbit_s * 1e9 / 8.0)  # unidirectional B/s
    nvlink = sys.nvlink_gb_s * 1e9 / 2.0
    alpha_link = np.where(in_domain, COLLECTIVE_LATENCY_S, SCALEOUT_LATENCY_S)
    pp_link = np.where(g <= sys.nvlink_domain_gpus, nvlink, sys.scaleout_gbit_s * 1e9 / 8.0)

    # Weights: compute-path parameters (input embedding is a lookup, not read per token).
    n_total = wl.params_total - wl.embedding_params
    n_active = wl.params_active - wl.embedding_params
    expert_bytes_layer = wl.experts_routed * wl.expert_params * bpp  # routed experts of one MoE layer
    dense_bytes = (n_total - wl.expert_params_total) * bpp
    attn_replica_bytes = 0.0
    if wl.uses_mla:  # DP attention: attention weights replicated per GPU, KV partitioned by sequence
        attn_replica_bytes = wl.layers * wl.attention_params_per_layer * bpp
    weights_gpu = wl.params_total * bpp / g + attn_replica_bytes * (1 - 1 / g)
    kv_token = wl.kv_cache_bytes_per_token(kvb)
    kv_split = g if wl.uses_mla else pp * np.minimum(tp, wl.kv_heads)  # GPUs sharing one sequence's KV
    kv_replication = g / kv_split  # TP beyond kv_heads replicates KV heads
    free_gpu = sys.hbm_gb * 1e9 * HBM_USABLE - weights_gpu
    batch_max = np.floor(free_gpu * g / (ctx * kv_token * kv_replication))  # sequences per instance
    batch_max = np.minimum(batch_max, MAX_BATCH_PER_GPU * g)
    if not np.any(batch_max >= 1):
        need = wl.params_total * bpp / 1e9
        return _infeasible(
            f"does not fit: {need:.0f} GB of {precision} weights plus KV for one {int(ctx)}-token sequence exceed "
            f"{gpus} x {sys.hbm_gb:.0f} GB HBM",
            **ids,
        )

    batch = np.unique(np.round(np.geomspace(1, MAX_BATCH_PER_GPU * gpus, 96)))[None, :]
    ok = batch <= batch_max
    micro = batch / pp  # sequences per pipeline micro-batch

    # Attention FLOPs per token at context c (QK and AV): GQA 4 x heads x head_dim x c; MLA absorbed latent.
    att_dim = wl.heads * (2 * wl.kv_lora_rank + wl.qk_rope_head_dim) if wl.uses_mla else 2 * wl.heads * wl.head_dim_eff
    att_flops_token = 2.0 * wl.layers * att_dim  # x context length

    # -- prefill (per request, whole instance) --
    expert_active = wl.moe_layers * wl.experts_active * wl.expert_params  # routed-expert params per token
    n_eff = n_active - expert_active + expert_active / MOE_GEMM_EFF  # dense-equivalent GEMM work per token
    pf_flops = 2.0 * n_eff * isl + att_flops_token * isl * isl / 2.0
    pf_comm = np.where(tp > 1, 2 * wl.layers * (isl * wl.hidden * ACTIVATION_BYTES * 2 * (tp - 1) / tp) / nvlink, 0.0)
    if wl.is_moe:
        a2a = 2 * wl.moe_layers * isl * wl.experts_active * wl.hidden * 1.5 * (g - 1) / g / g / link
        pf_comm = pf_comm + np.where(g > 1, a2a, 0.0)
    t_pf = pf_flops / (g * peak * PREFILL_EFF) + pf_comm / maturity  # GPU-instance time per request
    ttft_pf = t_pf * (1 + (pp - 1) / 4.0)  # chunked prefill pipelines over stages in ~4 chunks

    # -- decode step (per micro-batch per stage, then x pp stages) --
    if wl.is_moe:
        tokens = micro
        hit = 1.0 - (1.0 - wl.experts_active / wl.experts_routed) ** tokens
        w_read = dense_bytes + wl.moe_layers * expert_bytes_layer * hit
    else:
        w_read = np.full_like(micro, n_total * bpp)
    mem_s = (w_read / g + micro * ctx * kv_token * kv_replication / g) / bw
    flops = micro * (2.0 * n_eff + att_flops_token * ctx)
    cmp_s = flops / (g * peak * DECODE_EFF)
    layers_stage = wl.layers / pp
    comm_s = np.where(tp > 1, 2 * layers_stage * (alpha_link + micro * wl.hidden * ACTIVATION_BYTES * 2 * (tp - 1)
                                                   / tp / nvlink), 0.0)
    if wl.is_moe:
        moe_stage = wl.moe_layers / pp
        a2a_s = 2 * moe_stage * (alpha_link + micro * wl.experts_active * wl.hidden * 1.5 * (g - 1) / g / g / link)
        comm_s = comm_s + np.where(g > 1, a2a_s, 0.0)
    comm_s = comm_s + np.where(pp > 1, COLLECTIVE_LATENCY_S + micro * wl.hidden * ACTIVATION_BYTES / pp_link, 0.0)
    tpot_raw = pp * (np.maximum(mem_s, cmp_s) + comm_s)  # per-token latency of one sequence

    replicas = np.floor(gpus / g)
    # Aggregated: prefill interleaved into decode steps (each step carries batch/osl requests' prefill).
    tpot_agg = tpot_raw + batch * t_pf / osl
    thr_agg = replicas * batch / tpot_agg
    ttft_agg = ttft_pf + tpot_raw
    # Disaggregated: best split of the replicas into prefill and decode pools; KV moved over the fabric.
    pf_rate = osl / t_pf  # output tokens/s of demand one prefill replica feeds
    dec_rate = batch / tpot_raw
    n_pf = np.clip(np.round(replicas * dec_rate / (pf_rate + dec_rate)), 1, np.maximum(replicas - 1, 1))
    thr_dis = np.where(replicas >= 2, np.minimum(n_pf * pf_rate, (replicas - n_pf) * dec_rate), 0.0)
    kv_move = isl * kv_token / (sys.scaleout_gbit_s * 1e9 / 8.0 * g)
    ttft_dis = ttft_pf + kv_move + tpot_raw

    load = 1.0 if scenario == "offline" else SERVER_LOAD
    tail = 1.0 if scenario == "offline" else LATENCY_TAIL
    best: tuple[float, dict, float, float] | None = None
    for disagg, thr, tpot, ttft in ((False, thr_agg, tpot_agg, ttft_agg), (True, thr_dis, tpot_raw, ttft_dis)):
        meets = ok & (tpot * tail <= tpot_lim) & (ttft * tail <= ttft_lim) & (thr > 0)
        score = np.where(meets, thr * load, -1.0)
        i, j = np.unravel_index(int(np.argmax(score)), score.shape)
        if score[i, j] > 0 and (best is None or score[i, j] > best[0] * 1.02):  # disaggregate only if it helps
            r = int(replicas[i, 0])
            npf = int(n_pf[i, j]) if disagg else 0
            layout = dict(tp=int(tp[i, 0]), pp=int(pp[i, 0]), ep=int(g[i, 0]) if wl.is_moe else 1, dp=r, replicas=r,
                          batch=int(batch[0, j]), disaggregated=disagg,
                          prefill_gpus=npf * int(g[i, 0]) if disagg else r * int(g[i, 0]),
                          decode_gpus=(r - npf) * int(g[i, 0]) if disagg else r * int(g[i, 0]))
            best = (float(score[i, j]), layout, float(ttft[i, 0] if ttft.shape[1] == 1 else ttft[i, j]),
                    float(tpot[i, j]))
    if best is None:
        return _infeasible(f"no layout meets TTFT <= {ttft_lim} s and TPOT <= {tpot_lim} s at p99", **ids)
    thr, layout, ttft, tpot = best
    share = gpus / sys.gpus_per_system
    return ServeResult(
        feasible=True, reason="", **ids,
        output_tokens_per_s=thr, output_tokens_per_s_per_gpu=thr / gpus, ttft_s=ttft, tpot_s=tpot,
        tokens_per_s_per_mw=thr / (sys.system_power_kw * share / 1000.0),
        tokens_per_s_per_usd_year=thr / (sys.price_usd_mid * share / AMORTISATION_YEARS),
        software_maturity=maturity, layout=layout,
    )


BATCH_COLUMNS = ("system", "gpus", "workload", "precision", "input_tokens", "output_tokens", "scenario")


def serve_batch(csv_path: str | Path) -> list[dict]:
    """One result dict per CSV row, in order; a bad row gets `error` set instead of raising."""
    out: list[dict] = []
    with Path(csv_path).open(newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                missing = [c for c in BATCH_COLUMNS[:-1] if not (row.get(c) or "").strip()]
                if missing:
                    raise ValueError(f"missing {', '.join(missing)}")
                res = serve_estimate(
                    row["system"].strip(), int(row["gpus"]), row["workload"].strip(), row["precision"].strip(),
                    int(row["input_tokens"]), int(row["output_tokens"]),
                    (row.get("scenario") or "offline").strip() or "offline",
                )
                out.append({**res.to_dict(), "line": line, "error": None if res.feasible else res.reason})
            except Exception as exc:  # noqa: BLE001 - batch mode reports, never raises
                out.append({**{c: row.get(c) for c in BATCH_COLUMNS}, "line": line, "feasible": False,
                            "error": f"line {line}: {exc}"})
    return out
