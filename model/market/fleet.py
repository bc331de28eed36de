"""A buyer's fleet: sites with power online, the GPUs placed in them, and the training clusters they form.

GPUs that finished integration are placed into sites with free power: first where GPUs of the same architecture
already run (to grow one training cluster, up to the scale-out fabric), then the site with the most free power.
What does not fit waits for power. A buyer whose power is not modelled (the rest of the market: many small sites)
fills one site at a time, of the largest size it can have, and opens the next when a system no longer fits; its
sites hold only the power their GPUs use, so a site shrinks as its GPUs retire and goes when it is empty. A training
cluster is the GPUs of one architecture in one site (`Site.clusters`).

Work per month does not grow with the number of sites a fleet has accumulated: totals are kept as GPUs come and
go, retirements are scheduled by month, each site caches its clusters, and only sites that changed are looked at
for firsts at scale.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import NamedTuple

from model.hardware.systems import systems
from model.market.open_sites import OpenSites
from model.market.sites import Batch, Cluster, Site


class ClusterDetail(NamedTuple):
    """One training cluster as the agents table reports it."""

    gpus: int
    h100e: float
    mw: float  # facility MW of its GPUs
    systems: str  # its systems, "+"-joined, most GPUs first ("" when there is none)


NO_CLUSTER_DETAIL = ClusterDetail(0, 0.0, 0.0, "")


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
        self._sites: dict[int, Site] = {}  # by seq: the order they opened
        self.open = OpenSites()  # sites with free power: placement looks only here
        self.retired = dict.fromkeys(system_keys, 0)  # GPUs
        self.online = dict.fromkeys(system_keys, 0)  # GPUs online, by system
        self._h100e: float | None = None  # the sum of `online` in H100e, kept until `online` changes
        self.placements = 0  # changes whenever GPUs go online or retire (keys caches)
        catalog = systems()
        self.smallest_unit_mw = min(catalog[k].system_power_kw for k in system_keys) * pue / 1000.0
        self._retiring: dict[int, list[Site]] = {}  # month -> sites with batches that retire then
        self._touched: list[tuple[Site, str]] = []  # (site, system) placed since the last at-scale check
        self._power_version = 0
        self._opened = 0
        self._online_mw: tuple[int, float] = (-1, 0.0)
        self._used_mw: tuple[int, float] = (-1, 0.0)
        self._running_mw = [0.0, 0.0]  # online, used: kept as they change where power is not modelled
        self._pace_heaps: dict[str, list[tuple[int, int, int]]] = {}  # pace -> (-GPUs, site seq, site version)
        self._changed: dict[int, Site] = {}  # sites whose clusters are not yet in the heaps
        self._largest: tuple[int, dict[str, int]] = (-1, {})
        self._largest_site: dict[str, int] = {}  # pace -> seq of the site holding its largest cluster
        self._detail: tuple[int, ClusterDetail] = (-1, NO_CLUSTER_DETAIL)

    @property
    def sites(self) -> list[Site]:
        """The fleet's sites, in the order they opened."""
        return list(self._sites.values())

    # -- power --------------------------------------------------------------------------------------------------
    def new_site(self, mw: float) -> None:
        self._opened += 1
        site = Site(f"{self.owner}-{self._opened}", mw, seq=self._opened)
        self._sites[site.seq] = site
        self._running_mw[0] += mw
        self.open.open(site)
        self._power_version += 1

    def add_power(self, mw: float, max_site_mw: float) -> None:
        """New power tops up the newest campus to `max_site_mw` (the largest campus buildable now), then opens new
        sites."""
        newest = self._sites.get(self._opened)
        if newest is not None and newest.mw < max_site_mw:
            top = min(mw, max_site_mw - newest.mw)
            newest.mw += top
            self._running_mw[0] += top
            self._power_version += 1
            if newest.open_rank < 0:
                self.open.open(newest)
            else:
                self.open.changed(newest)
            mw -= top
        while mw > 1e-9:
            self.new_site(min(mw, max_site_mw))
            mw -= min(mw, max_site_mw)

    def power_online_mw(self) -> float:
        if self.power_unconstrained:
            return self._running_mw[0]
        if self._online_mw[0] != self._power_version:
            self._online_mw = (self._power_version, sum(s.mw for s in self._sites.values()))
        return self._online_mw[1]

    def power_used_mw(self) -> float:
        """Facility MW its GPUs use. (Summed site by site where power decides; a running total for a buyer whose
        power is not modelled, which only reports it.)"""
        if self.power_unconstrained:
            return max(0.0, self._running_mw[1])  # a running total: retiring everything may leave -1e-13
        if self._used_mw[0] != self.placements:
            self._used_mw = (self.placements, sum(s.used_mw for s in self._sites.values()))
        return self._used_mw[1]

    def _shrink_to_use(self, site: Site) -> None:
        """Power not modelled: a site that is no longer being filled holds only what its GPUs use."""
        self._running_mw[0] += (site.used_mw - site.mw) * site.copies
        site.mw = site.used_mw
        self._power_version += 1

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
        placed_into: list[Site] = []
        while gpus > 0:
            site = self.open.site_for(arch, unit_mw, fabric)
            if site is None:
                if not self.power_unconstrained:
                    break
                site_mw = max(max_site_mw, unit_mw)
                per_site = int(site_mw // unit_mw) * s.gpus_per_system
                if gpus >= 3 * per_site:  # identical full sites, filled as one would fill them one by one
                    copies = gpus // per_site - 2
                    self._full_sites(Batch(k, per_site, online_month, kw), copies, retire_month)
                    gpus -= copies * per_site
                self._open_next_site(site_mw)  # power not modelled: the next small site
                continue
            n = min(int(site.free_mw() // unit_mw) * s.gpus_per_system, gpus)
            site.add(Batch(k, n, online_month, kw))
            self.open.changed(site, arch)
            placed_into.append(site)
            self._running_mw[1] += n * kw / 1000.0
            self._site_changed(site)
            self.online[k] += n
            self._h100e = None
            self.placements += 1
            self._retiring.setdefault(retire_month, []).append(site)
            self._touched.append((site, k))
            gpus -= n
        for site in placed_into:  # only these can have run out of power
            if site.open_rank >= 0 and site.free_mw() < self.smallest_unit_mw:
                self.open.close(site)
        return gpus

    def bring_up_batches(self, k: str, gpus: int, max_site_mw: float, waiting: Iterable[tuple[str, int, int]] = ()
                         ) -> list[int]:
        """How `gpus` GPUs of system k arriving together split into batches that come up apart, one per site they
        will go to (each site burns in and accepts its racks with its own crews and fabric, in parallel): the open
        sites in the placement order (most GPUs of the architecture, then most free power), each taking what its
        free power holds after the GPUs `waiting` (system, GPUs, month) to go online ahead of them; the rest goes to
        sites not online yet, one campus phase (`max_site_mw`) each. Whole systems; the batches add up to `gpus`."""
        s = systems()[k]
        per_system = s.gpus_per_system
        unit_mw = self.facility_kw_per_gpu(k) * per_system / 1000.0
        fabric, arch = self.fabric_max_gpus, s.architecture
        ahead_mw = sum(g * self.facility_kw_per_gpu(key) for key, g, _ in waiting) / 1000.0
        batches: list[int] = []
        order = sorted(self.open.sites(), key=lambda site: (-min(site.gpus_of_architecture(arch), fabric),
                                                             -site.free_mw(), site.open_rank))
        for site in order:
            if gpus <= 0:
                break
            free = site.free_mw()
            taken = min(free, ahead_mw)
            ahead_mw -= taken
            n = min(int((free - taken) // unit_mw) * per_system, gpus)
            if n > 0:
                batches.append(n)
                gpus -= n
        per_site = max(1, int(max(max_site_mw, unit_mw) // unit_mw)) * per_system
        while gpus > 0:
            batches.append(min(per_site, gpus))
            gpus -= batches[-1]
        return batches

    def has_open_sites(self) -> bool:
        return bool(self.open)

    def open_sites(self) -> list[Site]:
        """Sites with free power, in the order they joined them."""
        return self.open.sites()

    def retire(self, t: int) -> None:
        """GPUs that came online more than the GPUs' lifetime before month t go offline, freeing their power."""
        due = self._retiring.pop(t, [])
        if not due:
            return
        cutoff = t - self.lifetime_months
        for site in sorted({id(s): s for s in due}.values(), key=lambda s: s.seq):
            retired = site.retire_older_than(cutoff)
            self.placements += len(retired)
            for b in retired:
                self.retired[b.system] += b.gpus * site.copies
                self.online[b.system] -= b.gpus * site.copies
                self._h100e = None
                self._running_mw[1] -= b.gpus * b.facility_kw_per_gpu / 1000.0 * site.copies
            if not retired:
                continue
            self._site_changed(site)
            if site.open_rank >= 0:  # already open: its free power grew
                self.open.changed(site)
            elif self.power_unconstrained:  # a closed small site holds only what its GPUs use, and goes when empty
                self._shrink_to_use(site)
                if site.empty:
                    del self._sites[site.seq]
            else:
                self.open.open(site)

    def _full_sites(self, batch: Batch, copies: int, retire_month: int) -> None:
        """Power not modelled: `copies` sites, each holding `batch` and the power it uses, closed at once."""
        self._close_open_sites()
        self._opened += 1
        site = Site(f"{self.owner}-{self._opened}", 0.0, seq=self._opened, copies=copies)
        site.add(batch)
        site.mw = site.used_mw
        self._sites[site.seq] = site
        self._running_mw[0] += site.mw * copies
        self._running_mw[1] += site.used_mw * copies
        self._power_version += 1
        self.online[batch.system] += batch.gpus * copies
        self._h100e = None
        self.placements += 1
        self._site_changed(site)
        self._retiring.setdefault(retire_month, []).append(site)
        self._touched.append((site, batch.system))

    def _open_next_site(self, mw: float) -> None:
        """Power not modelled: the sites being filled close with the power their GPUs use, and a new one opens."""
        self._close_open_sites()
        self.new_site(mw)

    def _close_open_sites(self) -> None:
        """Power not modelled: sites being filled close, holding the power their GPUs use."""
        for site in self.open.sites():
            self._shrink_to_use(site)
            self.open.close(site)

    # -- what it holds ------------------------------------------------------------------------------------------
    def gpus_online(self) -> dict[str, int]:
        return dict(self.online)

    def h100e(self) -> float:
        """H100e online (asked many times a month by the buyer, its providers and the rental market: summed once
        per change of what is online)."""
        if self._h100e is None:
            catalog = systems()
            self._h100e = sum(g * catalog[k].h100e_per_gpu for k, g in self.online.items())
        return self._h100e

    def largest_by_system(self) -> dict[str, int]:
        """Largest number of GPUs of each system in one site, bounded by the fabric (for 'at scale')."""
        fabric = self.fabric_max_gpus
        out: dict[str, int] = {}
        for site in self._sites.values():
            for k, g in site.gpus_by_system.items():
                if g > out.get(k, 0):
                    out[k] = min(g, fabric)
        return out

    def new_at_scale(self, thresholds: tuple[int, ...],
                     reached: Callable[[str, int], bool]) -> dict[tuple[str, int], int]:
        """(system, threshold) pairs not yet `reached` where the system has a cluster of at least `threshold` GPUs
        in one site now, with the largest such cluster. Only sites placed into since the last call can have
        crossed a threshold."""
        touched, self._touched = self._touched, []
        if not any(site.gpus_by_system.get(k, 0) >= t and not reached(k, t) for site, k in touched
                   for t in thresholds):
            return {}
        largest = self.largest_by_system()
        return {(k, t): g for k, g in largest.items() for t in thresholds if g >= t and not reached(k, t)}

    def clusters(self) -> list[Cluster]:
        """Training clusters, site by site."""
        fabric, ratio = self.fabric_max_gpus, self.training_ratio
        return [cluster for site in self._sites.values() for cluster in site.clusters(fabric, ratio)]

    def _site_changed(self, site: Site) -> None:
        self._changed[site.seq] = site

    def largest_by_pace(self) -> dict[str, int]:
        """The largest training cluster paced by each system (pacing systems in the order they first ran); only
        these can be a buyer's best cluster, since days to train fall with GPUs."""
        if self._largest[0] != self.placements:
            fabric, ratio = self.fabric_max_gpus, self.training_ratio
            for site in self._changed.values():  # index clusters by pace (a site's older entries: stale version)
                if self._sites.get(site.seq) is site:
                    for k, g in site.clusters(fabric, ratio):
                        heapq.heappush(self._pace_heaps.setdefault(k, []), (-g, site.seq, site.version))
            self._changed.clear()
            if sum(map(len, self._pace_heaps.values())) > 4 * len(self._sites) + 64:  # mostly stale
                for heap in self._pace_heaps.values():
                    heap.clear()
                for site in self._sites.values():
                    for k, g in site.clusters(fabric, ratio):
                        self._pace_heaps.setdefault(k, []).append((-g, site.seq, site.version))
                for heap in self._pace_heaps.values():
                    heapq.heapify(heap)
            biggest: dict[str, int] = {}
            self._largest_site = {}
            for k, heap in self._pace_heaps.items():
                while heap:
                    _, seq, version = heap[0]
                    site = self._sites.get(seq)
                    if site is not None and site.version == version:
                        biggest[k] = -heap[0][0]
                        self._largest_site[k] = seq
                        break
                    heapq.heappop(heap)
            self._largest = (self.placements, biggest)
        return self._largest[1]

    def largest_cluster(self) -> ClusterDetail:
        """The largest single training cluster by GPUs (one architecture in one site, up to the fabric): its GPUs,
        H100e, facility MW and the systems in it (a mixed campus reports each), largest share first."""
        if self._detail[0] == self.placements:
            return self._detail[1]
        by_pace = self.largest_by_pace()
        detail = NO_CLUSTER_DETAIL
        if by_pace:
            pace = max(by_pace, key=lambda k: (by_pace[k], k))
            site = self._sites[self._largest_site[pace]]
            catalog = systems()
            arch = catalog[pace].architecture
            members = sorted(((g, k) for k, g in site.gpus_by_system.items()
                              if g > 0 and catalog[k].architecture == arch), reverse=True)
            total = sum(g for g, _ in members)
            scale = min(1.0, self.fabric_max_gpus / total) if total else 0.0
            detail = ClusterDetail(by_pace[pace],
                                   sum(g * catalog[k].h100e_per_gpu for g, k in members) * scale,
                                   sum(g * self.facility_kw_per_gpu(k) for g, k in members) * scale / 1000.0,
                                   "+".join(k for _, k in members))
        self._detail = (self.placements, detail)
        return detail
