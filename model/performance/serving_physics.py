"""Serving physics per model instance, for many layouts and batch sizes at once (numpy broadcasting).

A model instance is `g` GPUs in `pp` pipeline stages of `g / pp` GPUs. Within a stage, dense weights are split by
tensor parallelism `tp`; a mixture-of-experts model spreads its routed experts over all GPUs of the stage (wide
expert parallelism, across the NVLink domain where it fits) and runs attention either tensor-parallel or
data-parallel (`tp = 1`: every GPU holds the attention weights and its own sequences' KV cache, as MLA models do);
when the whole stage is one TP group (`tp = g / pp`) the experts are tensor-parallel too (no all-to-all, no routing
imbalance, all-reduces instead).

Decode, one step for a batch of `b` sequences per stage (arrays broadcast over layouts x batches):
- weight GEMMs: max(weights read from HBM, FLOPs at the weights' precision peak x efficiency x M / (M + half));
  for MoE only the experts the batch hits are read, E (1 - (1 - k/E)^tokens), and each expert's GEMM has M = its
  tokens;
- attention: max(KV cache read, FLOPs at the attention precision's peak (BF16 in decode, where the FP8 KV cache is
  dequantised into BF16 MMAs; FP8 in prefill with an FP8 KV cache), softmax exponentials at the special function
  units' rate): attention never runs at the FP4 peak;
- communication: tensor-parallel all-reduces, expert dispatch (FP8) and combine (BF16) over NVLink or, beyond the
  domain, the scale-out NIC, each with a launch latency; inside the domain each gets the share of the scale-up
  bandwidth its wiring allows (`topology`: a full mesh gives one link per peer, a torus rings along dimensions and
  makes all-to-all bytes travel several hops);
- fixed costs: per layer (launches, small ops), per MoE layer (routing, dispatch/combine kernel latency) and per
  step (scheduling, sampling, host synchronisation).
Prefill, one request of `isl` tokens on an instance: GEMMs and causal attention (MLA uncompressed) at the same
efficiencies with large M, the weights read once per chunk, activation and quantisation traffic, TP all-reduces and
expert all-to-all, per-layer costs. All efficiencies are global fitted parameters (params.py); the software era
scales the fixed costs and efficiencies (general) and the MoE dispatch and grouped GEMMs (MoE).
"""

from __future__ import annotations

import numpy as np

from model.hardware.systems import System
from model.hardware.workloads import Workload
from model.performance.params import ServeParams
from model.performance.topology import all_to_all_share, ring_share

WEIGHT_BYTES = {"bf16": 2.0, "fp8": 1.0 + 1.0 / 128, "nvfp4": 0.5 + 1.0 / 16}  # FP8 block scales; NVFP4 FP8 scale/16
KV_BYTES = {"bf16": 2.0, "fp8": 1.0, "nvfp4": 1.0}  # the KV cache stays FP8 with FP8 or FP4 weights
DISPATCH_BYTES = 1.0  # expert dispatch in FP8 (DeepEP / TensorRT-LLM wide-EP kernels); combine in BF16
ACTIVATION_BYTES = 2.0
PREFILL_CHUNK_TOKENS = 8192  # prefill batched in chunks of this many tokens (weights read once per chunk)


def attention_precision(precision: str, phase: str) -> str:
    """Prefill (context) attention runs FP8 MMAs when the KV cache is FP8; decode attention dequantises the KV cache
    into BF16 MMAs (FlashMLA, TensorRT-LLM generation kernels). Never FP4."""
    return "fp8" if precision != "bf16" and phase == "prefill" else "bf16"


def gemm_efficiency(p: ServeParams, precision: str) -> float:
    return {"bf16": p.gemm_eff_bf16, "fp8": p.gemm_eff_fp8, "nvfp4": p.gemm_eff_fp4}[precision]


def routing_imbalance(p: ServeParams, slots_per_rank, ranks):
    """Busiest expert-parallel rank over the mean: the systematic skew times the random excess of the busiest of
    `ranks` ranks that each expect `slots_per_rank` token copies (Gaussian extreme value, sqrt(2 ln n / lambda))."""
    n = np.maximum(ranks, 2.0)
    return p.expert_imbalance * (1.0 + np.sqrt(2.0 * np.log(n) / np.maximum(slots_per_rank, 1.0)))


