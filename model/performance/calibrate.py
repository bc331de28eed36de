"""Refit the global parameters of the performance model on the calibration data and print the error tables.

    python -m model.performance.calibrate            # refit, write data/fitted_parameters.toml, print errors
    python -m model.performance.calibrate --check    # print the errors of the packaged parameters, fit nothing
    python -m model.performance.calibrate --markdown # the same tables as Markdown (README section)

Training is fitted on validation/training_calibration.csv; serving on validation/inference_calibration.csv and the
upper envelope of validation/inference_curves_calibration.csv (points without speculative decoding). The objective is
the mean |log(predicted / measured)|, dense and MoE rows weighted equally. The hold-out files are never fitted; their
errors are printed apart.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import time
from dataclasses import asdict, replace
from datetime import date as calendar_date
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from model.hardware.systems import get_system
from model.performance import params as params_module
from model.performance import validation as val
from model.performance.params import FitRecord, ServeParams, TrainParams
from model.performance.serving import estimate_uncached as serve_uncached
from model.performance.serving import user_tokens_per_s_at_concurrency
from model.performance.training import (
    era_factors,
    estimate_uncached,
    hbm_budget_gb,
    resolve_workload,
    undominated,
)
from model.performance.training_layouts import candidates
from model.performance.training_physics import memory_gb, step_time

# Bounds of each fitted parameter (physical ranges, not tuned).
TRAIN_BOUNDS = {
    "gemm_eff_bf16": (0.5, 1.0), "gemm_eff_fp8": (0.4, 1.0), "gemm_eff_fp4": (0.3, 1.0), "gemm_half_dim": (50, 3000),
    "attn_eff": (0.1, 0.9), "nongemm_bytes": (2, 80), "quant_bytes": (0, 40), "moe_permute_bytes": (2, 150),
    "tp_overlap": (0, 0.95), "ep_overlap": (0, 0.95), "dp_overlap": (0, 1.0), "net_eff": (0.4, 0.95),
    "layer_overhead_s": (1e-6, 1e-3), "moe_layer_overhead_s": (1e-6, 2e-3), "era_amplitude": (0, 1.5),
    "era_tau_months": (3, 48),
    "moe_era_amplitude": (0, 4), "moe_era_tau_months": (2, 36),
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _to_unit(value: float, lo: float, hi: float) -> float:
    x = min(max((value - lo) / (hi - lo), 1e-6), 1 - 1e-6)
    return math.log(x / (1 - x))


def _from_unit(z: float, lo: float, hi: float) -> float:
    return lo + (hi - lo) / (1 + math.exp(-z))


# -- training --------------------------------------------------------------------------------------------------------
class TrainingProblem:
    """The calibration cases with their layouts that fit in memory (memory does not depend on fitted parameters)."""

    def __init__(self, cases: list[dict]):
        self.cases = []
        for c in cases:
            s, w = get_system(c["system"]), resolve_workload(c["workload"])
            cands = candidates(c["gpus"], s.nvlink_domain_gpus, w.layers, w.heads, w.experts_routed,
                               c["global_batch_seqs"], c["seq_len"])
            mem = memory_gb(s, w, c["seq_len"], cands, c["precision"] != "bf16")
            fits = mem <= hbm_budget_gb(s)
            keep = fits & undominated(fits)
            sub = {k: v[keep] for k, v in cands.items()}
            flops = w.flops_per_token(c["seq_len"]) * c["global_batch_seqs"] * c["seq_len"] / c["gpus"] / 1e12
            self.cases.append((c, s, w, sub, flops))
        self.moe = np.array([c["moe"] for c, *_ in self.cases])

    def predictions(self, p: TrainParams) -> np.ndarray:
        out = np.empty(len(self.cases))
        for i, (c, s, w, sub, flops) in enumerate(self.cases):
            general, moe = era_factors(s, c["date"], p)
            step = step_time(s, w, c["precision"], c["seq_len"], sub, p, general, moe)["step_s"]
            out[i] = flops / float(step.min())
        return out

    def log_errors(self, p: TrainParams) -> np.ndarray:
        target = np.array([c["target_tflops_per_gpu"] for c, *_ in self.cases])
        return np.log(self.predictions(p) / target)

    def objective(self, p: TrainParams) -> float:
        e = np.abs(self.log_errors(p))
        return float(e[~self.moe].mean() + (e[self.moe].mean() if self.moe.any() else 0.0))


def _fit(start, bounds: dict, objective, label: str, rounds: int, max_evaluations: int, verbose: bool):
    """Powell's method on the parameters scaled to [0, 1] within their bounds, restarted for up to `rounds`
    rounds while the objective still improves."""
    names = list(bounds)

    def build(z):
        return replace(start, **{n: _from_unit(v, *bounds[n]) for n, v in zip(names, z, strict=True)})

    z = np.array([_to_unit(getattr(start, n), *bounds[n]) for n in names])
    best = objective(start)
    t0 = time.perf_counter()
    for r in range(rounds):
        res = minimize(lambda x: objective(build(x)), z, method="Powell",
                       options={"maxfev": max_evaluations, "xtol": 1e-3, "ftol": 1e-5})
        z, best_round = res.x, res.fun
        if verbose:
            print(f"{label} fit round {r + 1}: objective {best_round:.4f} ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr)
        if best - best_round < 1e-4:
            break
        best = best_round
    return build(z)


def fit_training(start: TrainParams, rounds: int = 3, verbose: bool = True) -> TrainParams:
    return _fit(start, TRAIN_BOUNDS, TrainingProblem(val.training_cases()).objective, "training", rounds, 4000,
                verbose)


SERVE_BOUNDS = {
    "mem_eff": (0.5, 0.95), "gemm_eff_fp8": (0.3, 1.0), "gemm_eff_fp4": (0.2, 1.0), "gemm_half_m": (4, 512),
    "attn_eff": (0.1, 0.9), "nongemm_bytes": (1, 60), "step_overhead_s": (1e-4, 2e-2),
    "layer_overhead_s": (1e-7, 1e-4), "moe_layer_overhead_s": (1e-7, 5e-4), "net_eff": (0.3, 0.95),
    "latency_tail": (1.0, 3.0),
    "nvlink_latency_s": (2e-6, 3e-5), "scaleout_latency_s": (5e-6, 2e-4), "expert_imbalance": (1.0, 2.5),
    "era_amplitude": (0, 2), "era_tau_months": (2, 36), "moe_era_amplitude": (0, 4), "moe_era_tau_months": (2, 36),
}  # gemm_eff_bf16 is not fitted: no calibration row serves in BF16


# -- serving ---------------------------------------------------------------------------------------------------------
def serving_prediction(case: dict, p: ServeParams | None = None) -> float:
    """Predicted output tokens/s per GPU for a calibration or hold-out case (0 if infeasible). Curve points are
    asked at their measured concurrency (throughput = concurrency x per-user rate / GPUs); MLPerf rows at their
    scenario's preset limits."""
    if "concurrency" in case:
        rate = user_tokens_per_s_at_concurrency(case["system"], case["gpus"], case["workload"], case["precision"],
                                                case["input_tokens"], case["output_tokens"], case["concurrency"],
                                                case["date"], p)
        return case["concurrency"] * rate / case["gpus"]
    else:
        r = serve_uncached(case["system"], case["gpus"], case["workload"], case["precision"], case["input_tokens"],
                           case["output_tokens"], case.get("scenario", "offline"), date=case["date"], params=p)
    return r.output_tokens_per_s_per_gpu if r.feasible else 0.0


