"""Serving estimates: the best output tokens/s per GPU at a latency target, aggregated or disaggregated, and the
whole throughput-versus-interactivity frontier (pure numpy, no Mesa, no I/O).

The search covers model instances (GPUs per replica, tensor/pipeline parallelism, data-parallel attention with wide
expert parallelism for MoE) and batch sizes together, as arrays (`serving_physics` gives the times):
- aggregated serving interleaves chunked prefill into decode steps: each step also carries batch / osl requests'
  prefill, so TPOT = decode step + (batch / osl) x prefill time;
- disaggregated serving runs prefill and decode in separate pools (the prefill pool may be another system, such as
  a Rubin CPX context accelerator), the GPU split between them chosen so that neither starves the other; the KV
  cache moves over NVLink when both pools share a domain, else over the scale-out NICs, and adds to TTFT.
Targets: `min_user_tokens_per_s` (TPOT <= 1 / it) and `max_ttft_s` are means; the `server` and `interactive`
presets use MLPerf's p99 limits with a p99/mean factor and Poisson load. `date` (YYYY-MM) is the software release
(None: mature software). Parameters are global and fitted (`params`, `python -m model.performance.calibrate`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np

from model.errors import InputError
from model.hardware.systems import System, get_system
from model.hardware.workloads import Workload, get_workload
from model.performance import era
from model.performance.batch import serve_batch  # noqa: F401 - importable from here as before
from model.performance.params import (
    SERVE_HBM_RESERVED_GB,
    SERVE_HBM_USABLE,
    SERVER_LOAD,
    ServeParams,
    fitted,
)
from model.performance.serving_physics import Model, decode_step, prefill_time

AMORTISATION_YEARS = 4.0  # straight-line capex amortisation for the per-dollar figure (no opex, full utilisation)
MAX_BATCH_PER_GPU = 1024  # engine limit on concurrent sequences per GPU (TensorRT-LLM / vLLM max batch)
BATCH_POINTS = 40
PRECISIONS = ("bf16", "fp8", "nvfp4")
SCENARIOS = ("offline", "server", "interactive")
DISAGGREGATE_MARGIN = 1.02  # disaggregate only when it beats aggregated serving by more than 2%

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


@dataclass(frozen=True)
class ServeResult:
    """Best serving configuration found. Throughputs are output tokens; latencies are means (limits use p99 in the
    presets)."""

    feasible: bool
    reason: str
    system: str
    gpus: int
    workload: str
    precision: str
    scenario: str
    output_tokens_per_s: float = 0.0
    output_tokens_per_s_per_gpu: float = 0.0
    user_tokens_per_s: float = 0.0
    ttft_s: float = math.inf
    tpot_s: float = math.inf
    tokens_per_s_per_mw: float = 0.0  # per MW of system power (the GPUs' share of their systems)
    tokens_per_s_per_usd_year: float = 0.0  # per USD/year of capex, price_usd_mid over AMORTISATION_YEARS
    software_date: str | None = None
    prefill_system: str | None = None
    layout: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready (infinities become None), with the DESIGN.md keys."""
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, float) and not math.isfinite(value):
                out[key] = None
        return out


@dataclass(frozen=True)
class _Options:
    """Every evaluated configuration, flattened: one element per (mode, layout, batch[, prefill layout])."""

    thr_gpu: np.ndarray  # output tokens/s per GPU of the whole cluster
    tpot: np.ndarray
    ttft: np.ndarray
    disagg: np.ndarray
    layouts: list[dict]  # one dict per element (built lazily by index)
    make_layout: object


def _pow2_upto(n: int) -> list[int]:
    return [1 << i for i in range(int(math.log2(max(1, n))) + 1)]


