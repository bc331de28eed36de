"""Training throughput on a cluster: the best parallel layout, step time, MFU, memory and time to train.

In the spirit of Calculon / llm-analysis: every candidate layout (TP, PP with interleaving VP, DP with ZeRO-1 or
FSDP, CP, EP, microbatch, full recompute) is generated (`training_layouts`), its memory checked and its step time
computed (`training_physics`) with numpy, all layouts at once, using the global fitted parameters
(`params`, written by `python -m model.performance.calibrate`) and the software era of the month asked (`era`).

Throughput uses the model-FLOPs convention of validation/README.md (recompute not counted).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np

from model.errors import InputError
from model.hardware.systems import System, get_system
from model.hardware.workloads import Workload, custom_workload, get_workload
from model.performance import era
from model.performance.goodput import checkpoint_s, goodput_fraction
from model.performance.params import HBM_RESERVED_GB, HBM_USABLE_FRACTION, TrainParams, fitted
from model.performance.training_layouts import candidates
from model.performance.training_physics import memory_gb, state_gb, step_time

PRECISIONS = ("bf16", "fp8", "nvfp4", "int8")  # int8: TPU MaxText AQT matmuls (the catalog's int8 peak)
BREAKDOWN = ("gemm_s", "attention_s", "elementwise_s", "overhead_s", "recompute_s", "tp_comm_s", "cp_comm_s",
             "ep_comm_s", "pp_comm_s", "dp_comm_s", "bubble_s", "optimizer_s")


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
    software_date: str | None = None

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


def hbm_budget_gb(s: System) -> float:
    return s.hbm_gb * HBM_USABLE_FRACTION - HBM_RESERVED_GB


def undominated(fits: np.ndarray) -> np.ndarray:
    """Layouts worth timing among those that fit. Candidates come in groups of four that differ only in recompute
    and sharding (none/ZeRO-1, none/FSDP, full/ZeRO-1, full/FSDP; training_layouts builds them so): recompute only
    adds work and FSDP only adds communication, so a variant is timed only if no cheaper variant of its group fits."""
    f = fits.reshape(-1, 4)
    keep = np.empty_like(f)
    keep[:, 0] = f[:, 0]
    keep[:, 1] = f[:, 1] & ~f[:, 0]
    keep[:, 2] = f[:, 2] & ~f[:, 0]
    keep[:, 3] = f[:, 3] & ~(f[:, 0] | f[:, 1] | f[:, 2])
    return keep.ravel()


def era_factors(s: System, date: str | None, p: TrainParams) -> tuple[float, float]:
    """(general, MoE) overhead factors >= 1 of the software of `date` on this system."""
    general = 1.0 + p.era_amplitude * era.general_immaturity(s, date, p.era_tau_months)
    moe = 1.0 + p.moe_era_amplitude * era.moe_immaturity(date, p.moe_era_tau_months, fitted()[2].reference_date,
                                                   fitted()[2].moe_earliest_date)
    return general, moe


def estimate_uncached(s: System, w: Workload, precision: str, seq_len: int, global_batch_seqs: int, gpus: int,
                      tokens: float | None, params: TrainParams | None = None, date: str | None = None,
                      expert_imbalance: float = 1.0) -> TrainResult:
    """The search itself; `train_estimate` is the cached front door, this one takes any parameter set."""
    p = params or fitted()[0]
    if s.dense_tflops(precision) is None:
        return TrainResult(False, f"{s.key} has no {precision} peak in the catalog")
    cands = candidates(gpus, s.nvlink_domain_gpus, w.layers, w.heads, w.experts_routed, global_batch_seqs, seq_len)
    if not cands:
        return TrainResult(False, f"no parallel layout splits {gpus} GPUs and a batch of {global_batch_seqs} "
                                  f"sequences evenly")
    n = len(cands["tp"])
    memory = memory_gb(s, w, seq_len, cands, precision != "bf16")
    fits = memory <= hbm_budget_gb(s)
    if not fits.any():
        return TrainResult(False, f"{w.key} does not fit: the leanest layout needs {float(memory.min()):.0f} GB per "
                                  f"GPU, {s.key} has {s.hbm_gb:.0f} GB", layouts_evaluated=n)
    keep = fits & undominated(fits)
    sub = {k: v[keep] for k, v in cands.items()}
    general, moe = era_factors(s, date, p)
    out = step_time(s, w, precision, seq_len, sub, p, general, moe, expert_imbalance)
    i = int(np.argmin(out["step_s"]))
    step_s = float(out["step_s"][i])
    tokens_per_step = global_batch_seqs * seq_len
    tflops = w.flops_per_token(seq_len) * tokens_per_step / step_s / gpus / 1e12
    layout = {k: int(sub[k][i]) for k in ("tp", "pp", "dp", "cp", "ep", "microbatch", "vp")}
    layout["recompute"] = "full" if sub["recompute"][i] else "none"
    layout["sharding"] = "fsdp" if sub["zero"][i] == 3 else "zero1"
    one = {k: v[i:i + 1] for k, v in sub.items()}
    state = float(state_gb(w, one)[0])
    good = goodput_fraction(gpus, state)
    tts = None if tokens is None else tokens / (tokens_per_step / step_s) / good
    breakdown = {k: float(out[k][i]) for k in BREAKDOWN}
    breakdown["checkpoint_s"] = checkpoint_s(state)
    return TrainResult(True, "", tflops_per_gpu=tflops, step_time_s=step_s, mfu=tflops / s.dense_tflops(precision),
                       layout=layout, memory_gb_per_gpu=float(memory[fits][i]), time_to_train_s=tts,
                       goodput_fraction=good, breakdown=breakdown, tokens_per_s=tokens_per_step / step_s,
                       layouts_evaluated=n, software_date=date)


@lru_cache(maxsize=8192)
def train_estimate(system: str, gpus: int, workload: str | Workload, precision: str, seq_len: int,
                   global_batch_seqs: int, tokens: float | None = None, date: str | None = None,
                   expert_imbalance: float = 1.0) -> TrainResult:
    """Best layout and its throughput for one training job. Bad input raises InputError; a job that cannot run
    returns `feasible=False` with the reason.

    `date` (YYYY-MM) is the software release to assume (None: mature software); `expert_imbalance` is the tokens
    of the busiest expert over the mean (1.0 when balance is forced, as in NVIDIA's benchmarks)."""
    if precision not in PRECISIONS:
        raise InputError(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    for name, value in (("gpus", gpus), ("seq_len", seq_len), ("global_batch_seqs", global_batch_seqs)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise InputError(f"{name}: expected a positive whole number, got {value!r}")
    if tokens is not None and tokens <= 0:
        raise InputError(f"tokens: expected a positive number, got {tokens!r}")
    if not expert_imbalance >= 1.0:
        raise InputError(f"expert_imbalance: expected a number >= 1, got {expert_imbalance!r}")
    if date is not None:
        era.months(date)
    return estimate_uncached(get_system(system), resolve_workload(workload), precision, seq_len, global_batch_seqs,
                             gpus, tokens, date=date, expert_imbalance=expert_imbalance)


# -- the market's question -------------------------------------------------------------------------------------------
FRONTIER_SEQ_LEN = 8192
FRONTIER_MIN_BATCH_TOKENS = 16 * 1024 * 1024  # Llama 3 405B's 16M-token batches (arXiv 2407.21783)
# Compute-optimal batch size grows with compute: B_opt = 0.2920 * C^0.3271 tokens (DeepSeek LLM scaling laws,
# https://arxiv.org/abs/2401.02954, section 3.1).
BATCH_COEFF, BATCH_EXPONENT = 0.2920, 0.3271


def frontier_batch_seqs(flop: float) -> int:
    """Global batch in sequences for a run of `flop`: the compute-optimal batch, at least 16M tokens, as a power
    of two in sequences so that data-parallel layouts divide it. It depends on the run, not on the cluster: a
    larger batch than the run's would buy speed with extra tokens, so more GPUs split the same batch finer."""
    tokens = max(FRONTIER_MIN_BATCH_TOKENS, BATCH_COEFF * flop**BATCH_EXPONENT)
    return 1 << int(math.log2(tokens / FRONTIER_SEQ_LEN))


@dataclass(frozen=True)
class FrontierJob:
    """The run `frontier_run_days` times: a compute-optimal dense model of `flop` (N = sqrt(FLOP/120) parameters,
    20 N tokens), sequences of FRONTIER_SEQ_LEN, the run's global batch."""

    workload: Workload
    global_batch_seqs: int
    tokens: float


def frontier_job(flop: float) -> FrontierJob:
    """The frontier run of `flop` FLOP."""
    params = math.sqrt(flop / 120.0)
    w = custom_workload(f"frontier-{params / 1e9:.0f}b", params_b=params / 1e9)
    return FrontierJob(w, frontier_batch_seqs(flop), flop / w.flops_per_token(FRONTIER_SEQ_LEN))


@lru_cache(maxsize=4096)
def frontier_run_days(system: str, gpus: int, flop: float, precision: str = "fp8",
                      date: str | None = None) -> float | None:
    """Days to train a compute-optimal dense model of `flop` total model FLOPs (`frontier_job`) on a cluster of
    `gpus`, goodput included; None if no layout fits.

    Days stop falling with GPUs where a synchronous job's failures cost more than its extra GPUs add: its mean time
    between failures falls as 1 / GPUs and, once it nears the restart time, goodput (`goodput`) falls faster than
    GPUs grow. For the baseline's 5e26 FLOP that is 2**18 to 2**19 GPUs of NVIDIA's systems (an interruption every
    6-12 minutes at Llama 3's rate against a 5-minute restart), while the batch (134M tokens) still leaves each
    pipeline 16 or more microbatches and a step on twice the GPUs is still over 1.5x faster. A lab need not use
    every GPU of the cluster: when the whole cluster is slower than part of it, the best of the cluster, a half and
    a quarter of it is taken (and `FrontierDays` takes the best of every smaller size), so a cluster past the limit
    reports the days of the limit."""
    job = frontier_job(flop)
    s = get_system(system)
    if s.dense_tflops(precision) is None:
        precision = "fp8"
    best = None
    for used in (gpus, gpus // 2, gpus // 4):
        if used < s.gpus_per_system:
            continue
        result = train_estimate(system, used, job.workload, precision, FRONTIER_SEQ_LEN, job.global_batch_seqs,
                                date=date)
        if result.feasible:
            days = job.tokens / result.tokens_per_s / result.goodput_fraction / 86400.0
            best = days if best is None else min(best, days)
            if result.goodput_fraction >= 0.5:
                break  # half the GPUs would need more than twice the goodput to be faster
    return best


def __getattr__(name: str):
    """Batch I/O moved to `batch` and the validation readers to `validation`; these names stay importable from
    here for callers of the first generation (lazy: both modules import this one)."""
    if name == "train_batch":
        from model.performance import batch

        return batch.train_batch
    if name == "calibration_cases":
        from model.performance import validation

        return validation.training_cases
    raise AttributeError(name)
