"""Systems on their way to a buyer's sites: shipped and in transit, then integrating (burn-in, acceptance).

Bring-up takes longer the more GPUs arrive together: `bring_up_months` gives the months from arrival to ready for
a batch (a few racks come up within the month; tens of thousands of GPUs need weeks of cabling, fabric bring-up and
acceptance)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from model.hardware.systems import systems

DAYS_PER_MONTH = 30.4


def bring_up_months(system: str, gpus: int, days_base: float, days_per_doubling: float) -> int:
    """Whole months from arrival until a batch of `gpus` GPUs of `system` is ready to go online: `days_base` for one
    system, plus `days_per_doubling` per doubling of the batch beyond one system. Arrivals count from the start of
    their month, so a batch ready within 30 days goes online in the month it arrives."""
    systems_in_batch = max(1.0, gpus / systems()[system].gpus_per_system)
    days = days_base + days_per_doubling * math.log2(systems_in_batch)
    return int(days // DAYS_PER_MONTH)


class Shipment(NamedTuple):
    """GPUs of one system and the month they arrive (in transit) or are ready to go online (integrating)."""

    system: str
    gpus: int
    month: int


class Inbound:
    """A buyer's GPUs between NVIDIA and its sites, and how many it has received."""

    def __init__(self, system_keys: tuple[str, ...], transit_months: int,
                 bring_up: Callable[[str, int], int] = lambda system, gpus: 0):
        self.transit_months = transit_months
        self.bring_up = bring_up  # (system, GPUs arriving together) -> months until ready
        self.in_transit: list[Shipment] = []
        self.integrating: list[Shipment] = []
        self.delivered = dict.fromkeys(system_keys, 0)  # GPUs

    def ship(self, system: str, gpus: int, month: int) -> None:
        """GPUs shipped in `month` arrive after the transit time."""
        self.in_transit.append(Shipment(system, gpus, month + self.transit_months))

    def arrive(self, month: int) -> list[Shipment]:
        """Shipments that arrive by `month` start integrating (one batch per system and ready month); they are
        returned."""
        arrived = [x for x in self.in_transit if x.month <= month]
        if not arrived:
            return arrived
        self.in_transit = [x for x in self.in_transit if x.month > month]
        together: dict[str, int] = {}
        for k, gpus, _ in arrived:
            together[k] = together.get(k, 0) + gpus
        for k, gpus, _ in arrived:
            ready = month + self.bring_up(k, together[k])
            self.delivered[k] += gpus
            last = self.integrating[-1] if self.integrating else None
            if last is not None and last.system == k and last.month == ready:
                self.integrating[-1] = Shipment(k, last.gpus + gpus, ready)
            else:
                self.integrating.append(Shipment(k, gpus, ready))
        return arrived

    def waiting(self) -> list[Shipment]:
        """Everything not yet online: integrating, then in transit."""
        return self.integrating + self.in_transit
