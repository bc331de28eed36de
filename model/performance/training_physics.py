"""Step time and memory of training layouts, for many layouts at once (numpy arrays, one element per layout).

Which ops run where and at which precision:
- linear layers (QKV/out projections, MLP and expert GEMMs, output logits) run at the job's precision peak times a
  per-precision efficiency and a shape factor d / (d + half) in the smallest GEMM dimension after TP/EP splitting;
  grouped expert GEMMs also lose the padding of each expert's tokens to 128-row tiles;
- attention (flash attention) runs at the BF16 peak, bounded too by the softmax's exponentials on the special
  function units (`attention_exp_tera_per_s`): small heads (64 dims) hit that bound first;
- norms, activations, rotary, residuals, quantisation casts and MoE permutes are HBM-bandwidth bound;
- every layer pays a fixed cost per microbatch (launches, synchronisation).
Communication:
- every collective inside the scale-up domain gets the share of the chip's scale-up bandwidth its wiring allows
  (`topology`: all of it on a switch; one link per peer on a full mesh; rings along the dimensions it spans on a
  torus, all-to-all further divided by the hops its bytes travel);
- TP over NVLink (sequence parallel), partly hidden behind GEMMs;
- expert all-to-all: dispatch in FP8 when the job trains in FP8/NVFP4 (BF16 otherwise), combine and both backward
  transfers in BF16, split between NVLink (ranks of the EP group inside the NVLink domain) and the scale-out NIC
  (the rest), scaled by the expert load imbalance (max over mean tokens per expert) and partly hidden;
- CP ring attention over NVLink or the NIC, hidden behind attention where it can be;
- data parallel gradient reduce-scatter and parameter all-gather, hierarchical: inside the NVLink domain first,
  then across domains over the NIC on the domain's shard; ring steps across domains pay a per-hop latency per
  gradient bucket unless the fabric reduces in the switches (SHARP), which needs a tree of log2 hops.
Pipeline: the last stage also computes the output logits and the loss; stages get whole (virtual) layers, with the
logits counted as layers of the last stage, so the slowest stage sets the pace: (m + (pp - 1) / vp) slots of it.
Software era (era.py) scales the general overheads and, for MoE, the dispatch/permute/all-to-all overheads.
"""

from __future__ import annotations

import numpy as np

from model.hardware.systems import System
from model.hardware.workloads import Workload
from model.performance.params import DDP_BUCKET_PARAMS, SCALEOUT_LATENCY_S, TrainParams
from model.performance.topology import all_to_all_share, p2p_share, ring_share

BYTES_PER_PARAM_STATIC = 2.0 + 4.0  # bf16 weights + fp32 main grads
BYTES_PER_PARAM_OPTIMIZER = 12.0  # fp32 master weights + Adam m and v
GROUPED_GEMM_TILE = 128.0  # rows per tile of a grouped GEMM: each expert's tokens are padded to a multiple


def gemm_efficiency(params: TrainParams, precision: str) -> float:
    """int8 GEMMs (TPU MaxText AQT) are quantised like FP8 ones: the FP8 efficiency and cast costs apply."""
    return {"bf16": params.gemm_eff_bf16, "fp8": params.gemm_eff_fp8, "int8": params.gemm_eff_fp8,
            "nvfp4": params.gemm_eff_fp4}[precision]