@lru_cache(maxsize=1024)
def _instances(s: System, gpus: int, w: Workload) -> np.ndarray:
    """(tp, pp, g) rows: instance sizes are powers of two or the NVLink domain; TP inside the domain; pipeline
    stages only beyond a full domain; MoE instances spread experts over each stage (tp = 1: data-parallel
    attention)."""
    sizes = set(_pow2_upto(gpus))
    if s.nvlink_domain_gpus <= gpus:
        sizes.add(s.nvlink_domain_gpus)
    rows = []
    for g in sorted(sizes):
        for pp in _pow2_upto(g):
            gs = g // pp
            if g % pp or pp > max(1, w.layers // 4):
                continue
            if pp > 1 and gs < min(s.nvlink_domain_gpus, g):
                continue  # pipeline only across full NVLink domains
            tps = [t for t in _pow2_upto(min(gs, s.nvlink_domain_gpus, w.heads)) if gs % t == 0]
            if not w.is_moe:
                tps = [t for t in tps if t == gs]  # dense: the whole stage is one TP group
            for tp in tps:
                rows.append((tp, pp, g))
    out = np.array(rows, dtype=float) if rows else np.zeros((0, 3))
    out.flags.writeable = False  # cached and shared
    return out


def _factors(s: System, date: str | None, p: ServeParams) -> tuple[float, float]:
    general = 1.0 + p.era_amplitude * era.general_immaturity(s, date, p.era_tau_months)
    moe = 1.0 + p.moe_era_amplitude * era.moe_immaturity(date, p.moe_era_tau_months, fitted()[2].reference_date,
                                                   fitted()[2].moe_earliest_date)
    return general, moe


def _memory_ok(s: System, m: Model, tp, pp, g, batch, ctx) -> np.ndarray:
    gs = g / pp
    weights = m.weight_bytes_gpu(tp, pp, gs)
    if m.w.is_moe:
        rep = np.where(tp == 1, 1.0, tp if m.w.uses_mla else tp / np.minimum(tp, m.kv_heads))
    else:
        rep = tp / np.minimum(tp, m.kv_heads)
    kv = batch * ctx * m.kv_token * rep / g
    return weights + kv <= (s.hbm_gb * SERVE_HBM_USABLE - SERVE_HBM_RESERVED_GB) * 1e9


def _evaluate(system: str, gpus: int, wl: Workload, precision: str, isl: int, osl: int, date: str | None,
              prefill_system: str | None, p: ServeParams) -> _Options | str:
    """All aggregated and disaggregated options (or a reason why none exists)."""
    sd = get_system(system)
    sp = get_system(prefill_system) if prefill_system else sd
    for s in (sd, sp):
        if s.dense_tflops(precision) is None:
            return f"{s.key} does not support {precision}"
    m = Model(wl, precision)
    m.ctx = isl + osl / 2.0  # mean context held in the (paged) KV cache during decode
    gen_d, moe_d = _factors(sd, date, p)
    gen_p, moe_p = _factors(sp, date, p)

    lay = _instances(sd, gpus, wl)
    if not len(lay):
        return "no instance layout"
    tp, pp, g = lay[:, 0:1], lay[:, 1:2], lay[:, 2:3]
    batch = np.unique(np.round(np.geomspace(1, MAX_BATCH_PER_GPU * gpus, BATCH_POINTS)))[None, :]
    ok = (batch <= MAX_BATCH_PER_GPU * g) & (batch >= pp) & _memory_ok(sd, m, tp, pp, g, batch, m.ctx)
    if not ok.any():
        need = wl.params_total * m.bw / 1e9
        return (f"does not fit: {need:.0f} GB of {precision} weights plus KV for one {int(m.ctx)}-token sequence "
                f"exceed {gpus} x {sd.hbm_gb:.0f} GB HBM")
    stage, _ = decode_step(sd, m, precision, tp, pp, g, batch / pp, p, gen_d, moe_d)
    tpot_dec = pp * stage + p.step_overhead_s * gen_d
    replicas = np.floor(gpus / g)

    # Aggregated: prefill on the same instances, interleaved.
    t_pf = prefill_time(sd, m, precision, tp, pp, g, float(isl), p, gen_d, moe_d)
    lat_pf = t_pf * (1 + (pp - 1) / 4.0)  # chunked prefill pipelines over stages in ~4 chunks
    tpot_agg = tpot_dec + batch * t_pf / osl
    thr_agg = np.where(ok, replicas * batch / tpot_agg / gpus, 0.0)
    ttft_agg = lat_pf + tpot_agg

    # Disaggregated: prefill instances of the prefill system; decode instances as above.
    play = _instances(sp, gpus, wl)
    pool_options = []
    if len(play) and gpus >= 2:
        ptp, ppp, pg = play[:, 0], play[:, 1], play[:, 2]
        pfits = _memory_ok(sp, m, ptp, ppp, pg, 1.0, float(isl))
        pt = prefill_time(sp, m, precision, ptp, ppp, pg, float(isl), p, gen_p, moe_p)
        plat = pt * (1 + (ppp - 1) / 4.0)
        rate = 1.0 / (pt * pg)  # requests/s per prefill GPU
        for i in np.flatnonzero(pfits):
            # a prefill layout that another beats on rate per GPU, latency and size (KV links) is never chosen
            beaten = pfits & (rate >= rate[i]) & (plat <= plat[i]) & (pg <= pg[i]) & (
                (rate > rate[i]) | (plat < plat[i]) | (pg < pg[i]))
            if not beaten.any():
                pool_options.append((int(ptp[i]), int(ppp[i]), int(pg[i]), float(pt[i]), float(plat[i])))
    kv_bytes = isl * m.kv_token
    dec_gpu = np.where(ok, batch / tpot_dec / g, 0.0)  # decode output tokens/s per decode GPU
    best_dis = np.zeros_like(thr_agg)
    ttft_dis = np.full_like(thr_agg, np.inf)
    pick = np.full(thr_agg.shape, -1)
    nparts = np.zeros_like(thr_agg)
    for k, (_ptp, _ppp, pg_i, pt_i, plat_i) in enumerate(pool_options):
        same_domain = sp is sd and pg_i + g <= sd.nvlink_domain_gpus
        nic = min(sp.scaleout_gbit_s * pg_i, 1e30) / 8 * 1e9 * p.net_eff
        link = np.where(same_domain, sd.nvlink_gb_s / 2 * 1e9 * p.net_eff * np.minimum(pg_i, g),
                        np.minimum(nic, sd.scaleout_gbit_s / 8 * 1e9 * p.net_eff * g))
        t_kv = kv_bytes / link
        pf_gpu = osl / pt_i / pg_i  # output tokens/s of demand one prefill GPU feeds
        pf_gpu = np.minimum(pf_gpu, link / kv_bytes * osl / pg_i)  # KV transfers must keep up
        share = (1 / pf_gpu) / (1 / pf_gpu + 1 / np.maximum(dec_gpu, 1e-30))
        n_pf = np.maximum(1.0, np.round(share * gpus / pg_i))
        n_dec = np.floor((gpus - n_pf * pg_i) / g)
        thr = np.where((n_dec >= 1) & ok, np.minimum(n_pf * pg_i * pf_gpu, n_dec * g * dec_gpu) / gpus, 0.0)
        ttft = plat_i + t_kv + tpot_dec
        better = thr > best_dis
        best_dis = np.where(better, thr, best_dis)
        ttft_dis = np.where(better, ttft, ttft_dis)
        pick = np.where(better, k, pick)
        nparts = np.where(better, n_pf, nparts)

    shape = thr_agg.shape

    def make_layout(index: int) -> dict:
        disagg, rest = divmod(index, shape[0] * shape[1])
        i, j = divmod(rest, shape[1])
        dtp, dpp, dg = int(tp[i, 0]), int(pp[i, 0]), int(g[i, 0])
        b = int(batch[0, j])
        ep = dg // dpp if wl.is_moe else 1
        decode = {"tp": dtp, "pp": dpp, "ep": ep, "dp_attention": bool(wl.is_moe and dtp == 1),
                  "gpus_per_instance": dg, "batch_per_instance": b}
        if not disagg:
            r = int(gpus // dg)
            decode["instances"] = r
            return {"tp": dtp, "pp": dpp, "ep": ep, "dp": r, "replicas": r, "batch": b, "disaggregated": False,
                    "prefill_gpus": r * dg, "decode_gpus": r * dg, "prefill_system": sd.key, "decode": decode}
        ptp_k, ppp_k, pg_k, _, _ = pool_options[int(pick[i, j])]
        n_p = int(nparts[i, j])
        n_d = int((gpus - n_p * pg_k) // dg)
        decode["instances"] = n_d
        prefill = {"tp": ptp_k, "pp": ppp_k, "ep": pg_k // ppp_k if wl.is_moe else 1, "gpus_per_instance": pg_k,
                   "instances": n_p, "dp_attention": bool(wl.is_moe and ptp_k == 1)}
        return {"tp": dtp, "pp": dpp, "ep": ep, "dp": n_d, "replicas": n_d, "batch": b, "disaggregated": True,
                "prefill_gpus": n_p * pg_k, "decode_gpus": n_d * dg, "prefill_system": sp.key,
                "prefill": prefill, "decode": decode}

    thr = np.concatenate([thr_agg.ravel(), best_dis.ravel()])
    tpot = np.concatenate([tpot_agg.ravel(), np.broadcast_to(tpot_dec, shape).ravel()])
    ttft = np.concatenate([np.broadcast_to(ttft_agg, shape).ravel(), ttft_dis.ravel()])
    disagg = np.concatenate([np.zeros(thr_agg.size, bool), np.ones(thr_agg.size, bool)])
    if prefill_system and sp is not sd:  # a separate prefill system means disaggregated serving only
        thr = np.where(disagg, thr, 0.0)
    return _Options(thr, tpot, ttft, disagg, [], make_layout)


def _limits(wl: Workload, scenario: str, ttft: float | None, tpot: float | None) -> tuple[float, float]:
    if scenario == "offline":
        return (ttft or math.inf, tpot or math.inf)
    key = "llama2-70b" if wl.key.startswith("llama2-70b") else wl.key
    default = LATENCY_LIMITS_S.get((key, scenario), GENERIC_LIMITS_S[scenario])
    return (ttft or default[0], tpot or default[1])


def _check(system, gpus, workload, precision, input_tokens, output_tokens, scenario, date, prefill_system):
    sys_ = get_system(system)
    wl = get_workload(workload)
    precision = "nvfp4" if precision == "fp4" else precision
    if prefill_system is not None:
        get_system(prefill_system)
    if date is not None:
        era.months(date)
    ids = dict(system=sys_.key, gpus=gpus, workload=wl.key, precision=precision, scenario=scenario,
               software_date=date, prefill_system=prefill_system)
    if scenario not in SCENARIOS:
        return None, f"unknown scenario {scenario!r}; expected one of {', '.join(SCENARIOS)}", ids
    if precision not in PRECISIONS:
        return None, f"unknown precision {precision!r}; expected bf16, fp8 or nvfp4", ids
    if gpus < 1 or input_tokens < 1 or output_tokens < 1:
        return None, "gpus, input_tokens and output_tokens must be positive", ids
    return (sys_, wl, precision), "", ids


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
    min_user_tokens_per_s: float | None = None,
    max_ttft_s: float | None = None,
    prefill_system: str | None = None,
) -> ServeResult:
    """Best output tokens/s of `gpus` GPUs of `system` serving `workload` at a latency target.

    `offline` maximises throughput; `server`/`interactive` maximise it under MLPerf's p99 TTFT and TPOT limits
    (or `ttft_limit_s`/`tpot_limit_s`). `min_user_tokens_per_s` (slowest acceptable 1/TPOT for one user) and
    `max_ttft_s` are mean targets that replace the preset's limits. `prefill_system` puts prefill on another
    system's GPUs (disaggregated); `gpus` then counts both pools. `date` (YYYY-MM) picks the software era."""
    return estimate_uncached(system, gpus, workload, precision, input_tokens, output_tokens, scenario, date,
                             ttft_limit_s, tpot_limit_s, min_user_tokens_per_s, max_ttft_s, prefill_system)


def estimate_uncached(system: str, gpus: int, workload: str | Workload, precision: str, input_tokens: int,
                      output_tokens: int, scenario: str = "offline", date: str | None = None,
                      ttft_limit_s: float | None = None, tpot_limit_s: float | None = None,
                      min_user_tokens_per_s: float | None = None, max_ttft_s: float | None = None,
                      prefill_system: str | None = None, params: ServeParams | None = None) -> ServeResult:
    """`serve_estimate` without the cache, for any parameter set (the calibration uses it)."""
    p = params or fitted()[1]
    checked, reason, ids = _check(system, gpus, workload, precision, input_tokens, output_tokens, scenario, date,
                                  prefill_system)
    if checked is None:
        return ServeResult(feasible=False, reason=reason, **ids)
    sys_, wl, precision = checked
    user_target = min_user_tokens_per_s is not None or max_ttft_s is not None
    if user_target:
        for name, value in (("min_user_tokens_per_s", min_user_tokens_per_s), ("max_ttft_s", max_ttft_s)):
            if value is not None and not value > 0:
                raise InputError(f"{name}: expected a positive number, got {value!r}")
        ttft_lim = max_ttft_s or math.inf
        tpot_lim = 1.0 / min_user_tokens_per_s if min_user_tokens_per_s else math.inf
        tail, load = 1.0, 1.0
    else:
        ttft_lim, tpot_lim = _limits(wl, scenario, ttft_limit_s, tpot_limit_s)
        tail = 1.0 if scenario == "offline" else p.latency_tail
        load = 1.0 if scenario == "offline" else SERVER_LOAD
    opts = _evaluate(sys_.key, gpus, wl, precision, input_tokens, output_tokens, date, prefill_system, p)
    if isinstance(opts, str):
        return ServeResult(feasible=False, reason=opts, **ids)
    meets = (opts.tpot * tail <= tpot_lim) & (opts.ttft * tail <= ttft_lim) & (opts.thr_gpu > 0)
    if not meets.any():
        return ServeResult(feasible=False, reason=f"no layout meets TTFT <= {ttft_lim:.3g} s and TPOT <= "
                                                  f"{tpot_lim:.3g} s" + (" at p99" if tail > 1 else ""), **ids)
    score = np.where(meets, opts.thr_gpu * np.where(opts.disagg, 1.0 / DISAGGREGATE_MARGIN, 1.0), -1.0)
    k = int(np.argmax(score))
    thr = float(opts.thr_gpu[k]) * gpus * load
    share = gpus / sys_.gpus_per_system
    return ServeResult(
        feasible=True, reason="", **ids,
        output_tokens_per_s=thr, output_tokens_per_s_per_gpu=thr / gpus, user_tokens_per_s=1.0 / float(opts.tpot[k]),
        ttft_s=float(opts.ttft[k]), tpot_s=float(opts.tpot[k]),
        tokens_per_s_per_mw=thr / (sys_.system_power_kw * share / 1000.0),
        tokens_per_s_per_usd_year=thr / (sys_.price_usd_mid * share / AMORTISATION_YEARS),
        layout=opts.make_layout(k),
    )


@lru_cache(maxsize=1024)
def serve_pareto(system: str, gpus: int, workload: str | Workload, precision: str, input_tokens: int,
                 output_tokens: int, date: str | None = None, max_ttft_s: float | None = None,
                 prefill_system: str | None = None) -> tuple[dict, ...]:
    """The throughput-versus-interactivity frontier: configurations no other beats on both output tokens/s per GPU
    and tokens/s per user (1 / TPOT), fastest users first. Raises InputError on bad input or if none is feasible."""
    checked, reason, _ = _check(system, gpus, workload, precision, input_tokens, output_tokens, "offline", date,
                                prefill_system)
    if checked is None:
        raise InputError(reason)
    sys_, wl, precision = checked
    opts = _evaluate(sys_.key, gpus, wl, precision, input_tokens, output_tokens, date, prefill_system, fitted()[1])
    if isinstance(opts, str):
        raise InputError(opts)
    valid = (opts.thr_gpu > 0) & (opts.ttft <= (max_ttft_s or math.inf))
    idx = np.flatnonzero(valid)
    if not len(idx):
        raise InputError(f"no configuration of {wl.key} on {gpus} {sys_.key} GPUs meets TTFT <= {max_ttft_s} s")
    user = 1.0 / opts.tpot[idx]
    order = idx[np.lexsort((-opts.thr_gpu[idx], -user))]  # fastest users first, then highest throughput
    frontier, best = [], -1.0
    for k in order:
        if opts.thr_gpu[k] > best * 1.0001:
            best = float(opts.thr_gpu[k])
            frontier.append({"user_tokens_per_s": 1.0 / float(opts.tpot[k]), "output_tokens_per_s_per_gpu": best,
                             "output_tokens_per_s": best * gpus, "ttft_s": float(opts.ttft[k]),
                             "tpot_s": float(opts.tpot[k]), "disaggregated": bool(opts.disagg[k]),
                             "layout": opts.make_layout(int(k))})
    return tuple(frontier)


def user_tokens_per_s_at_concurrency(system: str, gpus: int, workload: str | Workload, precision: str,
                                     input_tokens: int, output_tokens: int, concurrency: int, date: str | None = None,
                                     params: ServeParams | None = None) -> float:
    """The fastest per-user output rate (1 / TPOT) that `concurrency` requests in flight can get from `gpus` GPUs,
    over layouts, aggregated or disaggregated (0 if none fits). Benchmarks such as InferenceX measure exactly this:
    a configuration loaded with a fixed number of requests; its throughput per GPU is concurrency x rate / GPUs."""
    p = params or fitted()[1]
    sd = get_system(system)
    wl = get_workload(workload)
    precision = "nvfp4" if precision == "fp4" else precision
    if sd.dense_tflops(precision) is None:
        return 0.0
    m = Model(wl, precision)
    m.ctx = input_tokens + output_tokens / 2.0
    gen, moe = _factors(sd, date, p)
    lay = _instances(sd, gpus, wl)
    if not len(lay):
        return 0.0
    tp, pp, g = lay[:, 0:1], lay[:, 1:2], lay[:, 2:3]
    c, isl, osl = float(concurrency), float(input_tokens), float(output_tokens)
    t_pf = prefill_time(sd, m, precision, tp, pp, g, isl, p, gen, moe)
    best = 0.0
    # Aggregated: the requests spread over the replicas; each step also carries its share of prefill.
    busy = np.minimum(np.floor(gpus / g), c)
    b = np.maximum(c / np.maximum(busy, 1.0), pp)
    ok = (busy >= 1) & _memory_ok(sd, m, tp, pp, g, b, m.ctx) & (b <= MAX_BATCH_PER_GPU * g)
    stage, _ = decode_step(sd, m, precision, tp, pp, g, b / pp, p, gen, moe)
    tpot = pp * stage + p.step_overhead_s * gen + b * t_pf / osl
    if ok.any():
        best = float(np.max(np.where(ok, 1.0 / tpot, 0.0)))
    # Disaggregated: n_d decode instances share the requests; the prefill pool (the other GPUs, in the layout with
    # the highest prefill rate per GPU that fits) must keep up with them.
    pfits = _memory_ok(sd, m, tp[:, 0], pp[:, 0], g[:, 0], 1.0, isl)
    if pfits.any():
        per_gpu = np.where(pfits, 1.0 / (t_pf[:, 0] * g[:, 0]), 0.0)
        k = int(np.argmax(per_gpu))
        pg, pt = float(g[k, 0]), float(t_pf[k, 0])
        nd = np.arange(1, min(gpus, concurrency) + 1, dtype=float)[None, :]
        n_p = np.floor((gpus - nd * g) / pg)
        bd = np.maximum(c / nd, pp)
        okd = (n_p >= 1) & _memory_ok(sd, m, tp, pp, g, bd, m.ctx) & (bd <= MAX_BATCH_PER_GPU * g)
        if okd.any():
            stage, _ = decode_step(sd, m, precision, tp, pp, g, bd / pp, p, gen, moe)
            rate = 1.0 / (pp * stage + p.step_overhead_s * gen)
            rate = np.minimum(rate, n_p * osl / (pt * c))  # prefill capacity shared by all requests
            best = max(best, float(np.max(np.where(okd, rate, 0.0))))
    return best
