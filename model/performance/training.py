"""Training throughput on a cluster: best parallel layout, step time, MFU, memory and time to train.

In the spirit of Calculon / llm-analysis: every candidate layout (TP, PP with interleaving VP, DP with ZeRO-1 or
FSDP, CP, EP, microbatch, full recompute) is evaluated at once with numpy; layouts that do not fit HBM are dropped.

Which ops run at which precision:
- linear layers (QKV/out projections, MLP and expert GEMMs, output logits) run at the job's precision
  (bf16, fp8 or nvfp4 dense peak) times a shape-dependent GEMM efficiency;
- attention (flash attention, QK^T and PV) always runs at the BF16 peak;
- norms, activations, rotary, residuals, quantisation casts and MoE permutes are HBM-bandwidth bound.
Collectives: TP over NVLink; CP and EP over NVLink when their group fits one NVLink domain, else the scale-out NIC;
DP reduce-scatter / all-gather over NVLink if the whole DP group fits one domain, else the NIC (Gb/s per GPU).

Throughput uses the model-FLOPs convention of validation/README.md (recompute not counted).
"""

from __future__ import annotations

import csv
import itertools
import math
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from model.errors import InputError
from model.hardware.systems import System, get_system
from model.hardware.workloads import Workload, custom_workload, get_workload
from model.performance.goodput import checkpoint_s, goodput_fraction

PRECISIONS = ("bf16", "fp8", "nvfp4")


@dataclass(frozen=True)
class Efficiency:
    """The few efficiency constants of the model, fitted once on the calibration CSV (same for every system).

    Fitted with Nelder-Mead on |log(predicted / measured)| over all calibration rows (2026-12-02).
    """

    gemm_eff_max: float = 0.95
    """Fraction of dense BF16 peak a large, well-shaped GEMM reaches."""
    gemm_half_dim: float = 755.0
    """GEMM efficiency saturates as d / (d + half) in the smallest GEMM dimension d (after TP/EP splitting)."""
    lowp_gemm_eff: float = 0.83
    """Relative efficiency of FP8/NVFP4 GEMMs vs BF16 ones (block scales, amax, transposed copies)."""
    attn_eff: float = 0.20
    """Fraction of BF16 peak reached by flash attention (forward + backward)."""
    nongemm_bytes: float = 27.7
    """HBM bytes moved by non-GEMM ops per activation element per layer (fwd + bwd)."""
    quant_bytes: float = 9.9
    """Extra HBM bytes per GEMM-input element for low-precision casts (fwd + bwd)."""
    tp_overlap: float = 0.54
    """Fraction of tensor-parallel communication hidden behind GEMMs (TE comm/GEMM overlap)."""
    ep_overlap: float = 0.04
    """Fraction of expert all-to-all hidden behind compute."""
    dp_overlap: float = 0.51
    """Fraction of the last microbatch's compute that can hide DP reduce-scatter / all-gather."""
    net_eff: float = 0.75
    """Achieved fraction of link bandwidth in collectives."""
    moe_permute_bytes: float = 34.8
    """HBM bytes per routed token-copy element for MoE routing, permute/unpermute and grouped-GEMM padding."""


DEFAULT_EFFICIENCY = Efficiency()

_BYTES_PER_PARAM_STATIC = 2.0 + 4.0  # bf16 weights + fp32 main grads
_BYTES_PER_PARAM_OPTIMIZER = 12.0  # fp32 master weights + Adam m and v
_HBM_USABLE_FRACTION = 0.92
_HBM_RESERVED_GB = 4.0  # CUDA context, NCCL buffers, fragmentation


@dataclass(frozen=True)
class TrainResult:
    """One training estimate. Infeasible jobs carry `feasible=False` and a `reason`, and no numbers."""

    feasible: bool
    reason: str = ""
    tflops_per_gpu: float = 0.0
    step_time_s: float = 0.0
    mfu: float = 0.0
    layout: dict = field(default_factory=dict)
    memory_gb_per_gpu: float = 0.0
    time_to_train_s: float | None = None
    goodput_fraction: float = 1.0
    breakdown: dict = field(default_factory=dict)
    tokens_per_s: float = 0.0
    layouts_evaluated: int = 0

    def to_dict(self) -> dict:
        """JSON-ready: the DESIGN.md keys first (`tflops_per_gpu`, `step_time_s`, `mfu`, `layout`,
        `memory_gb_per_gpu`, `time_to_train_s`), then extras."""
        out = asdict(self)
        keys = ("tflops_per_gpu", "step_time_s", "mfu", "layout", "memory_gb_per_gpu", "time_to_train_s")
        ordered = {k: out.pop(k) for k in keys}
        ordered.update(out)
        return ordered


