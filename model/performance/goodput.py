"""Goodput at scale: the fraction of wall time that advances training, given failures and checkpoints.

Interruption rate: Meta's Llama 3 405B pretraining saw 419 unexpected interruptions in 54 days on 16,384 H100 GPUs
(Dubey et al., "The Llama 3 Herd of Models", https://arxiv.org/abs/2407.21783, section 3.3.4). We treat that as a
rate per GPU-hour, so a job's mean time between failures falls as 1 / GPUs.

With checkpoint write cost C and mean time between failures M, the Young/Daly optimal checkpoint interval is
tau = sqrt(2 C M); each failure also costs a restart R and, on average, half an interval of lost work.
"""

from __future__ import annotations

import math
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


def goodput_fraction(gpus: int, state_gb_per_gpu: float = 1.0,
                     assumptions: GoodputAssumptions = DEFAULT_GOODPUT) -> float:
    """Useful fraction of wall time, in (0, 1], at the Young/Daly checkpoint interval."""
    mtbf = mtbf_s(gpus, assumptions)
    cost = checkpoint_s(state_gb_per_gpu, assumptions)
    interval = math.sqrt(2.0 * cost * mtbf)
    lost = cost / interval + (0.5 * interval + assumptions.restart_s) / mtbf
    return float(min(1.0, max(1e-3, 1.0 - lost)))
