"""A buyer's fleet: sites with power online, the GPUs placed in them, and the training clusters they form.

GPUs that finished integration are placed into sites with free power: first where GPUs of the same architecture
already run (to grow one training cluster, up to the scale-out fabric), then the site with the most free power.
What does not fit waits for power; a buyer whose power is not modelled (the rest of the market) opens sites as it
needs them. A training cluster is the GPUs of one architecture in one site (`Site.clusters`).

Work per month does not grow with the number of sites a fleet has accumulated: totals are kept as GPUs come and
go, retirements are scheduled by month, each site caches its clusters, and only sites that changed are looked at
for firsts at scale.
"""

from __future__ import annotations

from collections.abc import Callable

from model.hardware.systems import systems
from model.market.sites import Batch, Cluster, Site


class Fleet:
    """Sites and GPUs online of one buyer."""

    def __init__(self, owner: str, pue: float, fabric_max_gpus: int, power_unconstrained: bool,
                 system_keys: tuple[str, ...], training_ratio: Callable[[str], float], lifetime_months: int):
        self.owner = owner
        self.pue = pue
        self.fabric_max_gpus = fabric_max_gpus
        self.power_unconstrained = power_unconstrained
        self.system_keys = system_keys
        self.training_ratio = training_ratio
        self.lifetime_months = lifetime_months
        self.sites: list[Site] = []
        self.open_sites: list[Site] = []  # sites with free power (placement looks only here)
        self.retired = dict.fromkeys(system_keys, 0)  # GPUs
        self.online = dict.fromkeys(system_keys, 0)  # GPUs online, by system
        self.placements = 0  # changes whenever GPUs go online or retire (keys caches)
        catalog = systems()
        self.smallest_unit_mw = min(catalog[k].system_power_kw for k in system_keys) * pue / 1000.0
        self._index: dict[int, int] = {}  # id(site) -> position in `sites`
        self._retiring: dict[int, list[Site]] = {}  # month -> sites with batches that retire then
        self._touched: list[tuple[Site, str]] = []  # (site, system) placed since the last at-scale check
        self._power_version = 0
        self._online_mw: tuple[int, float] = (-1, 0.0)
        self._used_mw: tuple[int, float] = (-1, 0.0)
        self._largest: tuple[int, dict[str, int]] = (-1, {})

    # -- power --------------------------------------------------------------------------------------------------
    def new_site(self, mw: float) -> None:
        site = Site(f"{self.owner}-{len(self.sites) + 1}", mw)
        self._index[id(site)] = len(self.sites)
        self.sites.append(site)
        self.open_sites.append(site)
        self._power_version += 1

    def add_power(self, mw: float, max_site_mw: float) -> None:
        """New power tops up the newest campus to `max_site_mw` (the largest campus buildable now), then opens new
        sites."""
        if self.sites and self.sites[-1].mw < max_site_mw:
            newest = self.sites[-1]
            top = min(mw, max_site_mw - newest.mw)
            newest.mw += top
            self._power_version += 1
            if not any(site is newest for site in self.open_sites):
                self.open_sites.append(newest)
            mw -= top
        while mw > 1e-9:
            self.new_site(min(mw, max_site_mw))
            mw -= min(mw, max_site_mw)

    def power_online_mw(self) -> float:
        if self._online_mw[0] != self._power_version:
            self._online_mw = (self._power_version, sum(s.mw for s in self.sites))
        return self._online_mw[1]

    def power_used_mw(self) -> float:
        if self._used_mw[0] != self.placements:
            self._used_mw = (self.placements, sum(s.used_mw for s in self.sites))
        return self._used_mw[1]

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
        retire_month = max(0, online_month + self.lifetime_months + 1)  # the first month t with online < t - life
        while gpus > 0:
            site, best = None, None
            for candidate in self.open_sites:  # the first of the best: most GPUs of the architecture, most free
                free = candidate.free_mw()
                if free >= unit_mw:
                    key = (min(candidate.gpus_by_architecture.get(arch, 0), fabric), free)
                    if best is None or key > best:
                        site, best = candidate, key
            if site is None:
                if not self.power_unconstrained:
                    break
                self.add_power(gpus * kw / 1000.0, max_site_mw)  # power not modelled: build what is needed
                continue
            n = min(int(site.free_mw() // unit_mw) * s.gpus_per_system, gpus)
            site.add(Batch(k, n, online_month, kw))
            self.online[k] += n
            self.placements += 1
            self._retiring.setdefault(retire_month, []).append(site)
            self._touched.append((site, k))
            gpus -= n
        self.open_sites = [site for site in self.open_sites if site.free_mw() >= self.smallest_unit_mw]
        return gpus

    def retire(self, t: int) -> None:
        """GPUs that came online more than the GPUs' lifetime before month t go offline, freeing their power."""
        due = self._retiring.pop(t, [])
        if not due:
            return
        cutoff = t - self.lifetime_months
        for site in sorted({id(s): s for s in due}.values(), key=lambda s: self._index[id(s)]):
            retired = site.retire_older_than(cutoff)
            self.placements += len(retired)
            for b in retired:
                self.retired[b.system] += b.gpus
                self.online[b.system] -= b.gpus
            if retired and not any(open_site is site for open_site in self.open_sites):
                self.open_sites.append(site)

    # -- what it holds ------------------------------------------------------------------------------------------
    def gpus_online(self) -> dict[str, int]:
        return dict(self.online)

    def h100e(self) -> float:
        catalog = systems()
        return sum(g * catalog[k].h100e_per_gpu for k, g in self.online.items())

    def largest_by_system(self) -> dict[str, int]:
        """Largest number of GPUs of each system in one site, bounded by the fabric (for 'at scale')."""
        fabric = self.fabric_max_gpus
        out: dict[str, int] = {}
        for site in self.sites:
            for k, g in site.gpus_by_system.items():
                if g > out.get(k, 0):
                    out[k] = min(g, fabric)
        return out

    def new_at_scale(self, threshold: int, reached: Callable[[str], bool]) -> dict[str, int]:
        """Systems not yet `reached` that have a cluster of at least `threshold` GPUs in one site now, with the
        largest such cluster. Only sites placed into since the last call can have crossed the threshold."""
        touched, self._touched = self._touched, []
        if not any(site.gpus_by_system.get(k, 0) >= threshold and not reached(k) for site, k in touched):
            return {}
        return {k: g for k, g in self.largest_by_system().items() if g >= threshold}

    def clusters(self) -> list[Cluster]:
        """Training clusters, site by site."""
        fabric, ratio = self.fabric_max_gpus, self.training_ratio
        return [cluster for site in self.sites for cluster in site.clusters(fabric, ratio)]

    def largest_by_pace(self) -> dict[str, int]:
        """The largest training cluster paced by each system (in the order clusters first appear); only these can
        be a buyer's best cluster, since days to train fall with GPUs."""
        if self._largest[0] != self.placements:
            biggest: dict[str, int] = {}
            fabric, ratio = self.fabric_max_gpus, self.training_ratio
            for site in self.sites:
                for k, g in site.clusters(fabric, ratio):
                    if g > biggest.get(k, 0):
                        biggest[k] = g
            self._largest = (self.placements, biggest)
        return self._largest[1]