def _measured_per_gpu(case: dict) -> float:
    if "tokens_per_s_per_gpu" in case:
        return case["tokens_per_s_per_gpu"]
    return case["target_tokens_per_s"] / case["gpus"]


class ServingProblem:
    """MLPerf Inference rows and the upper envelope of the InferenceX points (no speculative decoding)."""

    def __init__(self):
        self.cases = val.inference_cases() + val.frontier_points(val.curve_points())
        self.moe = np.array([c["moe"] for c in self.cases])
        self.target = np.array([_measured_per_gpu(c) for c in self.cases])

    def log_errors(self, p: ServeParams) -> np.ndarray:
        pred = np.array([serving_prediction(c, p) for c in self.cases])
        return np.log(np.maximum(pred, 1e-9) / self.target)

    def objective(self, p: ServeParams) -> float:
        e = np.minimum(np.abs(self.log_errors(p)), 3.0)
        return float(e[~self.moe].mean() + e[self.moe].mean())


def fit_serving(start: ServeParams, rounds: int = 2, verbose: bool = True) -> ServeParams:
    return _fit(start, SERVE_BOUNDS, ServingProblem().objective, "serving", rounds, 3000, verbose)


# -- error tables ----------------------------------------------------------------------------------------------------
def training_errors(cases: list[dict], p: TrainParams) -> list[tuple[dict, float, float]]:
    """(case, predicted TFLOP/s per GPU, signed error) for every case."""
    out = []
    for c in cases:
        r = estimate_uncached(get_system(c["system"]), resolve_workload(c["workload"]), c["precision"], c["seq_len"],
                              c["global_batch_seqs"], c["gpus"], None, p, date=c["date"])
        pred = r.tflops_per_gpu if r.feasible else 0.0
        out.append((c, pred, pred / c["target_tflops_per_gpu"] - 1.0))
    return out


