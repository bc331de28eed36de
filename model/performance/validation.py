"""Readers of the validation data in the repository's `validation/` folder, and error statistics.

Used by `python -m model.performance.calibrate` and by the tests; the model itself never reads these files.
Calibration files feed the fit; `holdout_*` files never do (validation/README.md).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

VALIDATION_DIR = Path(__file__).resolve().parents[2] / "validation"
TRAINING_CALIBRATION = VALIDATION_DIR / "training_calibration.csv"
INFERENCE_CALIBRATION = VALIDATION_DIR / "inference_calibration.csv"
CURVES_CALIBRATION = VALIDATION_DIR / "inference_curves_calibration.csv"
TRAINING_HOLDOUT = VALIDATION_DIR / "holdout_training.csv"
SERVING_RATIOS_HOLDOUT = VALIDATION_DIR / "holdout_serving_ratios.csv"
CURVES_HOLDOUT = VALIDATION_DIR / "holdout_serving_curves.csv"
VENDOR_RUNS = VALIDATION_DIR / "vendor_runs.csv"
VENDOR_SERVING_RATIOS = VALIDATION_DIR / "vendor_serving_ratios.csv"
MOE_WORKLOADS = ("deepseek-v3", "deepseek-r1", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b", "mixtral-8x7b")

# MLPerf Inference benchmark -> (catalog workload, mean input tokens, mean output tokens). Means of the benchmark
# datasets (approximate: OpenOrca for llama2-70b, the 405B long-context mix, CNN/DailyMail for 8B, the Mixtral mix);
# the CSV's avg_output_tokens is used where given.
MLPERF_BENCHMARKS = {
    "llama2-70b-99": ("llama2-70b", 300, 292),
    "llama2-70b-99.9": ("llama2-70b", 300, 292),
    "llama3.1-405b": ("llama3.1-405b", 9400, 650),
    "llama3.1-8b": ("llama3.1-8b", 780, 100),
    "mixtral-8x7b": ("mixtral-8x7b", 150, 146),
}


def _precision(text: str) -> str:
    """The model's precision classes: any 4-bit float format (NVFP4, OCP MXFP4) runs at the FP4 peak."""
    return "nvfp4" if text.strip() in ("fp4", "nvfp4", "mxfp4") else text.strip()


def _month(text: str) -> str | None:
    """A YYYY-MM release month; a bare year (the round's month not captured) means mature software (None)."""
    text = (text or "").strip()
    return text[:7] if re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", text) else None


def training_cases(csv_path: str | Path = TRAINING_CALIBRATION) -> list[dict]:
    """Rows with a usable target and batch. Where the batch column is empty it comes from the layout text:
    `batch N` (Megatron tables) or `16M tokens/batch` (Llama 3 paper). The target is `step_tflops_per_gpu`, else
    `e2e_tflops_per_gpu`."""
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
            step = row.get("step_tflops_per_gpu", "").strip()
            target = step or row.get("e2e_tflops_per_gpu", "").strip()
            workload = row["workload"]
            cases.append({"case_id": row["case_id"], "system": row["system"], "gpus": int(row["gpus"]),
                          "workload": workload, "precision": _precision(row["precision"]), "seq_len": seq,
                          "global_batch_seqs": gbs, "target_tflops_per_gpu": float(target),
                          "target_kind": "step" if step else "e2e", "date": row.get("software_date") or None,
                          "moe": workload in MOE_WORKLOADS})
    return cases


def inference_cases(csv_path: str | Path = INFERENCE_CALIBRATION) -> list[dict]:
    """MLPerf Inference rows: system, GPUs, catalog workload, mean ISL/OSL, scenario, measured output tokens/s."""
    cases = []
    with Path(csv_path).open(newline="") as handle:
        for row in csv.DictReader(handle):
            workload, isl, osl = MLPERF_BENCHMARKS[row["workload"]]
            osl = int(float(row["avg_output_tokens"])) if row["avg_output_tokens"] else osl
            cases.append({"case_id": row["case_id"], "system": row["system"], "gpus": int(row["gpus"]),
                          "workload": workload, "precision": _precision(row["precision"]), "input_tokens": isl,
                          "output_tokens": osl, "scenario": row["scenario"].lower(),
                          "target_tokens_per_s": float(row["tokens_per_s"]), "date": row.get("software_date") or None,
                          "moe": workload in MOE_WORKLOADS})
    return cases


def curve_points(csv_path: str | Path = CURVES_CALIBRATION, spec_decode: str | None = "none") -> list[dict]:
    """InferenceX points: per-GPU output throughput at a measured interactivity (1 / TPOT)."""
    points = []
    with Path(csv_path).open(newline="") as handle:
        for row in csv.DictReader(handle):
            if spec_decode is not None and row["spec_decode"] != spec_decode:
                continue
            points.append({"case_id": row["case_id"], "system": row["system"], "gpus": int(row["gpus"]),
                           "workload": row["workload"], "precision": _precision(row["precision"]),
                           "input_tokens": int(row["input_tokens"]), "output_tokens": int(row["output_tokens"]),
                           "tokens_per_s_per_gpu": float(row["tokens_per_s_per_gpu"]),
                           "concurrency": int(row.get("concurrency") or row["concurrency_or_scenario"].split("=")[1]),
                           "user_tokens_per_s": float(row["interactivity_tok_s_per_user"]),
                           "date": row["run_date"][:7], "disaggregated": row["layout"].startswith("disagg"),
                           "moe": True})
    return points