def memory_gb(s: System, w: Workload, seq_len: int, c: dict[str, np.ndarray], lowp: bool) -> np.ndarray:
    """Peak HBM per GPU (GB) of each layout, on its most loaded pipeline stage. Independent of fitted parameters,
    so the search can drop layouts that do not fit before timing them."""
    tp, pp, dp, cp, ep = (c[k] for k in ("tp", "pp", "dp", "cp", "ep"))
    mb, vp, rc, zero, m = (c[k] for k in ("microbatch", "vp", "recompute", "zero", "m"))
    h, L = float(w.hidden), float(w.layers)
    tok = mb * seq_len / cp
    nonexpert_layer, expert_layer = _layer_params(w)
    out_p = float(w.vocab * w.hidden)
    layers_stage = np.ceil(L / pp)
    # Most loaded stage: its layers plus the output layer (last stage) or the embedding (first stage).
    dense_gpu = (nonexpert_layer * layers_stage + out_p) / tp
    expert_gpu = expert_layer * layers_stage / ep
    shard = dp * cp
    dp_exp = dp * cp / ep
    fsdp = zero == 3
    params_gpu = dense_gpu + expert_gpu
    opt = BYTES_PER_PARAM_OPTIMIZER * (dense_gpu / shard + expert_gpu / dp_exp)
    static = np.where(fsdp, (BYTES_PER_PARAM_STATIC + BYTES_PER_PARAM_OPTIMIZER) * params_gpu / shard
                      + 2 * 2 * params_gpu / np.maximum(layers_stage, 1) * 2,  # gathered layers in flight
                      BYTES_PER_PARAM_STATIC * params_gpu + opt)
    if lowp:
        static = static + params_gpu / np.where(fsdp, shard, 1.0)  # low-precision weight copies
    inter = _mlp_width(w)
    topk = float(w.experts_active)
    act_layer = tok / tp * (15 * h + 2 * w.mlp_matrices * inter + 4 * topk * h)  # bytes, flash attn + SP
    act_layer = np.where(rc > 0, tok / tp * 2 * h, act_layer)
    in_flight = np.minimum(m, pp) * (1 + (pp - 1) / (pp * vp))
    work_layer = tok / tp * (15 * h + 2 * w.mlp_matrices * inter)
    logits = tok / tp * w.vocab * 4.0 * 2
    return (static + act_layer * layers_stage * in_flight + work_layer + logits) / 1e9


def state_gb(w: Workload, c: dict[str, np.ndarray]) -> np.ndarray:
    """Training state per GPU (GB) that a checkpoint writes: weights, grads, optimizer, sharded as the layout is."""
    tp, pp, dp, cp, ep = (c[k] for k in ("tp", "pp", "dp", "cp", "ep"))
    nonexpert_layer, expert_layer = _layer_params(w)
    layers_stage = np.ceil(w.layers / pp)
    dense_gpu = (nonexpert_layer * layers_stage + w.vocab * w.hidden) / tp
    expert_gpu = expert_layer * layers_stage / ep
    per_param = BYTES_PER_PARAM_STATIC + BYTES_PER_PARAM_OPTIMIZER
    return per_param * (dense_gpu / (dp * cp) + expert_gpu / (dp * cp / ep)) / 1e9


def _layer_params(w: Workload) -> tuple[float, float]:
    """Mean parameters per layer outside routed experts, and in routed experts."""
    L = float(w.layers)
    attn = float(w.attention_params_per_layer) + 2 * w.hidden
    if w.is_moe:
        dense_mlp = w.dense_layers * w.dense_mlp_params_per_layer
        moe_rest = w.moe_layers * (w.experts_shared * w.expert_params + w.hidden * w.experts_routed)
        return attn + (dense_mlp + moe_rest) / L, w.expert_params_total / L
    return attn + float(w.dense_mlp_params_per_layer), 0.0


def _mlp_width(w: Workload) -> float:
    return float(w.ffn_hidden) if not w.is_moe else float(w.moe_ffn_hidden * (w.experts_active + w.experts_shared))


def _attention_dims(w: Workload) -> tuple[float, float, float]:
    """(query/key dim, value dim, heads) of the attention as computed (MLA: no absorption in training)."""
    if w.uses_mla:
        return float(w.qk_nope_head_dim + w.qk_rope_head_dim), float(w.v_head_dim), float(w.heads)
    return float(w.head_dim_eff), float(w.head_dim_eff), float(w.heads)


