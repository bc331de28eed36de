"""The global parameters of the performance model: fitted ones from `data/fitted_parameters.toml`, written by
`python -m model.performance.calibrate` with the date and the data they came from, and fixed, documented
assumptions. The same values hold for every system and every case; nothing here is per system.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path

from model.errors import InputError

DATA_FILE = Path(__file__).with_name("data") / "fitted_parameters.toml"


@dataclass(frozen=True)
class TrainParams:
    """Training: efficiencies of each kind of work, fitted on validation/training_calibration.csv."""

    gemm_eff_bf16: float = 0.95
    """Fraction of the BF16 tensor peak a large, well-shaped BF16 GEMM reaches."""
    gemm_eff_fp8: float = 0.80
    """Fraction of the FP8 tensor peak a large FP8 GEMM reaches (scales, amax and transposed copies cost more)."""
    gemm_eff_fp4: float = 0.60
    """Fraction of the NVFP4 tensor peak reached by the GEMMs of an NVFP4 recipe (some GEMMs stay in higher
    precision; block scales and the Hadamard transform add work)."""
    gemm_half_dim: float = 750.0
    """GEMM efficiency saturates as d / (d + half) in the smallest GEMM dimension d after TP/EP splitting."""
    attn_eff: float = 0.35
    """Fraction of the BF16 peak flash attention reaches (forward + backward), when the softmax does not bind."""
    nongemm_bytes: float = 28.0
    """HBM bytes moved by norms, activations, residuals and rotary per activation element per layer (fwd + bwd)."""
    quant_bytes: float = 10.0
    """Extra HBM bytes per GEMM-input element for low-precision casts and scales (fwd + bwd)."""
    moe_permute_bytes: float = 35.0
    """HBM bytes per routed token-copy element for routing, permute/unpermute and grouped-GEMM padding."""
    tp_overlap: float = 0.55
    """Fraction of tensor-parallel communication hidden behind GEMMs."""
    ep_overlap: float = 0.30
    """Fraction of expert all-to-all hidden behind compute with mature software."""
    dp_overlap: float = 0.50
    """Fraction of the last microbatch's compute that can hide data-parallel reduce-scatter / all-gather."""
    net_eff: float = 0.75
    """Achieved fraction of link bandwidth in collectives."""
    layer_overhead_s: float = 40e-6
    """Fixed cost per layer per microbatch (kernel launches, synchronisation, small ops), forward + backward."""
    moe_layer_overhead_s: float = 150e-6
    """Extra fixed cost per MoE layer per microbatch, forward + backward: router, token counts copied to the host
    for dropless grouped GEMMs, many small kernels."""
    era_amplitude: float = 0.3
    """Extra overhead of brand-new software for a new GPU architecture (0.3 = 30% slower work), see era.py."""
    era_tau_months: float = 12.0
    """Decay time of that extra overhead, in months after the architecture's first shipment."""
    moe_era_amplitude: float = 1.0
    """Extra MoE overhead (dispatch, permutation, exposed all-to-all) of the MoE software of December 2024."""
    moe_era_tau_months: float = 9.0
    """Decay time of that MoE overhead, in months."""


@dataclass(frozen=True)
class ServeParams:
    """Serving: efficiencies per phase and precision, fitted on MLPerf Inference v5.1 and InferenceX points."""

    mem_eff: float = 0.80
    """Achieved fraction of HBM bandwidth when decode streams weights and KV cache."""
    gemm_eff_bf16: float = 0.75
    """Fraction of the BF16 tensor peak reached by large (prefill) GEMMs."""
    gemm_eff_fp8: float = 0.65
    """Fraction of the FP8 tensor peak reached by large FP8 GEMMs."""
    gemm_eff_fp4: float = 0.50
    """Fraction of the NVFP4 tensor peak reached by large NVFP4 GEMMs."""
    gemm_half_m: float = 64.0
    """GEMM efficiency falls as M / (M + half) with M tokens per GEMM (small decode batches, small experts)."""
    attn_eff: float = 0.40
    """Fraction of the attention precision's peak (FP8 with an FP8 KV cache, else BF16) reached by attention."""
    nongemm_bytes: float = 12.0
    """HBM bytes per activation element per layer for norms, activations, residuals and quantisation (forward)."""
    step_overhead_s: float = 2e-3
    """Fixed cost per decode step: scheduling, sampling, host-device synchronisation."""
    layer_overhead_s: float = 5e-6
    """Fixed cost per layer per forward pass (kernel launches within a CUDA graph, small ops)."""
    moe_layer_overhead_s: float = 30e-6
    """Extra fixed cost per MoE layer per forward pass: routing, the dispatch and combine kernels' own latency
    (synchronisation across the expert-parallel group), independent of the bytes moved."""
    net_eff: float = 0.70
    """Achieved fraction of link bandwidth in serving collectives."""
    nvlink_latency_s: float = 8e-6
    """Latency of one small collective (all-reduce, dispatch or combine) inside an NVLink domain."""
    scaleout_latency_s: float = 30e-6
    """Latency of one small collective across the scale-out network (decode steps pay it per layer)."""
    expert_imbalance: float = 1.3
    """Systematic skew of real routing (serving does not force balance): tokens of the busiest expert-parallel rank
    over the mean when batches are large. Small batches add the random excess of the busiest of n ranks,
    sqrt(2 ln n / tokens per rank) (serving_physics.routing_imbalance)."""
    latency_tail: float = 1.6
    """p99 over mean for TTFT and TPOT under MLPerf's Poisson arrivals (server and interactive presets)."""
    era_amplitude: float = 0.5
    """Extra overhead of brand-new serving software for a new GPU architecture, see era.py."""
    era_tau_months: float = 10.0
    """Decay time of that extra overhead, in months after the architecture's first shipment."""
    moe_era_amplitude: float = 1.0
    """Extra MoE serving overhead (dispatch, grouped GEMMs, expert-parallel load balance) of December 2024 software."""
    moe_era_tau_months: float = 8.0
    """Decay time of that MoE overhead, in months."""


