"""Serving against published measurements: MLPerf Inference v5.1 rows and InferenceX points (fitted), and the
hold-out system-to-system ratios and GB200 points (never fitted). `pytest -s` prints the tables."""

import numpy as np

from model.performance import validation as val
from model.performance.calibrate import ratio_errors, serving_errors
from model.performance.params import fitted

# Bounds a little above the errors of the packaged fit (calibrate --check), so that a change that makes it worse
# fails. The hold-out bounds are regression guards; the hold-out was never fitted.
MLPERF_MEDIAN, MLPERF_P90, MLPERF_WORST = 0.11, 0.32, 0.70
CURVES_MEDIAN, CURVES_P90 = 0.12, 0.80
HOLDOUT_RATIO_MEDIAN, HOLDOUT_DENSE_MEDIAN, HOLDOUT_DENSE_P90, HOLDOUT_CURVE_MEDIAN = 0.14, 0.11, 0.25, 0.33


def _report(rows, label) -> tuple[float, float, float, str]:
    e = np.abs([err for _, _, err in rows])
    lines = [f"{c['case_id'][:62]:62s} {pred:10.2f} {err:+7.1%}" for c, pred, err in rows]
    summary = f"{label}: median {np.median(e):.1%}, p90 {np.percentile(e, 90):.1%}, worst {e.max():.1%}"
    print("\n".join([*lines, summary]))
    return float(np.median(e)), float(np.percentile(e, 90)), float(e.max()), summary


def test_mlperf_inference_calibration_bounds() -> None:
    rows = serving_errors(val.inference_cases(), fitted()[1])
    median, p90, worst, summary = _report(rows, "MLPerf Inference v5.1, output tokens/s")
    assert median <= MLPERF_MEDIAN and p90 <= MLPERF_P90 and worst <= MLPERF_WORST, summary


def test_interactivity_points_calibration_bounds() -> None:
    """Each InferenceX point on the measured upper envelope: throughput per GPU at the measured concurrency."""
    rows = serving_errors(val.frontier_points(val.curve_points()), fitted()[1])
    median, p90, worst, summary = _report(rows, "InferenceX points (H100, H200, B200)")
    assert median <= CURVES_MEDIAN and p90 <= CURVES_P90, summary


def test_holdout_guard() -> None:
    """System-to-system ratios and GB200 points the fit never saw: a regression guard."""
    ratios = ratio_errors(val.serving_ratio_rows(), fitted()[1])
    median, _, _, summary = _report(ratios, "hold-out ratios")
    dense = [r for r in ratios if not r[0]["moe"]]
    dense_median, dense_p90, _, dense_summary = _report(dense, "hold-out ratios, dense")
    assert median <= HOLDOUT_RATIO_MEDIAN, summary
    assert dense_median <= HOLDOUT_DENSE_MEDIAN and dense_p90 <= HOLDOUT_DENSE_P90, dense_summary
    curves = serving_errors(val.curve_points(val.CURVES_HOLDOUT), fitted()[1])
    curve_median, _, _, curve_summary = _report(curves, "hold-out GB200 points")
    assert curve_median <= HOLDOUT_CURVE_MEDIAN, curve_summary
