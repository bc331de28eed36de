"""Systems on their way to a buyer's sites: shipped and in transit, then integrating (burn-in, acceptance)."""

from __future__ import annotations

from typing import NamedTuple


class Shipment(NamedTuple):
    """GPUs of one system and the month they arrive (in transit) or are ready to go online (integrating)."""

    system: str
    gpus: int
    month: int


class Inbound:
    """A buyer's GPUs between NVIDIA and its sites, and how many it has received."""

    def __init__(self, system_keys: tuple[str, ...], transit_months: int, integration_lag_months: int):
        self.transit_months = transit_months
        self.integration_lag_months = integration_lag_months
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
        ready = month + self.integration_lag_months
        for k, gpus, _ in arrived:
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
