"""The capability table: what one GPU of each system delivers on the reference jobs, and how long a frontier run
takes on a cluster, as plain numbers the market looks up.

The table is filled by `model.capability.build` from the performance model; the market only reads it. Frontier
run days are kept as a grid that is filled on demand (cell by cell, each cell one question to the performance
model) and memoised, so a run pays only for the cells it uses and later runs in the process pay nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SystemValue:
    """Throughput per GPU of a system on the reference jobs, relative to one GPU of HGX H100 on the same job."""

    training: float
    serving: tuple[float, ...]  # one per reference serving job, in the scenario's order


FrontierOracle = Callable[[str, int, float], float | None]  # (system, gpus, flop) -> days, None if it cannot run


@dataclass
class FrontierDays:
    """Days to train a frontier run of a given FLOP on one cluster of a given number of GPUs of a system.

    `oracle(system, gpus, flop)` is asked at grid points only: cluster sizes that are powers of two and FLOP at
    quarter powers of two; answers are memoised."""

    oracle: FrontierOracle
    cells: dict[tuple[str, int, float], float | None] = field(default_factory=dict)

    def cell(self, system: str, gpus: int, flop: float) -> float | None:
        key = (system, gpus, flop)
        if key not in self.cells:
            self.cells[key] = self.oracle(system, gpus, flop)
        return self.cells[key]

    def days(self, system: str, gpus: int, flop: float) -> float | None:
        """The run on the cluster floored to a power of two and at the nearest FLOP on a grid of quarter powers of
        two, scaled linearly to the cluster and to `flop`."""
        if gpus <= 0:
            return None
        step = round(math.log2(flop) * 4) / 4
        rounded = 1 << (max(int(gpus), 1).bit_length() - 1)
        days = self.cell(system, rounded, float(2.0**step))
        return None if days is None else days * flop / 2.0**step * rounded / gpus


@dataclass(frozen=True)
class CapabilityTable:
    """Per system: value per GPU on the reference jobs (relative to HGX H100) and frontier-run days by cluster."""

    values: Mapping[str, SystemValue]
    serve_weights: tuple[float, ...]  # weights of the reference serving jobs
    frontier: FrontierDays
    reference_flop: float  # the scenario's reference frontier run

    def training_ratio(self, system: str) -> float:
        """Training throughput per GPU on the reference training job, relative to HGX H100."""
        return self.values[system].training

    def value_per_gpu(self, system: str, training_weight: float) -> float:
        """What one GPU of `system` delivers, in HGX H100 GPUs, on a mix of the reference training job (weight
        `training_weight`) and the serving jobs (the rest, split by their own weights)."""
        value = self.values[system]
        total = sum(self.serve_weights)
        serve = sum(w * r for w, r in zip(self.serve_weights, value.serving, strict=True)) / total
        return training_weight * value.training + (1 - training_weight) * serve

    def frontier_run_days(self, system: str, gpus: int, flop: float) -> float | None:
        """Days to train a frontier run of `flop` on one cluster of `gpus` GPUs of `system` (None if it cannot)."""
        return self.frontier.days(system, gpus, flop)

    def reference_run_days(self, system: str, gpus: int) -> float | None:
        """Days for the scenario's reference frontier run on one cluster."""
        return self.frontier.days(system, gpus, self.reference_flop)
