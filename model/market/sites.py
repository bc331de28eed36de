"""Datacenter sites and construction: where GPUs get power, and what bounds a training cluster.

A site is one campus with facility power online. GPUs are placed into sites after integration; the GPUs of one
system in one site form one training domain (a cluster), bounded by the site's power and the scale-out fabric.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Batch:
    """GPUs of one system that came online together in one site (they retire together)."""

    system: str
    gpus: int
    online_month: int
    facility_kw_per_gpu: float


@dataclass
class Site:
    """One campus: facility MW online and the batches it powers."""

    name: str
    mw: float
    batches: list[Batch] = field(default_factory=list)
    used_mw: float = 0.0
    gpus_by_system: dict[str, int] = field(default_factory=dict)

    def free_mw(self) -> float:
        return max(0.0, self.mw - self.used_mw)

    def gpus_of_architecture(self, architecture: str) -> int:
        from model.hardware.systems import systems

        catalog = systems()
        return sum(g for k, g in self.gpus_by_system.items() if catalog[k].architecture == architecture)

    def add(self, batch: Batch) -> None:
        self.batches.append(batch)
        self.used_mw += batch.gpus * batch.facility_kw_per_gpu / 1000.0
        self.gpus_by_system[batch.system] = self.gpus_by_system.get(batch.system, 0) + batch.gpus

    def retire_older_than(self, month: int) -> list[Batch]:
        """Remove batches that came online before `month`; return them."""
        old = [b for b in self.batches if b.online_month < month]
        if old:
            self.batches = [b for b in self.batches if b.online_month >= month]
            for b in old:
                self.used_mw -= b.gpus * b.facility_kw_per_gpu / 1000.0
                self.gpus_by_system[b.system] -= b.gpus
            self.used_mw = max(0.0, self.used_mw)
        return old