class Model:
    """Per-layer sizes of a workload that the serving physics needs (computed once per query)."""

    def __init__(self, w: Workload, precision: str):
        self.w = w
        self.L = float(w.layers)
        self.h = float(w.hidden)
        self.moe_layers = float(w.moe_layers)
        self.dense_layers = self.L - self.moe_layers
        self.bw = WEIGHT_BYTES[precision]
        self.kvb = KV_BYTES[precision]
        self.attn_p = float(w.attention_params_per_layer)
        self.mlp_p = float(w.dense_mlp_params_per_layer)
        self.k = float(w.experts_active)
        self.E = float(w.experts_routed)
        self.exp_p = float(w.expert_params)
        self.shared_p = float(w.experts_shared * w.expert_params + (w.hidden * w.experts_routed if w.is_moe else 0))
        self.out_p = float(w.vocab * w.hidden)
        self.kv_token = w.kv_cache_bytes_per_token(self.kvb)  # all layers
        self.kv_layer = self.kv_token / self.L
        if w.uses_mla:  # absorbed MLA in decode: scores and values against the compressed latent
            self.dec_att_dim = w.heads * (2 * w.kv_lora_rank + w.qk_rope_head_dim)
            self.pf_qk, self.pf_v = float(w.qk_nope_head_dim + w.qk_rope_head_dim), float(w.v_head_dim)
        else:
            self.dec_att_dim = 2 * w.heads * w.head_dim_eff
            self.pf_qk = self.pf_v = float(w.head_dim_eff)
        self.heads = float(w.heads)
        self.kv_heads = float(w.kv_heads)
        self.inter = float(w.moe_ffn_hidden * (w.experts_active + w.experts_shared) if w.is_moe else w.ffn_hidden)

    def weight_bytes_gpu(self, tp, pp, gs):
        """Weights held per GPU of a stage: attention split by tp (replicated when tp = 1 in an MoE model with
        data-parallel attention), dense MLP and output layer split by tp, routed experts split over the stage."""
        per_stage_attn = self.attn_p * self.L / pp / tp
        dense = (self.mlp_p * self.dense_layers + self.shared_p * self.moe_layers) / pp / tp
        experts = self.exp_p * self.E * self.moe_layers / pp / gs
        return (per_stage_attn + dense + experts + self.out_p / tp) * self.bw


def decode_step(s: System, m: Model, precision: str, tp, pp, g, b, p: ServeParams, general: float, moe: float):
    """Time of one decode step of one pipeline stage (s) for `b` sequences in that stage's microbatch, at mean
    context `ctx` set by the caller through `m.ctx`; arrays broadcast. Returns (stage time, breakdown dict)."""
    gs = g / pp
    layers = m.L / pp
    hbm = s.hbm_tb_s * 1e12 * p.mem_eff / general
    peak = s.dense_tflops(precision) * 1e12 * gemm_efficiency(p, precision) / general
    apeak = s.dense_tflops(attention_precision(precision, "decode")) * 1e12 * p.attn_eff / general
    exp_rate = s.attention_exp_tera_per_s * 1e12
    nvl = s.nvlink_gb_s / 2 * 1e9 * p.net_eff
    nic = s.scaleout_gbit_s / 8 * 1e9 * p.net_eff
    half = p.gemm_half_m
    dp_attn = m.w.is_moe & (tp == 1)
    # Tokens per GEMM: TP layouts run the stage's whole microbatch through every GEMM; data-parallel attention splits
    # it over the stage's GPUs.
    m_attn = np.where(dp_attn, np.maximum(b / gs, 1.0), b)

    def gemm(flops, bytes_, mm):
        return np.maximum(bytes_ / hbm, flops * (mm + half) / (mm * peak))

    # Attention projections and dense MLPs (per GPU of the stage).
    t = gemm(2 * m.attn_p * layers * b / np.where(dp_attn, gs, tp), m.attn_p * layers / tp * m.bw, m_attn)
    dense_p = (m.mlp_p * m.dense_layers + m.shared_p * m.moe_layers) / pp
    t = t + gemm(2 * dense_p * b / tp, dense_p / tp * m.bw, b)
    t = t + gemm(2 * m.out_p / pp * b / tp, m.out_p / pp / tp * m.bw, b)  # output layer, averaged over stages
    t_experts = 0.0
    if m.w.is_moe:
        slots = b * m.k  # token copies routed in this stage's microbatch, per layer
        hit = m.E * (1.0 - (1.0 - m.k / m.E) ** b)  # experts touched per layer
        per_expert = slots / hit
        moe_layers = m.moe_layers / pp
        # Experts tensor-parallel when the whole stage is one TP group (tp = gs): balanced, no all-to-all.
        expert_tp = tp >= gs
        imbalance = np.where((gs > 1) & ~expert_tp, routing_imbalance(p, slots / gs, gs), 1.0)
        t_experts = gemm(2 * m.exp_p * slots * moe_layers / gs * imbalance,
                         m.exp_p * hit * moe_layers / gs * m.bw, per_expert) * moe
    # Attention over the KV cache.
    seqs = np.where(dp_attn, b / gs, b)
    kv_split = np.where(dp_attn, 1.0, np.minimum(tp, m.kv_heads) if not m.w.uses_mla else 1.0)
    kv_bytes = seqs * m.ctx * m.kv_layer * layers / kv_split
    heads_gpu = np.where(dp_attn, m.heads, m.heads / tp)
    att_flops = 2 * m.dec_att_dim / m.heads * heads_gpu * m.ctx * seqs * layers
    exps = heads_gpu * m.ctx * seqs * layers
    t_attn = np.maximum(np.maximum(kv_bytes / hbm, att_flops / apeak), exps / exp_rate)
    # Communication.
    allreduce = p.nvlink_latency_s + b * m.h * ACTIVATION_BYTES * 2 * (tp - 1) / tp / (nvl * ring_share(s, tp))
    t_comm = np.where(tp > 1, 2 * layers * allreduce, 0.0)
    if m.w.is_moe:
        link = np.where(gs <= s.nvlink_domain_gpus, nvl * all_to_all_share(s, gs), nic)
        alpha = np.where(gs <= s.nvlink_domain_gpus, p.nvlink_latency_s, p.scaleout_latency_s)
        a2a = slots / gs * imbalance * m.h * (DISPATCH_BYTES + ACTIVATION_BYTES) * (gs - 1) / gs / link
        t_comm = t_comm + np.where((gs > 1) & ~expert_tp,
                                   2 * alpha * m.moe_layers / pp + a2a * m.moe_layers / pp * moe, 0.0)
    t_fixed = layers * p.layer_overhead_s * general + m.moe_layers / pp * p.moe_layer_overhead_s * moe
    stage = t + t_experts + t_attn + t_comm + t_fixed
    return stage, {"weights_s": t + t_experts, "attention_s": t_attn, "comm_s": t_comm, "fixed_s": t_fixed}