def subset_lines(rows: list[tuple[dict, float, float]], label: str,
                 keys: tuple[str, ...] = ("precision", "system")) -> list[str]:
    """Error statistics by subset: all, dense, MoE, then each value of `keys` (precision, system; `vendor` is the
    catalog's vendor of the row's system)."""
    rows = [({**c, "vendor": get_system(c["system"]).vendor}, pred, e) for c, pred, e in rows]

    def pick(fn):
        return [abs(e) for c, _, e in rows if fn(c)]

    lines = [f"{label:34s} {'n':>4s} {'median':>8s} {'p90':>8s} {'worst':>8s}"]
    subsets = [("all", lambda c: True), ("dense", lambda c: not c["moe"]), ("MoE", lambda c: c["moe"])]
    for key in keys:
        values = sorted({c[key] for c, *_ in rows})
        subsets += [(f"{key} {x}", lambda c, key=key, x=x: c[key] == x) for x in values]
    for name, keep in subsets:
        errors = pick(keep)
        if errors:
            lines.append(val.stats(errors).line(name))
    return lines


def serving_errors(cases: list[dict], p: ServeParams) -> list[tuple[dict, float, float]]:
    out = []
    for c in cases:
        pred = serving_prediction(c, p)
        out.append((c, pred, pred / _measured_per_gpu(c) - 1.0))
    return out


def ratio_errors(rows: list[dict], p: ServeParams) -> list[tuple[dict, float, float]]:
    """Hold-out serving: (row, predicted ratio to the group's reference, signed error of the ratio)."""
    out = []
    for r in rows:
        pred_row, pred_ref = serving_prediction(r["row"], p), serving_prediction(r["reference"], p)
        ratio = pred_row / pred_ref if pred_ref > 0 else 0.0
        c = {**r["row"], "case_id": r["case_id"], "moe": r["moe"]}
        out.append((c, ratio, ratio / r["measured_ratio"] - 1.0))
    return out


