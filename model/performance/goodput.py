"""Goodput at scale: the fraction of wall time that advances training, given failures and checkpoints.

Interruption rate: Meta's Llama 3 405B pretraining saw 419 unexpected interruptions in 54 days on 16,384 H100 GPUs
(Dubey et al., "The Llama 3 Herd of Models", https://arxiv.org/abs/2407.21783, section 3.3.4). We treat that as a
rate per GPU-hour, so a synchronous job's mean time between failures M falls as 1 / GPUs (any GPU's failure stops
it).

With checkpoint cost C, restart cost R and Poisson failures, the expected wall time per interval tau of useful work is
M e^(R/M) (e^((tau + C)/M) - 1) (J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
dumps", Future Generation Computer Systems 22 (2006) 303-312, https://doi.org/10.1016/j.future.2004.11.016): failures
may strike during work, checkpoints and restarts alike. Its first-order expansion, 1 - C/tau - (tau/2 + R)/M at Young's
interval tau = sqrt(2 C M), holds only while C, R and tau are small against M; at ~10**5 GPUs M is minutes, the
expansion goes to zero or below and would make a larger cluster slower than it is. The exact cost is used at Daly's
higher-order optimum interval, so goodput falls smoothly with scale and never reaches zero: the size beyond which
more GPUs train no faster is where the restarts they cause cost more than they add (M of the order of R), an outcome
of the failure rate and R, not of the formula.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

LLAMA3_INTERRUPTIONS = 419
LLAMA3_DAYS = 54.0
LLAMA3_GPUS = 16_384
INTERRUPTIONS_PER_GPU_HOUR = LLAMA3_INTERRUPTIONS / (LLAMA3_DAYS * 24.0 * LLAMA3_GPUS)


@dataclass(frozen=True)
class GoodputAssumptions:
    """Documented assumptions (not fitted): checkpoint and restart costs."""

    interruptions_per_gpu_hour: float = INTERRUPTIONS_PER_GPU_HOUR
    checkpoint_fixed_s: float = 20.0
    """Blocking part of a checkpoint (quiesce, snapshot to host memory); asynchronous writes hide the rest."""
    checkpoint_gb_s_per_gpu: float = 1.0
    """Rate at which each GPU's shard of the training state is snapshotted (GB/s)."""
    restart_s: float = 300.0
    """Detect the failure, reschedule, reload the last checkpoint and warm up (Meta reports minutes, not hours)."""


DEFAULT_GOODPUT = GoodputAssumptions()


def mtbf_s(gpus: int, assumptions: GoodputAssumptions = DEFAULT_GOODPUT) -> float:
    """Mean time between job interruptions, in seconds, for a job on `gpus` GPUs."""
    return 3600.0 / (assumptions.interruptions_per_gpu_hour * max(gpus, 1))


def checkpoint_s(state_gb_per_gpu: float, assumptions: GoodputAssumptions = DEFAULT_GOODPUT) -> float:
    """Blocking cost of one checkpoint; every GPU writes its own shard in parallel."""
    return assumptions.checkpoint_fixed_s + state_gb_per_gpu / assumptions.checkpoint_gb_s_per_gpu


def checkpoint_interval_s(checkpoint_cost_s: float, mtbf: float) -> float:
    """Daly's higher-order estimate of the optimum compute time between checkpoints (Daly 2006): Young's
    sqrt(2 C M) with its next terms, or M itself once a checkpoint costs more than 2 M."""
    if checkpoint_cost_s >= 2.0 * mtbf:
        return mtbf
    ratio = checkpoint_cost_s / (2.0 * mtbf)
    return math.sqrt(2.0 * checkpoint_cost_s * mtbf) * (1.0 + math.sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint_cost_s


def goodput_fraction(gpus: int, state_gb_per_gpu: float = 1.0,
                     assumptions: GoodputAssumptions = DEFAULT_GOODPUT) -> float:
    """Useful fraction of wall time, in (0, 1], at Daly's checkpoint interval: tau over the expected wall time of an
    interval, M e^(R/M) (e^((tau + C)/M) - 1). Worked in logarithms so that no size overflows; the smallest positive
    float at worst, so that days stay finite."""
    mtbf = mtbf_s(gpus, assumptions)
    cost = checkpoint_s(state_gb_per_gpu, assumptions)
    interval = checkpoint_interval_s(cost, mtbf)
    log_wall = math.log(mtbf) + assumptions.restart_s / mtbf + math.log(math.expm1((interval + cost) / mtbf))
    return float(min(1.0, max(sys.float_info.min, math.exp(math.log(interval) - log_wall))))
