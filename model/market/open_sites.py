"""A fleet's sites with free power, indexed so that choosing where a unit goes does not scan every site.

The rule (`site_for`): of the open sites a unit fits in, those holding most GPUs of its architecture (up to the
fabric), then most free power; among equals the first to have joined the open sites. Three indexes give exactly
that choice: the open sites holding each architecture (few: where that architecture's clusters grow), and two
heaps of (free power, order) for the open sites with GPUs and the empty ones; heap entries go stale when a site
changes and are skipped (and dropped once most of a heap is stale).
"""

from __future__ import annotations

import heapq

from model.market.sites import Site

HeapEntry = tuple[float, int, int]  # (-free MW, open rank, site seq)


class OpenSites:
    """The open sites of one fleet, in the order they joined."""

    def __init__(self) -> None:
        self._by_rank: dict[int, Site] = {}
        self._used: dict[int, Site] = {}  # ... those with GPUs, by rank
        self._used_heap: list[HeapEntry] = []
        self._empty_heap: list[HeapEntry] = []
        self._hosting: dict[str, dict[int, Site]] = {}  # architecture -> open sites holding it, by seq
        self._ranks = 0

    def __bool__(self) -> bool:
        return bool(self._by_rank)

    def sites(self) -> list[Site]:
        """The open sites, in the order they joined."""
        return list(self._by_rank.values())

    def open(self, site: Site) -> None:
        """The site joins, after those already open."""
        self._ranks += 1
        site.open_rank = self._ranks
        self._by_rank[site.open_rank] = site
        self.changed(site)

    def close(self, site: Site) -> None:
        del self._by_rank[site.open_rank]
        self._used.pop(site.open_rank, None)
        site.open_rank = -1
        self._index_hosting(site)

    def changed(self, site: Site, architecture: str | None = None) -> None:
        """An open site's GPUs or power changed (`architecture`: the only one that may have been added)."""
        if site.open_rank < 0:
            return
        if site.empty:
            self._used.pop(site.open_rank, None)
            self._push(self._empty_heap, site, empty=True, live=len(self._by_rank))
        else:
            self._used[site.open_rank] = site
            self._push(self._used_heap, site, empty=False, live=len(self._used))
        if architecture is None or architecture not in site.hosting:
            self._index_hosting(site)

    def _push(self, heap: list[HeapEntry], site: Site, empty: bool, live: int) -> None:
        heapq.heappush(heap, (-site.free_mw(), site.open_rank, site.seq))
        if len(heap) > 4 * live + 64:  # mostly stale: keep what is current
            heap[:] = [(-s.free_mw(), s.open_rank, s.seq) for s in self._by_rank.values() if s.empty == empty]
            heapq.heapify(heap)

    def _index_hosting(self, site: Site) -> None:
        """An open site with GPUs is listed under each architecture it holds."""
        archs = {a for a, g in site.gpus_by_architecture.items() if g > 0} if site.open_rank >= 0 else set()
        for arch in site.hosting - archs:
            del self._hosting[arch][site.seq]
        for arch in archs - site.hosting:
            self._hosting.setdefault(arch, {})[site.seq] = site
        site.hosting = archs

    def _top(self, heap: list[HeapEntry], empty: bool) -> Site | None:
        """The current site with most free power in a heap (the first to join among equals)."""
        while heap:
            negative_free, rank, seq = heap[0]
            site = self._by_rank.get(rank)
            if site is not None and site.seq == seq and site.empty == empty and site.free_mw() == -negative_free:
                return site
            heapq.heappop(heap)
        return None

    def site_for(self, architecture: str, unit_mw: float, fabric_max_gpus: int) -> Site | None:
        """Where a unit of `unit_mw` of an architecture goes (the rule above); None if it fits nowhere."""
        site, best = None, None
        hosts = self._hosting.get(architecture)
        if hosts:
            for candidate in sorted(hosts.values(), key=lambda x: x.open_rank):
                free = candidate.free_mw()
                if free >= unit_mw:
                    key = (min(candidate.gpus_by_architecture[architecture], fabric_max_gpus), free)
                    if best is None or key > best:
                        site, best = candidate, key
            if site is not None:
                return site
        # none of the architecture fits: the most free power, among sites with other GPUs and empty ones
        most = None
        used = self._top(self._used_heap, empty=False)
        if used is not None and used.free_mw() >= unit_mw:
            site, most = used, used.free_mw()
        empty = self._top(self._empty_heap, empty=True)
        if empty is not None and empty.free_mw() >= unit_mw:
            free = empty.free_mw()
            if most is None or free > most or (free == most and empty.open_rank < site.open_rank):
                site = empty
        return site