@dataclass(frozen=True)
class FitRecord:
    """Where the fitted values came from: the day of the fit, the data files (and their hashes), the objective."""

    fitted_on: str = ""
    objective: str = ""
    reference_date: str = "2026-08"
    """Newest software release in the fitted data: `date=None` means this month's MoE software (no extrapolation
    beyond the data) and mature software for every GPU architecture."""
    moe_earliest_date: str = "2025-08"
    """Oldest software release of a mixture-of-experts row in the fitted data: earlier months get its MoE era."""
    data: tuple[tuple[str, str, int], ...] = ()


# -- fixed assumptions (documented, not fitted) -------------------------------------------------------------------
SCALEOUT_LATENCY_S = 20e-6
"""Training: per ring step of a data-parallel collective across InfiniBand / Ethernet."""
DDP_BUCKET_PARAMS = 40e6
"""Gradient bucket of Megatron's distributed optimizer (about 40M parameters), one collective per bucket."""
HBM_USABLE_FRACTION = 0.92
"""Training: HBM left to the job after the CUDA context and allocator fragmentation."""
HBM_RESERVED_GB = 4.0
"""Training: NCCL buffers and workspaces."""
SERVE_HBM_USABLE = 0.97
"""Serving: HBM fraction the engine may fill with weights and KV cache (TensorRT-LLM fills up to 0.95 of what the
weights leave)."""
SERVE_HBM_RESERVED_GB = 3.0
"""Serving: runtime, CUDA graphs and activation workspace per GPU."""
SERVER_LOAD = 0.95
"""Sustainable utilisation under Poisson arrivals relative to offline at the same batch (server presets)."""


def _values(cls, table: dict, where: str):
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(table) - names)
    if unknown:
        raise InputError(f"{where}: unknown parameter(s) {', '.join(unknown)}; expected {', '.join(sorted(names))}")
    for key, value in table.items():
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise InputError(f"{where}: parameter {key!r}: expected a number >= 0, got {value!r}")
    return cls(**{k: float(v) for k, v in table.items()})


def load(path: Path | str = DATA_FILE) -> tuple[TrainParams, ServeParams, FitRecord]:
    """Read a parameter file; a missing file gives the defaults (the starting point of a fit)."""
    path = Path(path)
    if not path.exists():
        return TrainParams(), ServeParams(), FitRecord()
    with path.open("rb") as handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{path}: not valid TOML ({exc})") from None
    fit = data.get("fit", {})
    record = FitRecord(fitted_on=str(fit.get("fitted_on", "")), objective=str(fit.get("objective", "")),
                       reference_date=str(fit.get("reference_date", FitRecord.reference_date)),
                       moe_earliest_date=str(fit.get("moe_earliest_date", FitRecord.moe_earliest_date)),
                       data=tuple((d["file"], d["sha256"], int(d["rows"])) for d in fit.get("data", [])))
    return (_values(TrainParams, data.get("training", {}), f"{path} [training]"),
            _values(ServeParams, data.get("serving", {}), f"{path} [serving]"), record)


@cache
def fitted() -> tuple[TrainParams, ServeParams, FitRecord]:
    """The packaged fitted parameters, read once."""
    return load()


def dumps(train: TrainParams, serve: ServeParams, record: FitRecord) -> str:
    """TOML text of a parameter set (the calibration script writes it; no TOML writer is needed)."""
    lines = ["# Written by `python -m model.performance.calibrate`; edit by refitting, not by hand.", "", "[fit]",
             f'fitted_on = "{record.fitted_on}"', f'objective = "{record.objective}"',
             f'reference_date = "{record.reference_date}"', f'moe_earliest_date = "{record.moe_earliest_date}"']
    for file, sha, rows in record.data:
        lines += ["", "[[fit.data]]", f'file = "{file}"', f'sha256 = "{sha}"', f"rows = {rows}"]
    for name, params in (("training", train), ("serving", serve)):
        lines += ["", f"[{name}]"]
        lines += [f"{f.name} = {getattr(params, f.name)!r}" for f in fields(params)]
    return "\n".join(lines) + "\n"
