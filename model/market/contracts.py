"""Multi-year capacity contracts between labs and providers.

An announced contract (a scenario input: lab, provider, signing month, value, duration, optional start) becomes a
number of GPUs at signing: its value spread over its duration at the rental price of the newest system shipping
then. What it buys is compute: while active it gives the lab that many H100-equivalents in any one of the
provider's clusters (fewer GPUs of a newer generation, more of an older one), and its remaining value is backlog
the provider can borrow against.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.hardware.systems import systems

HOURS_PER_YEAR = 8760.0


@dataclass(frozen=True)
class Contract:
    lab: str
    provider: str
    signed_month: int
    start_month: int
    end_month: int
    value_usd: float
    gpus: int
    system: str
    usd_per_gpu_hour: float

    @property
    def h100e(self) -> float:
        """The compute the contract buys, in H100-equivalents (GPUs of the system it was priced in)."""
        return self.gpus * systems()[self.system].h100e_per_gpu

    @property
    def annual_cost_usd(self) -> float:
        return self.value_usd * 12.0 / max(self.end_month - self.start_month, 1)

    def active(self, t: int) -> bool:
        return self.start_month <= t < self.end_month

    def remaining_value_usd(self, t: int) -> float:
        """Value not yet served: all of it before the start, then linearly down to zero at the end."""
        if t < self.start_month:
            return self.value_usd
        if t >= self.end_month:
            return 0.0
        return self.value_usd * (self.end_month - t) / (self.end_month - self.start_month)


def contract_from_terms(lab: str, provider: str, signed_month: int, start_month: int, duration_years: float,
                        value_usd: float, system: str, usd_per_gpu_hour: float, gpus: int | None = None) -> Contract:
    """Size a contract in GPUs of `system` from its value, duration and price per GPU-hour (or take `gpus` as
    given, when the value was computed from them)."""
    if gpus is None:
        gpus = int(value_usd / (duration_years * HOURS_PER_YEAR * usd_per_gpu_hour))
    end = start_month + round(duration_years * 12)
    return Contract(lab, provider, signed_month, start_month, end, value_usd, gpus, system, usd_per_gpu_hour)
