"""Datacenter sites: where GPUs get power, and what bounds a training cluster.

A site is one campus with facility power online. GPUs are placed into sites after integration, batch by batch;
the GPUs of one architecture in one site form one training cluster, bounded by the scale-out fabric and paced by
its slowest system.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from model.hardware.systems import systems


class Batch(NamedTuple):
    """GPUs of one system that came online together in one site (they retire together)."""

    system: str
    gpus: int
    online_month: int
    facility_kw_per_gpu: float


class Cluster(NamedTuple):
    """A training cluster: the system that paces it and its GPUs."""

    system: str
    gpus: int


@dataclass(eq=False)
class Site:
    """One campus: facility MW online and the batches it powers (a site is itself: equal only to itself).

    `copies` > 1 stands for that many identical sites (the rest of the market fills many small sites alike in a
    month); power, batches and clusters are those of one of them."""

    name: str
    mw: float
    batches: dict[int, list[Batch]] = field(default_factory=dict)  # by online month, oldest first
    used_mw: float = 0.0
    gpus_by_system: dict[str, int] = field(default_factory=dict)
    gpus_by_architecture: dict[str, int] = field(default_factory=dict)
    seq: int = 0  # order of opening within its fleet
    copies: int = 1
    open_rank: int = -1  # order in which it (last) joined the fleet's sites with free power; -1: not among them
    hosting: set[str] = field(default_factory=set)  # architectures under which the fleet indexes it while open
    version: int = 0  # changes whenever its GPUs change (keys its clusters)
    _clusters: tuple[int, list[Cluster]] = (-1, [])

    def free_mw(self) -> float:
        return max(0.0, self.mw - self.used_mw)

    @property
    def empty(self) -> bool:
        return not self.batches

    def gpus_of_architecture(self, architecture: str) -> int:
        return self.gpus_by_architecture.get(architecture, 0)

    def add(self, batch: Batch) -> None:
        """Put a batch online (batches come online in month order)."""
        self.batches.setdefault(batch.online_month, []).append(batch)
        self.used_mw += batch.gpus * batch.facility_kw_per_gpu / 1000.0
        self.gpus_by_system[batch.system] = self.gpus_by_system.get(batch.system, 0) + batch.gpus
        arch = systems()[batch.system].architecture
        self.gpus_by_architecture[arch] = self.gpus_by_architecture.get(arch, 0) + batch.gpus
        self.version += 1

    def retire_older_than(self, month: int) -> list[Batch]:
        """Remove batches that came online before `month`; return them."""
        old: list[Batch] = []
        while self.batches:
            oldest = next(iter(self.batches))
            if oldest >= month:
                break
            old += self.batches.pop(oldest)
        if old:
            catalog = systems()
            for b in old:
                self.used_mw -= b.gpus * b.facility_kw_per_gpu / 1000.0
                self.gpus_by_system[b.system] -= b.gpus
                self.gpus_by_architecture[catalog[b.system].architecture] -= b.gpus
            self.used_mw = max(0.0, self.used_mw)
            self.version += 1
        return old

    def clusters(self, fabric_max_gpus: int, training_ratio: Callable[[str], float]) -> list[Cluster]:
        """The site's training clusters: per architecture, its GPUs (up to the fabric), paced by the member system
        slowest on the reference training job (a synchronous job runs at the pace of its slowest GPUs)."""
        if self._clusters[0] == self.version:
            return self._clusters[1]
        catalog = systems()
        by_arch: dict[str, list[str]] = {}
        for k, g in self.gpus_by_system.items():
            if g > 0:
                by_arch.setdefault(catalog[k].architecture, []).append(k)
        out = [Cluster(min(members, key=training_ratio),
                       min(sum(self.gpus_by_system[k] for k in members), fabric_max_gpus))
               for members in by_arch.values()]
        self._clusters = (self.version, out)
        return out
