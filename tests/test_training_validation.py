"""Every calibration run: predicted vs published model TFLOP/s per GPU (README convention)."""

from pathlib import Path

import numpy as np

from model.performance.training import calibration_cases, train_estimate

CSV = Path(__file__).resolve().parents[1] / "validation" / "training_calibration.csv"

# Qwen3-30B-A3B rows: the same hardware and model were published at 121 vs 203-206 TFLOP/s (H100) and 547 vs
# 923-936 (GB200) across Megatron-Bridge releases, a 1.7x software spread no single physics model fits within 35%.
# They count towards the median and are held to a looser bound; everything else must be within 35%.
SOFTWARE_SPREAD = "Qwen3_30B_a3B"
SPREAD_BOUND = 0.90


def test_calibration_error_bounds() -> None:
    lines, errors, strict = [], [], []
    for case in calibration_cases(CSV):
        result = train_estimate(case["system"], case["gpus"], case["workload"], case["precision"], case["seq_len"],
                                case["global_batch_seqs"])
        assert result.feasible, f"{case['case_id']}: {result.reason}"
        err = result.tflops_per_gpu / case["target_tflops_per_gpu"] - 1.0
        errors.append(abs(err))
        if SOFTWARE_SPREAD not in case["case_id"]:
            strict.append(abs(err))
        lines.append(f"{case['case_id'][:58]:58s} {case['target_tflops_per_gpu']:8.1f} "
                     f"{result.tflops_per_gpu:8.1f} {err:+7.1%}")
    table = "\n".join([f"{'case':58s} {'measured':>8s} {'predict':>8s} {'error':>7s}", *lines])
    median, worst, worst_strict = float(np.median(errors)), float(np.max(errors)), float(np.max(strict))
    summary = (f"{table}\nmedian |error| {median:.1%}, worst {worst:.1%} over {len(errors)} cases; "
               f"worst outside the {SOFTWARE_SPREAD} software spread {worst_strict:.1%}")
    print(summary)
    assert len(errors) >= 60, summary
    assert median <= 0.15, summary
    assert worst_strict <= 0.35, summary
    assert worst <= SPREAD_BOUND, summary
