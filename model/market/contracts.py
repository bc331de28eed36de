"""Multi-year capacity contracts between labs and providers, and the contract book that holds them.

An announced contract (a scenario input: lab, provider, signing month, value, duration, optional start) becomes a
number of GPUs at signing: its value spread over its duration at the rental price of the newest system shipping
then. What it buys is compute: while active it gives the lab that many H100-equivalents in any one of the
provider's clusters (fewer GPUs of a newer generation, more of an older one), and its remaining value is backlog
the provider can borrow against. Every signed contract is in the book once; the book answers for providers, for
labs and for the market.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass
class ContractBook:
    """Every contract signed, in signing order, indexed by provider and by lab. Contracts that are over count for
    nothing in any question the book answers, so the indexes drop them as months pass (a month's questions then
    cost what the live contracts cost, however long the run)."""

    signed: list[Contract] = field(default_factory=list)
    _by_provider: dict[str, list[Contract]] = field(default_factory=dict)
    _by_lab: dict[str, list[Contract]] = field(default_factory=dict)
    _live: list[Contract] = field(default_factory=list)
    _pruned_month: int = -(10**9)
    _delivered: dict[tuple, list[tuple[Contract, float]]] = field(default_factory=dict)  # this month's answers
    _delivered_month: int = -(10**9)

    def add(self, contract: Contract) -> None:
        self.signed.append(contract)
        self._live.append(contract)
        self._by_provider.setdefault(contract.provider, []).append(contract)
        self._by_lab.setdefault(contract.lab, []).append(contract)

    def __len__(self) -> int:
        return len(self.signed)

    def _prune(self, t: int) -> None:
        """Drop contracts over by month t from the indexes (months only move forward)."""
        if t <= self._pruned_month:
            return
        self._pruned_month = t
        if any(c.end_month <= t for c in self._live):
            self._live = [c for c in self._live if c.end_month > t]
            for index in (self._by_provider, self._by_lab):
                for key, contracts in index.items():
                    index[key] = [c for c in contracts if c.end_month > t]

    def of_provider(self, provider: str, t: int) -> list[Contract]:
        """A provider's contracts not over by month t, in signing order."""
        self._prune(t)
        return self._by_provider.get(provider, [])

    def of_lab(self, lab: str, t: int) -> list[Contract]:
        """A lab's contracts not over by month t, in signing order."""
        self._prune(t)
        return self._by_lab.get(lab, [])

    def backlog_usd(self, provider: str, t: int, signed_by: int) -> float:
        """Value a provider has yet to serve under contracts signed by month `signed_by` (what it can borrow on)."""
        return sum(c.remaining_value_usd(t) for c in self.of_provider(provider, t) if c.signed_month <= signed_by)

    def sold_h100e(self, provider: str, t: int, excluding: str | None = None) -> float:
        """Compute (H100e) a provider has sold under contracts that are signed and not over, `excluding` a lab's."""
        return sum(c.h100e for c in self.of_provider(provider, t) if c.end_month > t and c.lab != excluding)

    def due_h100e(self, provider: str, t: int, by: int) -> float:
        """Compute (H100e) a provider must run for contracts that are running or start by month `by`."""
        return sum(c.h100e for c in self.of_provider(provider, t) if c.start_month <= by and c.end_month > t)

    def held_h100e_by_provider(self, lab: str, t: int) -> dict[str, float]:
        """Compute (H100e) a lab holds under active contracts, by provider."""
        held: dict[str, float] = {}
        for c in self.of_lab(lab, t):
            if c.active(t):
                held[c.provider] = held.get(c.provider, 0.0) + c.h100e
        return held

    def delivered_h100e(self, provider: str, t: int, online_h100e: float) -> list[tuple[Contract, float]]:
        """The provider's active contracts with the compute (H100e) each is actually given in month t: its online
        compute goes to them in signing order, each at most what it bought (a block belongs to one customer, and a
        contract signed when the provider has nothing free gets nothing until it has)."""
        if self._delivered_month != t:
            self._delivered_month, self._delivered = t, {}
        key = (provider, online_h100e, len(self.signed))
        if key not in self._delivered:
            left = online_h100e
            out = []
            for c in self.of_provider(provider, t):
                if c.active(t):
                    given = min(c.h100e, max(0.0, left))
                    left -= given
                    out.append((c, given))
            self._delivered[key] = out
        return self._delivered[key]

    def annual_cost_usd(self, lab: str, t: int) -> float:
        """What a lab's contracts that are not over cost a year."""
        return sum(c.annual_cost_usd for c in self.of_lab(lab, t) if c.end_month > t)

    def active_h100e(self, t: int) -> float:
        """Compute (H100e) all labs hold under active contracts."""
        self._prune(t)
        catalog = systems()
        return sum(c.gpus * catalog[c.system].h100e_per_gpu for c in self._live if c.active(t))
