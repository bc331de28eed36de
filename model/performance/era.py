"""Software era: how far the software of a given month is from the mature software of an architecture.

The same hardware gets faster for years after it ships (kernels, overlap, fused MoE dispatch, scheduling). The
model says so with one shape for both training and serving: the part of an overhead that software has not yet
removed decays as exp(-months / tau) from a start date, so an overhead factor is `1 + amplitude x immaturity`.

- For general software (GEMM efficiency, elementwise kernels, communication overlap, fixed per-step costs) the start
  is the first shipment of the system's GPU architecture in the catalog (Hopper 2022-10, Blackwell 2024-10, ...):
  software for a new architecture starts immature whatever the calendar says.
- For mixture-of-experts software (token dispatch and combine, permutation, grouped GEMMs) the start is a calendar
  date: fine-grained MoE training and serving at scale became a race after DeepSeek-V3 was published in December
  2024 (https://arxiv.org/abs/2412.19437), and the same Hopper hardware gained 1.7x on Qwen3-30B-A3B training between
  Megatron-Bridge releases 25.11 and 26.04 (validation/training_calibration.csv).

Amplitudes and decay times are fitted on the dated calibration rows (`python -m model.performance.calibrate`).
`date=None` means mature software for the architecture (its overhead gone) and the MoE software of the newest
release in the fitted data (`reference_date` of the parameter file). The MoE curve is steep and its data span little
more than a year, so it is never extrapolated outside that span (`moe_earliest_date` to `reference_date`).
"""

from __future__ import annotations

import math
from functools import cache

from model.errors import InputError
from model.hardware.systems import System, systems

MOE_SOFTWARE_START = "2024-12"  # DeepSeek-V3 technical report, https://arxiv.org/abs/2412.19437


def months(date: str) -> int:
    """Months since year 0 for a YYYY-MM (or YYYY-MM-DD) string."""
    try:
        year, month = int(date[:4]), int(date[5:7])
    except (ValueError, TypeError):
        raise InputError(f"date: expected YYYY-MM, got {date!r}") from None
    if date[4:5] != "-" or not 1 <= month <= 12:
        raise InputError(f"date: expected YYYY-MM, got {date!r}")
    return year * 12 + month - 1


@cache
def architecture_launch(architecture: str) -> str:
    """First shipment of any catalog system of this GPU architecture."""
    return min(s.first_shipment for s in systems().values() if s.architecture == architecture)


def immaturity(date: str | None, start: str, tau_months: float) -> float:
    """Share of the removable overhead still present at `date`: 1 before `start`, decaying with `tau_months`."""
    if date is None:
        return 0.0
    elapsed = months(date) - months(start)
    return 1.0 if elapsed <= 0 else math.exp(-elapsed / max(tau_months, 1e-6))


def general_immaturity(system: System, date: str | None, tau_months: float) -> float:
    return immaturity(date, architecture_launch(system.architecture), tau_months)


def moe_immaturity(date: str | None, tau_months: float, reference_date: str, earliest_date: str) -> float:
    """MoE software immaturity, evaluated inside the span of the fitted MoE data [earliest_date, reference_date]:
    neither extrapolated back before the first MoE measurement nor beyond the newest release."""
    month = date or reference_date
    month = min(max(month[:7], earliest_date), reference_date)
    return immaturity(month, MOE_SOFTWARE_START, tau_months)