def report(train: TrainParams, serve: ServeParams, markdown: bool = False) -> str:
    sections = []
    for title, path in (("training calibration (fitted)", val.TRAINING_CALIBRATION),
                        ("training hold-out (never fitted)", val.TRAINING_HOLDOUT)):
        rows = training_errors(val.training_cases(path), train)
        sections.append((title, subset_lines(rows, "model TFLOP/s per GPU, |error|")))
    sections.append(("serving calibration: MLPerf Inference v5.1 (fitted)",
                     subset_lines(serving_errors(val.inference_cases(), serve), "output tokens/s, |error|")))
    sections.append(("serving calibration: InferenceX frontier points (fitted)",
                     subset_lines(serving_errors(val.frontier_points(val.curve_points()), serve),
                                  "tokens/s/GPU at interactivity")))
    sections.append(("serving hold-out: ratios to the reference system (never fitted)",
                     subset_lines(ratio_errors(val.serving_ratio_rows(), serve), "per-GPU ratio, |error|")))
    sections.append(("serving hold-out: GB200 InferenceX points (never fitted)",
                     subset_lines(serving_errors(val.curve_points(val.CURVES_HOLDOUT), serve),
                                  "tokens/s/GPU at interactivity")))
    by_vendor = ("vendor", "precision", "system")
    sections.append(("training hold-out: Google TPU and AMD Instinct runs (never fitted)",
                     subset_lines(training_errors(val.vendor_training_cases(), train),
                                  "model TFLOP/s per chip, |error|", by_vendor)))
    sections.append(("serving hold-out: AMD Instinct in MLPerf Inference (never fitted)",
                     subset_lines(serving_errors(val.vendor_inference_cases(), serve), "output tokens/s, |error|",
                                  by_vendor)))
    sections.append(("serving hold-out: AMD Instinct over an NVIDIA system of the same round (never fitted)",
                     subset_lines(ratio_errors(val.serving_ratio_rows(val.VENDOR_SERVING_RATIOS), serve),
                                  "per-GPU ratio, |error|", by_vendor)))
    text = []
    for title, lines in sections:
        if markdown:
            text.append(f"\n**{title}**\n")
            text.append("| subset | n | median | p90 | worst |")
            text.append("|---|---|---|---|---|")
            for line in lines[1:]:
                parts = line.rsplit(None, 4)
                text.append(f"| {parts[0].strip()} | " + " | ".join(parts[1:]) + " |")
        else:
            text.append(f"\n== {title} ==")
            text.extend(lines)
    text.append("\nNo published run with a stated setup exists for AWS Trainium2/Trainium3, TPU v7 Ironwood or AMD "
                "MI450 (validation/README.md): they use the same global parameters, unvalidated.")
    return "\n".join(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.performance.calibrate", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="print errors of the packaged parameters, fit nothing")
    parser.add_argument("--markdown", action="store_true", help="print the error tables as Markdown")
    parser.add_argument("--out", default=str(params_module.DATA_FILE), help="parameter file to write")
    parser.add_argument("--only", choices=("training", "serving"), help="refit one side, keep the other's values")
    args = parser.parse_args(argv)
    train, serve, record = params_module.load()
    if not args.check:
        if args.only != "serving":
            train = fit_training(train)
        if args.only != "training":
            serve = fit_serving(serve)
        files = [val.TRAINING_CALIBRATION, val.INFERENCE_CALIBRATION, val.CURVES_CALIBRATION]
        data = tuple((f"validation/{f.name}", _sha256(f), sum(1 for _ in f.open()) - 1) for f in files)
        dated = val.training_cases() + val.inference_cases() + val.curve_points(spec_decode=None)
        newest = max(c["date"] for c in dated if c["date"])
        moe_oldest = min(c["date"] for c in dated if c["date"] and c["moe"])
        record = FitRecord(fitted_on=calendar_date.today().isoformat(), reference_date=newest,
                           moe_earliest_date=moe_oldest,
                           objective="mean |log(predicted/measured)|, dense and MoE rows weighted equally", data=data)
        Path(args.out).write_text(params_module.dumps(train, serve, record))
        print(f"wrote {args.out}", file=sys.stderr)
        print({k: round(v, 6) for k, v in asdict(train).items()}, file=sys.stderr)
        print({k: round(v, 6) for k, v in asdict(serve).items()}, file=sys.stderr)
    print(report(train, serve, markdown=args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
