"""Site readiness for liquid cooling: the part of a buyer's facility power fitted for systems too dense for air.

A system whose rack draws more than air can remove (`liquid_cooling_above_kw_per_rack`) goes online only into
space fitted for liquid cooling (coolant distribution units, facility water loops, manifolds). Fitting space out
is a build decision with a lead time (`liquid_fitout_months`): a buyer fits out when the liquid-cooled systems it
has online, on the way and on order need more than it has ready or under way, so a buyer that ordered early has
space ready early. Fitted space is kept for liquid-cooled systems; air-cooled ones use the rest of the power.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model.hardware.systems import systems


def needs_liquid(system: str, above_kw_per_rack: float) -> bool:
    """Whether a system's rack (or server) draws more than air cooling can remove; a system of several racks is
    cooled rack by rack."""
    return systems()[system].rack_power_kw > above_kw_per_rack


@dataclass
class LiquidCooling:
    """A buyer's facility MW fitted for liquid cooling, ready and under way."""

    fitout_months: int
    ready_mw: float = 0.0
    building: list[tuple[int, float]] = field(default_factory=list)  # (month ready, MW)

    def finish(self, t: int) -> None:
        """Fit-outs due by month t are ready."""
        if not self.building:
            return
        self.ready_mw += sum(mw for month, mw in self.building if month <= t)
        self.building = [(month, mw) for month, mw in self.building if month > t]

    def building_mw(self) -> float:
        return sum(mw for _, mw in self.building)

    def ready_by_mw(self, month: int) -> float:
        """MW fitted by `month`: ready now plus fit-outs that finish by then."""
        return self.ready_mw + sum(mw for m, mw in self.building if m <= month)

    def start(self, t: int, mw: float) -> None:
        """Start fitting out `mw` MW in month t (ready after the lead time)."""
        if mw > 1e-9:
            self.building.append((t + self.fitout_months, mw))