def prefill_time(s: System, m: Model, precision: str, tp, pp, g, isl: float, p: ServeParams, general: float,
                 moe: float):
    """GPU-instance time to prefill one request of `isl` tokens (s), arrays over layouts."""
    hbm = s.hbm_tb_s * 1e12 * p.mem_eff / general
    peak = s.dense_tflops(precision) * 1e12 * gemm_efficiency(p, precision) / general
    apeak = s.dense_tflops(attention_precision(precision, "prefill")) * 1e12 * p.attn_eff / general
    exp_rate = s.attention_exp_tera_per_s * 1e12
    nvl = s.nvlink_gb_s / 2 * 1e9 * p.net_eff
    nic = s.scaleout_gbit_s / 8 * 1e9 * p.net_eff
    active = (m.attn_p * m.L + m.mlp_p * m.dense_layers + m.shared_p * m.moe_layers + m.out_p
              + m.exp_p * m.k * m.moe_layers)
    expert_tp = tp >= g / pp
    imbalance = np.where(expert_tp, 1.0, routing_imbalance(p, isl * m.k / np.maximum(g / pp, 1.0), g / pp)) \
        if m.w.is_moe else 1.0
    expert_flops = 2 * m.exp_p * m.k * m.moe_layers * isl * (moe * imbalance - 1.0)
    t_gemm = (2 * active * isl + expert_flops) / (g * peak)
    weights = m.weight_bytes_gpu(tp, pp, g / pp) * pp  # all stages' weights, read once per chunk
    t_weights = weights / hbm * isl / PREFILL_CHUNK_TOKENS
    att_flops = m.heads * (m.pf_qk + m.pf_v) * isl * isl * m.L  # causal: isl^2/2 scores x 2 FLOPs x (qk + v)
    exps = m.heads * isl * isl / 2 * m.L
    t_attn = np.maximum(att_flops / (g * apeak), exps / (g * exp_rate))
    t_elem = p.nongemm_bytes * (m.h * 6 + m.inter * 2) * isl * m.L / (g * hbm)
    t_comm = np.where(tp > 1, 2 * m.L * isl * m.h * ACTIVATION_BYTES * 2 * (tp - 1) / tp / (nvl * ring_share(s, tp))
                      / pp, 0.0)
    if m.w.is_moe:
        gs = g / pp
        link = np.where(gs <= s.nvlink_domain_gpus, nvl * all_to_all_share(s, gs), nic)
        a2a = isl * m.k * imbalance * m.h * (DISPATCH_BYTES + ACTIVATION_BYTES) * (gs - 1) / gs / gs / link
        t_comm = t_comm + np.where((gs > 1) & ~expert_tp, a2a * m.moe_layers / pp * moe, 0.0)
    t_fixed = (m.L * p.layer_overhead_s * general + m.moe_layers * p.moe_layer_overhead_s * moe) / pp
    return np.maximum(t_gemm, t_weights) + t_attn + t_elem + t_comm + t_fixed
