"""Systems on their way to a buyer's sites: shipped and in transit, then integrating (burn-in, acceptance).

Bring-up takes longer the more GPUs arrive together: `bring_up_months` gives the months from arrival to ready for
a whole batch (a few racks come up within the month; tens of thousands of GPUs need weeks of cabling, fabric
bring-up and acceptance). A batch comes up progressively (`bring_up_schedule`): its first system is ready after
`days_base`, and the systems ready double every `days_per_doubling`, so the whole batch is ready when
`bring_up_months` says while its first racks run as soon as a small buyer's would.

A buyer's arrivals of a month are not one batch: racks go to the sites with power for them, and each site brings up
its share in parallel with the others (its own crews, its own fabric), so a batch is what one site takes
(`Inbound(split=...)`, e.g. `Fleet.bring_up_batches`). Only GPUs meant to form one cluster wait for one another."""

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


def bring_up_schedule(system: str, gpus: int, days_base: float, days_per_doubling: float) -> list[tuple[int, int]]:
    """(whole months from arrival, GPUs ready then) of a batch that comes up progressively: the i-th system of the
    batch is ready `days_base` + `days_per_doubling` x log2(i) days after arrival (so the last one when
    `bring_up_months` says), whole systems, in month order, adding up to `gpus`."""
    per_system = systems()[system].gpus_per_system
    n = max(1, math.ceil(gpus / per_system))
    last = bring_up_months(system, gpus, days_base, days_per_doubling)
    schedule: list[tuple[int, int]] = []
    done = 0
    for month in range(last + 1):
        end_day = (month + 1) * DAYS_PER_MONTH  # systems ready before the month ends go online in it
        if month == last:
            ready = n
        elif end_day <= days_base:
            ready = 0
        elif days_per_doubling <= 0:
            ready = n
        else:
            ready = min(n, math.ceil(2.0 ** ((end_day - days_base) / days_per_doubling)) - 1)
        if ready > done:
            schedule.append((month, min(gpus, ready * per_system) - min(gpus, done * per_system)))
            done = ready
    return [(m, g) for m, g in schedule if g > 0]


class Shipment(NamedTuple):
    """GPUs of one system and the month they arrive (in transit) or are ready to go online (integrating)."""

    system: str
    gpus: int
    month: int


class Inbound:
    """A buyer's GPUs between NVIDIA and its sites, and how many it has received."""

    def __init__(self, system_keys: tuple[str, ...], transit_months: int,
                 bring_up: Callable[[str, int], list[tuple[int, int]]] = lambda system, gpus: [(0, gpus)],
                 split: Callable[[str, int], list[int]] = lambda system, gpus: [gpus]):
        self.transit_months = transit_months
        self.bring_up = bring_up  # (system, GPUs arriving together) -> [(months until ready, GPUs)] (a schedule)
        self.split = split  # (system, GPUs arriving in a month) -> the batches that come up apart (one per site)
        self.in_transit: list[Shipment] = []
        self.integrating: list[Shipment] = []
        self.delivered = dict.fromkeys(system_keys, 0)  # GPUs

    def ship(self, system: str, gpus: int, month: int) -> None:
        """GPUs shipped in `month` arrive after the transit time."""
        self.in_transit.append(Shipment(system, gpus, month + self.transit_months))

    def arrive(self, month: int) -> list[Shipment]:
        """Shipments that arrive by `month` start integrating: each system's arrivals of the month come up as the
        batches `split` gives (one per site, in parallel), merged into one entry per system and ready month; they
        are returned."""
        arrived = [x for x in self.in_transit if x.month <= month]
        if not arrived:
            return arrived
        self.in_transit = [x for x in self.in_transit if x.month > month]
        together: dict[str, int] = {}
        for k, gpus, _ in arrived:
            together[k] = together.get(k, 0) + gpus
            self.delivered[k] += gpus
        by_ready = {(x.system, x.month): x.gpus for x in self.integrating}  # one entry per system and ready month
        for k, gpus in together.items():  # each site's share of a system's arrivals comes up as one batch
            for batch in self.split(k, gpus):
                for after, ready_gpus in self.bring_up(k, batch):
                    by_ready[(k, month + after)] = by_ready.get((k, month + after), 0) + ready_gpus
        self.integrating = [Shipment(k, g, ready) for (k, ready), g in by_ready.items()]
        return arrived

    def waiting(self) -> list[Shipment]:
        """Everything not yet online: integrating, then in transit."""
        return self.integrating + self.in_transit
