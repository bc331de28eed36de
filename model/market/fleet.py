"""A buyer's fleet: sites with power online, the GPUs placed in them, and the training clusters they form.

GPUs that finished integration are placed into sites with free power: first where GPUs of the same architecture
already run (to grow one training cluster, up to the scale-out fabric), then the site with the most free power.
What does not fit waits for power; a buyer whose power is not modelled (the rest of the market) opens sites as it
needs them. A training cluster is the GPUs of one architecture in one site, bounded by the fabric and paced by its
slowest system on the reference training job.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from model.hardware.systems import systems
from model.market.sites import Batch, Site


class Cluster(NamedTuple):
    """A training cluster: the system that paces it and its GPUs."""

    system: str
    gpus: int


class Fleet:
    """Sites and GPUs online of one buyer."""

    def __init__(self, owner: str, pue: float, fabric_max_gpus: int, power_unconstrained: bool,
                 system_keys: tuple[str, ...], training_ratio: Callable[[str], float]):
        self.owner = owner
        self.pue = pue
        self.fabric_max_gpus = fabric_max_gpus
        self.power_unconstrained = power_unconstrained
        self.system_keys = system_keys
        self.training_ratio = training_ratio
        self.sites: list[Site] = []
        self.open_sites: list[Site] = []  # sites with free power (placement looks only here)
        self.retired = dict.fromkeys(system_keys, 0)  # GPUs
        self.placements = 0  # changes whenever GPUs go online or retire (keys caches of clusters)
        catalog = systems()
        self.smallest_unit_mw = min(catalog[k].system_power_kw for k in system_keys) * pue / 1000.0
        self._clusters: tuple[tuple[int, int], list[Cluster]] = ((-1, -1), [])

    # -- power --------------------------------------------------------------------------------------------------
    def new_site(self, mw: float) -> None:
        site = Site(f"{self.owner}-{len(self.sites) + 1}", mw)
        self.sites.append(site)
        self.open_sites.append(site)

    def add_power(self, mw: float, max_site_mw: float) -> None:
        """New power tops up the newest campus to `max_site_mw` (the largest campus buildable now), then opens new
        sites."""
        if self.sites and self.sites[-1].mw < max_site_mw:
            newest = self.sites[-1]
            top = min(mw, max_site_mw - newest.mw)
            newest.mw += top
            if not any(site is newest for site in self.open_sites):
                self.open_sites.append(newest)
            mw -= top
        while mw > 1e-9:
            self.new_site(min(mw, max_site_mw))
            mw -= min(mw, max_site_mw)

    def power_online_mw(self) -> float:
        return sum(s.mw for s in self.sites)

    def power_used_mw(self) -> float:
        return sum(s.used_mw for s in self.sites)

    def facility_kw_per_gpu(self, k: str) -> float:
        return systems()[k].system_power_kw_per_gpu * self.pue

    # -- placement and retirement -------------------------------------------------------------------------------
    def place(self, k: str, gpus: int, online_month: int, max_site_mw: float) -> int:
        """Place up to `gpus` GPUs of system k; return how many found no power."""
        s = systems()[k]
        kw = self.facility_kw_per_gpu(k)
        unit_mw = kw * s.gpus_per_system / 1000.0
        fabric = self.fabric_max_gpus
        arch = s.architecture
        while gpus > 0:
            fits = [site for site in self.open_sites if site.free_mw() >= unit_mw]
            if not fits:
                if not self.power_unconstrained:
                    break
                self.add_power(gpus * kw / 1000.0, max_site_mw)  # power not modelled: build what is needed
                continue
            site = max(fits, key=lambda x: (min(x.gpus_of_architecture(arch), fabric), x.free_mw()))
            n = min(int(site.free_mw() // unit_mw) * s.gpus_per_system, gpus)
            site.add(Batch(k, n, online_month, kw))
            self.placements += 1
            gpus -= n
        self.open_sites = [site for site in self.open_sites if site.free_mw() >= self.smallest_unit_mw]
        return gpus

    def retire(self, t: int, lifetime_months: int) -> None:
        """GPUs that came online more than `lifetime_months` before month t go offline, freeing their power."""
        cutoff = t - lifetime_months
        for site in self.sites:
            retired = site.retire_older_than(cutoff)
            self.placements += len(retired)
            for b in retired:
                self.retired[b.system] += b.gpus
            if retired and not any(open_site is site for open_site in self.open_sites):
                self.open_sites.append(site)

    # -- what it holds ------------------------------------------------------------------------------------------
    def gpus_online(self) -> dict[str, int]:
        out = dict.fromkeys(self.system_keys, 0)
        for site in self.sites:
            for k, g in site.gpus_by_system.items():
                out[k] += g
        return out

    def h100e(self) -> float:
        catalog = systems()
        return sum(g * catalog[k].h100e_per_gpu for k, g in self.gpus_online().items())

    def largest_by_system(self) -> dict[str, int]:
        """Largest number of GPUs of each system in one site, bounded by the fabric (for 'at scale')."""
        fabric = self.fabric_max_gpus
        out: dict[str, int] = {}
        for site in self.sites:
            for k, g in site.gpus_by_system.items():
                if g > out.get(k, 0):
                    out[k] = min(g, fabric)
        return out

    def clusters(self, month: int) -> list[Cluster]:
        """Training clusters: the GPUs of one architecture (Hopper, Blackwell, ...) in one site, bounded by the
        fabric, each paced by its slowest system on the reference training job (a synchronous job runs at the pace
        of its slowest GPUs)."""
        key = (month, self.placements)
        if self._clusters[0] == key:
            return self._clusters[1]
        fabric = self.fabric_max_gpus
        catalog = systems()
        out = []
        for site in self.sites:
            by_arch: dict[str, list[str]] = {}
            for k, g in site.gpus_by_system.items():
                if g > 0:
                    by_arch.setdefault(catalog[k].architecture, []).append(k)
            for members in by_arch.values():
                pace = min(members, key=self.training_ratio)
                out.append(Cluster(pace, min(sum(site.gpus_by_system[k] for k in members), fabric)))
        self._clusters = (key, out)
        return out