def step_time(s: System, w: Workload, precision: str, seq_len: int, c: dict[str, np.ndarray], p: TrainParams,
              general: float, moe: float, expert_imbalance: float = 1.0) -> dict[str, np.ndarray]:
    """Step time (s) and its breakdown for every layout. `general` and `moe` are the software-era overhead
    factors (>= 1) from era.py."""
    tp, pp, dp, cp, ep = (c[k] for k in ("tp", "pp", "dp", "cp", "ep"))
    mb, vp, rc, m = (c[k] for k in ("microbatch", "vp", "recompute", "m"))
    fsdp = c["zero"] == 3
    h, L = float(w.hidden), float(w.layers)
    lowp = precision != "bf16"
    bf16_peak = s.dense_tflops("bf16") * 1e12
    gemm_peak = s.dense_tflops(precision) * 1e12 * gemm_efficiency(p, precision) / general
    hbm = s.hbm_tb_s * 1e12
    nvl = s.nvlink_gb_s / 2 * 1e9 * p.net_eff  # unidirectional bytes/s per GPU
    nic = s.scaleout_gbit_s / 8 * 1e9 * p.net_eff
    domain = float(s.nvlink_domain_gpus)
    half = p.gemm_half_dim

    tok = mb * seq_len / cp  # tokens per microbatch per CP rank (TP shards the hidden work)

    def gemm_time(flops, dim):
        return flops * (dim + half) / (dim * gemm_peak)

    # -- one average transformer layer, per microbatch, forward + backward --------------------------------------
    n_moe, n_dense = float(w.moe_layers), float(L - w.moe_layers)
    attn_p = float(w.attention_params_per_layer)
    t_attn_proj = gemm_time(6 * attn_p * tok / tp, np.minimum(h / tp, tok))
    t_mlp = 0.0
    if n_dense:
        t_mlp = n_dense / L * gemm_time(6 * w.dense_mlp_params_per_layer * tok / tp,
                                        np.minimum(w.ffn_hidden / tp, tok))
    t_exp = t_shared = t_permute = t_a2a = 0.0
    if w.is_moe:
        topk, n_exp = float(w.experts_active), float(w.experts_routed)
        slots = tok / tp * topk * expert_imbalance  # token copies the busiest EP rank receives
        tok_expert = slots * ep / n_exp  # tokens per local expert
        padding = tok_expert / (np.ceil(tok_expert / GROUPED_GEMM_TILE) * GROUPED_GEMM_TILE)
        dim = np.minimum(np.minimum(float(w.moe_ffn_hidden), h), tok_expert)
        t_exp = n_moe / L * gemm_time(6 * w.expert_params * slots, dim) / padding
        if w.experts_shared:
            t_shared = n_moe / L * gemm_time(6 * w.experts_shared * w.expert_params * tok / tp,
                                             np.minimum(w.moe_ffn_hidden / tp, tok))
        t_permute = n_moe / L * p.moe_permute_bytes * slots * h * moe / hbm
        dispatch_bytes = 1.0 if lowp else 2.0
        a2a_bytes = slots * h * (dispatch_bytes + 2.0 + 2.0 + 2.0)
        ep_in = np.minimum(ep, np.maximum(1.0, np.floor(domain / tp)))  # EP ranks inside one NVLink domain
        t_a2a_raw = a2a_bytes * ((ep_in - 1) / ep / (nvl * all_to_all_share(s, ep_in, tp))
                                 + (ep - ep_in) / ep / nic)
        t_a2a = n_moe / L * np.minimum(1.0, (1 - p.ep_overlap) * moe) * t_a2a_raw

    d_qk, d_v, heads = _attention_dims(w)
    attn_flops = 3.5 * tok * heads * seq_len * (d_qk + d_v) / tp  # flash attention fwd + bwd (recomputes QK)
    exps = 2.0 * tok * heads * seq_len / 2.0 / tp  # softmax exponentials, forward and backward recompute
    t_flash = np.maximum(attn_flops / (bf16_peak * p.attn_eff / general), exps / (s.attention_exp_tera_per_s * 1e12))

    inter = _mlp_width(w)
    elems = (8 * h + 2 * inter) * tok / tp
    gemm_inputs = (4 * h + 2 * inter) * tok / tp
    t_elem = (p.nongemm_bytes * elems + (p.quant_bytes * gemm_inputs if lowp else 0.0)) * general / hbm

    t_compute_layer = t_attn_proj + t_mlp + t_exp + t_shared + t_flash + t_elem + t_permute
    t_overhead = p.layer_overhead_s * general + n_moe / L * p.moe_layer_overhead_s * moe
    t_compute_layer = t_compute_layer * (1 + rc / 3.0) + t_overhead
    # Tensor parallel (sequence parallel): 4 all-gathers + 4 reduce-scatters per layer per microbatch.
    t_tp = (1 - p.tp_overlap) * 8 * (tp - 1) / tp * tok * h * 2 / (nvl * ring_share(s, tp))
    # Context parallel ring attention: K and V of the other ranks, fwd + bwd (x3), hidden behind attention.
    kv_dim = 2.0 * (w.kv_lora_rank + w.qk_rope_head_dim if w.uses_mla else w.kv_heads * w.head_dim_eff)
    cp_bw = np.where(tp * cp <= domain, nvl * ring_share(s, cp, tp), nic)
    t_cp = np.maximum(0.0, 3 * (cp - 1) * tok * kv_dim * 2 / cp_bw - t_flash) * (cp > 1)
    t_layer = t_compute_layer + t_tp + t_cp + t_a2a

    # Output layer and loss, on the last stage.
    out_p = float(w.vocab * w.hidden)
    t_logit = gemm_time(6 * out_p * tok / tp, np.minimum(h, tok)) + 16.0 * tok * w.vocab / tp / hbm

    # -- pipeline ------------------------------------------------------------------------------------------------
    logit_layers = t_logit / t_layer
    stage_layers = np.where(pp > 1, vp * np.ceil((L + logit_layers) / (pp * vp)), L + logit_layers)
    t_stage = stage_layers * t_layer
    pp_bw = np.where(tp * cp * pp <= domain, nvl * p2p_share(s), nic)
    t_pp_mb = np.where(pp > 1, 2 * vp * tok * h * 2 / tp / pp_bw, 0.0)
    slots = m + (pp - 1) / vp
    t_pipeline = slots * (t_stage + t_pp_mb)

    # -- data parallel: hierarchical reduce-scatter + all-gather ------------------------------------------------
    nonexpert_layer, expert_layer = _layer_params(w)
    layers_stage = np.ceil(L / pp)
    dense_gpu = (nonexpert_layer * layers_stage + out_p) / tp
    expert_gpu = expert_layer * layers_stage / ep
    grad_bytes = 2.0

    def hierarchical(bytes_gpu, group, stride):
        inside = np.minimum(group, np.maximum(1.0, np.floor(domain / stride)))
        outside = group / inside
        t_bw = bytes_gpu * ((inside - 1) / inside / (nvl * ring_share(s, inside, stride))
                            + (outside - 1) / outside / inside / nic)
        hops = 2 * np.log2(np.maximum(outside, 1.0)) if s.scaleout_in_network_reduction else outside - 1
        buckets = np.maximum(1.0, bytes_gpu / grad_bytes / DDP_BUCKET_PARAMS)
        return t_bw + buckets * hops * SCALEOUT_LATENCY_S * (outside > 1)

    dp_dense = dp * cp
    dp_exp = dp * cp / ep
    one_pass = (hierarchical(grad_bytes * dense_gpu, dp_dense, tp)
                + hierarchical(grad_bytes * expert_gpu, dp_exp, tp * ep))  # one reduce-scatter (or all-gather)
    window = p.dp_overlap * t_stage
    t_dp = np.where(fsdp, m * np.maximum(0.0, 3 * one_pass - window), np.maximum(0.0, 2 * one_pass - window))
    t_optimizer = 32.0 * (dense_gpu / dp_dense + expert_gpu / dp_exp) / hbm

    step = t_pipeline + t_dp + t_optimizer
    per_mb_layers = stage_layers * m
    return {"step_s": step, "gemm_s": per_mb_layers * (t_attn_proj + t_mlp + t_exp + t_shared) + m * t_logit,
            "attention_s": per_mb_layers * t_flash, "elementwise_s": per_mb_layers * (t_elem + t_permute),
            "overhead_s": per_mb_layers * t_overhead, "recompute_s": per_mb_layers * (t_compute_layer - t_overhead)
            * rc / (3.0 + rc),
            "tp_comm_s": per_mb_layers * t_tp, "cp_comm_s": per_mb_layers * t_cp, "ep_comm_s": per_mb_layers * t_a2a,
            "pp_comm_s": slots * t_pp_mb, "bubble_s": (pp - 1) / vp * t_stage, "dp_comm_s": t_dp,
            "optimizer_s": t_optimizer}