def frontier_points(points: list[dict]) -> list[dict]:
    """The measured points not beaten on both axes by another point of the same system, precision and ISL/OSL:
    the published sample is a few configurations per curve, and only its upper envelope says what the hardware
    can do at a given interactivity."""
    keep = []
    for p in points:
        key = (p["system"], p["precision"], p["input_tokens"], p["output_tokens"])
        dominated = any(
            (q["system"], q["precision"], q["input_tokens"], q["output_tokens"]) == key and q is not p
            and q["tokens_per_s_per_gpu"] >= p["tokens_per_s_per_gpu"]
            and q["user_tokens_per_s"] >= p["user_tokens_per_s"] for q in points)
        if not dominated:
            keep.append(p)
    return keep


def serving_ratio_rows(csv_path: str | Path = SERVING_RATIOS_HOLDOUT) -> list[dict]:
    """Hold-out serving rows, each with its group's reference row attached."""
    with Path(csv_path).open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    refs = {r["group"]: r for r in rows if r["reference"] == "yes"}
    out = []
    for r in rows:
        if r["reference"] == "yes":
            continue
        ref = refs[r["group"]]

        def job(x: dict) -> dict:
            return {"system": x["system"], "gpus": int(x["gpus"]), "workload": x["workload"],
                    "precision": _precision(x["precision"]), "input_tokens": int(x["input_tokens"]),
                    "output_tokens": int(x["output_tokens"]), "scenario": x["scenario"],
                    "date": x["software_date"] or None, "tokens_per_s_per_gpu": float(x["tokens_per_s_per_gpu"])}

        out.append({"case_id": r["case_id"], "group": r["group"], "row": job(r), "reference": job(ref),
                    "measured_ratio": float(r["tokens_per_s_per_gpu"]) / float(ref["tokens_per_s_per_gpu"]),
                    "moe": r["workload"] in MOE_WORKLOADS})
    return out


@dataclass(frozen=True)
class ErrorStats:
    """|error| statistics of a subset: count, median, 90th percentile, worst (fractions, 0.1 = 10%)."""

    n: int
    median: float
    p90: float
    worst: float

    def line(self, name: str) -> str:
        return f"{name:34s} {self.n:4d} {self.median:8.1%} {self.p90:8.1%} {self.worst:8.1%}"


def stats(abs_errors) -> ErrorStats:
    e = np.asarray(list(abs_errors), dtype=float)
    if not len(e):
        return ErrorStats(0, float("nan"), float("nan"), float("nan"))
    return ErrorStats(len(e), float(np.median(e)), float(np.percentile(e, 90)), float(e.max()))


# -- other vendors (validation/vendor_runs.csv, never fitted) ------------------------------------------------------
def vendor_training_cases(csv_path: str | Path = VENDOR_RUNS) -> list[dict]:
    """Published training runs on TPUs and AMD GPUs with a steady-state TFLOP/s per chip, a global batch and a
    catalog workload (MLPerf GPT-3 on TPU v5p/v6e in int8, Llama 3.1 8B on MI355X in FP8). Rows without a published
    batch (MaxText tables) or with another FLOPs convention (LoRA) are not cases."""
    cases = []
    with Path(csv_path).open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["scenario"] != "training" or not row["step_tflops_per_chip"] or not row["global_batch_seqs"]:
                continue
            cases.append({"case_id": row["case_id"], "system": row["system"], "gpus": int(row["chips"]),
                          "workload": row["workload"], "precision": _precision(row["precision"]),
                          "seq_len": int(float(row["seq_len"])),
                          "global_batch_seqs": int(float(row["global_batch_seqs"])),
                          "target_tflops_per_gpu": float(row["step_tflops_per_chip"]), "target_kind": "step",
                          "date": _month(row["date"]), "moe": row["workload"] in MOE_WORKLOADS,
                          "vendor": row["vendor"]})
    return cases


def vendor_inference_cases(csv_path: str | Path = VENDOR_RUNS) -> list[dict]:
    """MLPerf Inference rows on other vendors' systems whose benchmark has known mean lengths (MLPERF_BENCHMARKS):
    output tokens/s of the whole system, as `inference_cases` gives them."""
    cases = []
    with Path(csv_path).open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["source_type"] != "mlperf_inference" or row["result_unit"] != "tokens/s":
                continue
            if row["workload"] not in MLPERF_BENCHMARKS:
                continue
            workload, isl, osl = MLPERF_BENCHMARKS[row["workload"]]
            cases.append({"case_id": row["case_id"], "system": row["system"], "gpus": int(row["chips"]),
                          "workload": workload, "precision": _precision(row["precision"]), "input_tokens": isl,
                          "output_tokens": osl, "scenario": row["scenario"],
                          "target_tokens_per_s": float(row["result"]),
                          "date": _month(row["date"]), "moe": workload in MOE_WORKLOADS, "vendor": row["vendor"]})
    return cases