# -- workloads given as text ----------------------------------------------------------------------------------------
_CUSTOM_FIELDS = ("heads", "hidden", "layers", "vocab", "ffn_hidden", "kv_heads")


def resolve_workload(spec: str | Workload) -> Workload:
    """A catalog key, a `Workload`, or `custom: Megatron-Core GPT 1.7B (heads 16, hidden 2048, layers 24, ...)`.

    Custom text follows Megatron GPT: GELU MLP of 4 x hidden and kv_heads = heads unless given.
    """
    if isinstance(spec, Workload):
        return spec
    text = spec.strip()
    if not text.lower().startswith("custom"):
        return get_workload(text)
    found = {name: int(v) for name, v in re.findall(r"\b(" + "|".join(_CUSTOM_FIELDS) + r")[ =:]+(\d+)", text)}
    if "layers" not in found or "hidden" not in found:
        raise InputError(f"workload {spec!r}: custom workloads need at least 'layers N' and 'hidden N'")
    hidden = found["hidden"]
    heads = found.get("heads", max(1, hidden // 128))
    return custom_workload(text, layers=found["layers"], hidden=hidden, heads=heads,
                           vocab=found.get("vocab", 131072), ffn_hidden=found.get("ffn_hidden", 4 * hidden),
                           kv_heads=found.get("kv_heads", heads), mlp="gelu")


# -- candidate layouts ----------------------------------------------------------------------------------------------
def _pow2_upto(limit: int) -> list[int]:
    return [1 << i for i in range(max(limit, 1).bit_length()) if (1 << i) <= limit]


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@lru_cache(maxsize=256)
def _candidates(gpus: int, domain: int, layers: int, heads: int, experts: int, gbs: int,
                seq_len: int) -> dict[str, np.ndarray]:
    """All structurally valid layouts as parallel integer arrays (memory and speed are judged later)."""
    tps = [t for t in _pow2_upto(min(domain, 16)) if heads % t == 0]
    pps = [p for p in _divisors(layers) if p <= 32] + [p for p in (4, 8, 16) if layers % p and p < layers]
    cps = [c for c in _pow2_upto(32) if seq_len % (2 * c) == 0 or c == 1]
    eps = [e for e in _divisors(experts) if e <= 256] if experts else [1]
    mbs = [1, 2, 4, 8]
    vps = [1, 2, 4, 8]
    rows = []
    for tp, pp, cp in itertools.product(tps, sorted(set(pps)), cps):
        model_gpus = tp * pp * cp
        if gpus % model_gpus:
            continue
        dp = gpus // model_gpus
        for mb in mbs:
            if gbs % (dp * mb):
                continue
            m = gbs // (dp * mb)
            for ep, vp in itertools.product(eps, vps):
                if (dp * cp) % ep or (vp > 1 and (pp == 1 or layers % (pp * vp) or m % pp)):
                    continue
                for rc, zero in itertools.product((0, 1), (1, 3)):
                    rows.append((tp, pp, dp, cp, ep, mb, vp, rc, zero, m))
    if not rows:
        return {}
    arr = np.array(rows, dtype=np.int64)
    names = ("tp", "pp", "dp", "cp", "ep", "microbatch", "vp", "recompute", "zero", "m")
    return {name: arr[:, i] for i, name in enumerate(names)}


# -- the physics ----------------------------------------------------------------------------------------------------
def _evaluate(s: System, w: Workload, precision: str, seq_len: int, c: dict[str, np.ndarray],
              eff: Efficiency) -> dict[str, np.ndarray]:
    """Step time (s), breakdown and memory (GB) for every candidate layout at once."""
    tp, pp, dp, cp, ep = (c[k].astype(float) for k in ("tp", "pp", "dp", "cp", "ep"))
    mb, vp, rc, zero, m = (c[k].astype(float) for k in ("microbatch", "vp", "recompute", "zero", "m"))
    h, L = float(w.hidden), float(w.layers)
    bf16_flops = s.dense_tflops("bf16") * 1e12
    gemm_flops_peak = (s.dense_tflops(precision) or 0.0) * 1e12
    lowp = precision != "bf16"
    hbm = s.hbm_tb_s * 1e12
    nvl = s.nvlink_gb_s / 2 * 1e9 * eff.net_eff  # unidirectional bytes/s per GPU
    nic = s.scaleout_gbit_s / 8 * 1e9 * eff.net_eff
    domain = s.nvlink_domain_gpus

    tok = mb * seq_len / cp  # tokens per microbatch per GPU (before TP, which shards the hidden work)
    layers_stage = L / pp

    # Parameters per layer (dense part vs routed experts) and per GPU.
    attn_p = float(w.attention_params_per_layer)
    if w.is_moe:
        n_moe, n_dense = float(w.moe_layers), float(w.dense_layers)
        topk, n_exp = float(w.experts_active), float(w.experts_routed)
        exp_p = float(w.expert_params)
        shared_p = w.experts_shared * exp_p
        dense_mlp_p = float(w.dense_mlp_params_per_layer)
    else:
        n_moe, n_dense, topk, n_exp, exp_p, shared_p = 0.0, L, 0.0, 1.0, 0.0, 0.0
        dense_mlp_p = float(w.dense_mlp_params_per_layer)
    out_p = float(w.vocab * w.hidden)
    nonexpert_params = L * attn_p + n_dense * dense_mlp_p + n_moe * (shared_p + h * n_exp) + 2 * out_p
    expert_params = n_moe * n_exp * exp_p

    # GEMM FLOPs per GPU per microbatch (fwd + bwd = 6 x params x tokens), split by GEMM shape.
    def gemm_eff(dim: np.ndarray | float) -> np.ndarray:
        return eff.gemm_eff_max * dim / (dim + eff.gemm_half_dim)

    def gemm_time(flops: np.ndarray, dim: np.ndarray | float) -> np.ndarray:
        rate = gemm_flops_peak * gemm_eff(dim) * (eff.lowp_gemm_eff if lowp else 1.0)
        return flops / rate

    f_attn = 6 * attn_p * L * tok / tp / pp
    t_attn_proj = gemm_time(f_attn, np.minimum(h / tp, tok))
    f_dense = 6 * dense_mlp_p * n_dense * tok / tp / pp
    t_dense = gemm_time(f_dense, np.minimum(w.ffn_hidden / tp, tok)) if n_dense else 0.0
    t_logit = gemm_time(6 * out_p * tok / tp / pp, np.minimum(h, tok))
    if w.is_moe:
        moe_w = float(w.moe_ffn_hidden)
        tok_per_expert = tok * topk * ep / n_exp
        f_exp = 6 * exp_p * topk * n_moe * tok / tp / pp
        t_exp = gemm_time(f_exp, np.minimum(np.minimum(moe_w, h), tok_per_expert))
        f_shared = 6 * (shared_p + h * n_exp) * n_moe * tok / tp / pp
        t_shared = gemm_time(f_shared, np.minimum(moe_w / tp, tok)) if shared_p else 0.0
    else:
        t_exp = t_shared = 0.0
    t_gemm = t_attn_proj + t_dense + t_logit + t_exp + t_shared

    # Flash attention at BF16 (model FLOPs 6 L s h per token, causal).
    t_flash = 6 * L * seq_len * h * tok / tp / pp / (bf16_flops * eff.attn_eff)

    # Memory-bound elementwise work (norms, activations, residuals, rotary; casts; MoE permutes).
    inter = float(w.ffn_hidden) if not w.is_moe else w.moe_ffn_hidden * (topk + w.experts_shared)
    elems = (8 * h + 2 * inter) * layers_stage * tok / tp
    routed = 4 * topk * h * (n_moe / pp) * tok / tp
    gemm_inputs = (4 * h + 2 * inter) * layers_stage * tok / tp
    t_elem = (eff.nongemm_bytes * elems + eff.moe_permute_bytes * routed
              + (eff.quant_bytes * gemm_inputs if lowp else 0.0)) / hbm

    t_fwd_bwd = t_gemm + t_flash + t_elem
    t_compute = t_fwd_bwd * (1 + rc / 3.0)  # full recompute repeats the forward (1/3 of fwd + bwd)

    # Tensor parallel (sequence parallel): 4 all-gathers + 4 reduce-scatters per layer per microbatch.
    tp_bytes = 8 * (tp - 1) / tp * tok * h * 2 * layers_stage
    t_tp = (1 - eff.tp_overlap) * tp_bytes / nvl
    # Context parallel ring attention: K and V of every other rank, fwd + bwd (x3), overlapped with attention.
    kv_dim = 2.0 * (w.kv_lora_rank + w.qk_rope_head_dim if w.uses_mla else w.kv_heads * w.head_dim_eff)
    cp_bw = np.where(tp * cp <= domain, nvl, nic)
    t_cp_raw = 3 * (cp - 1) * tok * kv_dim * 2 * layers_stage / cp_bw
    t_cp = np.maximum(0.0, t_cp_raw - t_flash) * (cp > 1)
    # Expert all-to-all: dispatch + combine, fwd + bwd.
    if w.is_moe:
        ep_bw = np.where(tp * ep <= domain, nvl, nic)
        a2a_bytes = 4 * (ep - 1) / ep * tok * topk * h * 2 * n_moe / pp / tp
        t_ep = (1 - eff.ep_overlap) * a2a_bytes / ep_bw
    else:
        t_ep = np.zeros_like(tp)

    t_mb = t_compute + t_tp + t_cp + t_ep
    pp_bw = np.where(tp * cp * pp <= domain, nvl, nic)
    t_pp_mb = np.where(pp > 1, 2 * vp * tok * h * 2 / tp / pp_bw, 0.0)
    t_bubble = (pp - 1) / vp * (t_mb + t_pp_mb)
    t_pp = m * t_pp_mb

    # Data parallel: ZeRO-1 reduce-scatters grads and all-gathers params once per step; FSDP does it per
    # microbatch (params gathered fwd + bwd, grads reduce-scattered).
    params_gpu_dense = nonexpert_params / (tp * pp)
    params_gpu_exp = expert_params / (ep * pp)
    dp_exp = dp * cp / ep
    dp_bw = np.where(tp * cp * dp <= domain, nvl, nic)
    grad_bytes = 2.0
    zero1_bytes = 2 * grad_bytes * ((dp * cp - 1) / (dp * cp) * params_gpu_dense
                                    + (dp_exp - 1) / np.maximum(dp_exp, 1) * params_gpu_exp)
    t_dp_zero1 = zero1_bytes / dp_bw
    t_dp_fsdp_mb = 1.5 * zero1_bytes / dp_bw
    window = eff.dp_overlap * t_mb
    fsdp = zero == 3
    t_dp = np.where(fsdp, m * np.maximum(0.0, t_dp_fsdp_mb - window), np.maximum(0.0, t_dp_zero1 - window))

    shard = dp * cp
    t_optimizer = 32.0 * (params_gpu_dense / shard + params_gpu_exp / dp_exp) / hbm

    step = m * t_mb + t_bubble + t_pp + t_dp + t_optimizer

    # Memory per GPU (GB).
    params_gpu = params_gpu_dense + params_gpu_exp
    opt_sharded = _BYTES_PER_PARAM_OPTIMIZER * (params_gpu_dense / shard + params_gpu_exp / dp_exp)
    static = np.where(fsdp, (_BYTES_PER_PARAM_STATIC + _BYTES_PER_PARAM_OPTIMIZER) * params_gpu / shard
                      + 2 * 2 * params_gpu / np.maximum(layers_stage, 1) * 2,  # gathered layers in flight
                      _BYTES_PER_PARAM_STATIC * params_gpu + opt_sharded)
    if lowp:
        static = static + 1.0 * params_gpu / np.where(fsdp, shard, 1.0)
    act_layer = tok / tp * (15 * h + 2 * w.mlp_matrices * inter + 4 * topk * h)  # bytes, flash attn + SP
    act_layer = np.where(rc > 0, tok / tp * 2 * h, act_layer)
    in_flight = np.minimum(m, pp) * (1 + (pp - 1) / (pp * vp))
    work_layer = tok / tp * (15 * h + 2 * w.mlp_matrices * inter)  # one layer recomputed / being processed
    logits = tok / tp * w.vocab * 4.0 * 2
    act = act_layer * layers_stage * in_flight + work_layer + logits
    memory_gb = (static + act) / 1e9

    return {"step_s": step, "memory_gb": memory_gb,
            "compute_s": m * t_compute, "gemm_s": m * t_gemm, "attention_s": m * t_flash,
            "elementwise_s": m * t_elem, "recompute_s": m * t_fwd_bwd * rc / 3.0,
            "tp_comm_s": m * t_tp, "cp_comm_s": m * t_cp, "ep_comm_s": m * t_ep, "pp_comm_s": t_pp,
            "bubble_s": t_bubble, "dp_comm_s": t_dp, "optimizer_s": t_optimizer,
            "state_gb": (_BYTES_PER_PARAM_STATIC + _BYTES_PER_PARAM_OPTIMIZER) * params_gpu / shard / 1e9}


def _hbm_budget_gb(s: System) -> float:
    return s.hbm_gb * _HBM_USABLE_FRACTION - _HBM_RESERVED_GB


def estimate_uncached(s: System, w: Workload, precision: str, seq_len: int, global_batch_seqs: int,
                      gpus: int, tokens: float | None, eff: Efficiency = DEFAULT_EFFICIENCY) -> TrainResult:
    """The search itself; `train_estimate` is the cached front door, this one takes fitted constants."""
    if s.dense_tflops(precision) is None:
        return TrainResult(False, f"{s.key} has no {precision} tensor cores")
    cands = _candidates(gpus, s.nvlink_domain_gpus, w.layers, w.heads, w.experts_routed, global_batch_seqs,
                        seq_len)
    if not cands:
        return TrainResult(False, f"no parallel layout splits {gpus} GPUs and a batch of {global_batch_seqs} "
                                  f"sequences evenly")
    out = _evaluate(s, w, precision, seq_len, cands, eff)
    n = len(cands["tp"])
    fits = out["memory_gb"] <= _hbm_budget_gb(s)
    if not fits.any():
        best_mem = float(out["memory_gb"].min())
        return TrainResult(False, f"{w.key} does not fit: the leanest layout needs {best_mem:.0f} GB per GPU, "
                                  f"{s.key} has {s.hbm_gb:.0f} GB", layouts_evaluated=n)
    step = np.where(fits, out["step_s"], np.inf)
    i = int(np.argmin(step))
    step_s = float(step[i])
    tokens_per_step = global_batch_seqs * seq_len
    tflops = w.flops_per_token(seq_len) * tokens_per_step / step_s / gpus / 1e12
    layout = {k: int(cands[k][i]) for k in ("tp", "pp", "dp", "cp", "ep", "microbatch", "vp")}
    layout["recompute"] = "full" if cands["recompute"][i] else "none"
    layout["sharding"] = "fsdp" if cands["zero"][i] == 3 else "zero1"
    state_gb = float(out["state_gb"][i])
    good = goodput_fraction(gpus, state_gb)
    tts = None if tokens is None else tokens / (tokens_per_step / step_s) / good
    breakdown = {k: float(out[k][i]) for k in ("compute_s", "gemm_s", "attention_s", "elementwise_s",
                                                "recompute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s",
                                                "pp_comm_s", "dp_comm_s", "bubble_s", "optimizer_s")}
    breakdown["checkpoint_s"] = checkpoint_s(state_gb)
    return TrainResult(True, "", tflops_per_gpu=tflops, step_time_s=step_s,
                       mfu=tflops / s.dense_tflops(precision), layout=layout,
                       memory_gb_per_gpu=float(out["memory_gb"][i]), time_to_train_s=tts,
                       goodput_fraction=good, breakdown=breakdown, tokens_per_s=tokens_per_step / step_s,
                       layouts_evaluated=n)


@lru_cache(maxsize=4096)
def train_estimate(system: str, gpus: int, workload: str | Workload, precision: str, seq_len: int,
                   global_batch_seqs: int, tokens: float | None = None) -> TrainResult:
    """Best layout and its throughput for one training job. Bad input raises InputError; a job that cannot run
    returns `feasible=False` with the reason."""
    if precision not in PRECISIONS:
        raise InputError(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    for name, value in (("gpus", gpus), ("seq_len", seq_len), ("global_batch_seqs", global_batch_seqs)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise InputError(f"{name}: expected a positive whole number, got {value!r}")
    if tokens is not None and tokens <= 0:
        raise InputError(f"tokens: expected a positive number, got {tokens!r}")
    return estimate_uncached(get_system(system), resolve_workload(workload), precision, seq_len,
                             global_batch_seqs, gpus, tokens)


def _int(text: str, name: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{name}: expected a whole number, got {text!r}") from None
    if value != int(value):
        raise InputError(f"{name}: expected a whole number, got {text!r}")
    return int(value)


def train_batch(csv_path: str | Path) -> list[dict]:
    """One result dict per CSV row, in order; a row that cannot be evaluated gets `error` instead of numbers."""
    results: list[dict] = []
    with Path(csv_path).open(newline="") as handle:
        for row in csv.DictReader(handle):
            base = {k: row.get(k) for k in ("system", "gpus", "workload", "precision", "seq_len",
                                            "global_batch_seqs", "tokens")}
            try:
                tokens_text = (row.get("tokens") or "").strip()
                result = train_estimate(
                    (row.get("system") or "").strip(), _int(row.get("gpus") or "", "gpus"),
                    (row.get("workload") or "").strip(), (row.get("precision") or "").strip(),
                    _int(row.get("seq_len") or "", "seq_len"),
                    _int(row.get("global_batch_seqs") or "", "global_batch_seqs"),
                    float(tokens_text) if tokens_text else None)
                results.append({**base, **result.to_dict()})
            except (InputError, ValueError, KeyError) as exc:
                results.append({**base, "error": str(exc)})
    return results


# -- the market's question -------------------------------------------------------------------------------------------
FRONTIER_SEQ_LEN = 8192
FRONTIER_MIN_BATCH_TOKENS = 16 * 1024 * 1024  # Llama 3 405B's 16M-token batches (arXiv 2407.21783)
# Compute-optimal batch size grows with compute: B_opt = 0.2920 * C^0.3271 tokens (DeepSeek LLM scaling laws,
# https://arxiv.org/abs/2401.02954, section 3.1).
BATCH_COEFF, BATCH_EXPONENT = 0.2920, 0.3271


def frontier_batch_seqs(flop: float) -> int:
    """Global batch in sequences for a run of `flop`: the compute-optimal batch, at least 16M tokens, as a power
    of two in sequences so that data-parallel layouts divide it."""
    tokens = max(FRONTIER_MIN_BATCH_TOKENS, BATCH_COEFF * flop**BATCH_EXPONENT)
    return 1 << int(math.log2(tokens / FRONTIER_SEQ_LEN))


@lru_cache(maxsize=4096)
def frontier_run_days(system: str, gpus: int, flop: float, precision: str = "fp8") -> float | None:
    """Days to train a compute-optimal dense model of `flop` total model FLOPs (N = sqrt(FLOP/120), 20 N tokens,
    seq 8192, compute-optimal batches) on a cluster of `gpus`, goodput included; None if no layout fits.

    A lab need not use every GPU of the cluster: when failures or the batch limit make the whole cluster slower
    than part of it, the best of the cluster, a half and a quarter of it is taken."""
    params = math.sqrt(flop / 120.0)
    w = custom_workload(f"frontier-{params / 1e9:.0f}b", params_b=params / 1e9)
    gbs = frontier_batch_seqs(flop)
    s = get_system(system)
    if s.dense_tflops(precision) is None:
        precision = "fp8"
    tokens = flop / w.flops_per_token(FRONTIER_SEQ_LEN)
    best = None
    for used in (gpus, gpus // 2, gpus // 4):
        if used < s.gpus_per_system:
            continue
        result = train_estimate(system, used, w, precision, FRONTIER_SEQ_LEN, gbs)
        if result.feasible:
            days = tokens / result.tokens_per_s / result.goodput_fraction / 86400.0
            best = days if best is None else min(best, days)
            if result.goodput_fraction >= 0.5:
                break  # half the GPUs would need more than twice the goodput to be faster
    return best


# -- calibration data -------------------------------------------------------------------------------------------------
def calibration_cases(csv_path: str | Path) -> list[dict]:
    """Rows of training_calibration.csv with a usable target and batch.

    Where the batch column is empty it comes from the layout text: `batch N` (Megatron tables) or `16M tokens/batch`
    (Llama 3 paper). The target is `step_tflops_per_gpu`, else `e2e_tflops_per_gpu`.
    """
    cases = []
    with Path(csv_path).open(newline="") as handle:
        for row in csv.DictReader(handle):
            seq = int(float(row["seq_len"]))
            gbs_text = row["global_batch_seqs"].strip()
            if gbs_text:
                gbs = int(float(gbs_text))
            elif found := re.search(r"batch (\d+)", row["workload"] + " " + row["layout"]):
                gbs = int(found.group(1))
            elif found := re.search(r"(\d+)M tokens/batch", row["layout"]):
                gbs = int(found.group(1)) * 1024 * 1024 // seq
            else:
                continue
            target = row["step_tflops_per_gpu"].strip() or row["e2e_tflops_per_gpu"].strip()
            cases.append({"case_id": row["case_id"], "system": row["system"], "gpus": int(row["gpus"]),
                          "workload": row["workload"], "precision": row["precision"], "seq_len": seq,
                          "global_batch_seqs": gbs, "target_tflops_per_gpu": float(target),
                          "target_kind": "step" if row["step_tflops_per_gpu"].strip() else "e2e"})
    return cases
