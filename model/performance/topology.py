"""Scale-up topology: the share of a chip's scale-up bandwidth a collective gets, by how the domain is wired.

The catalog gives each chip's total scale-up bandwidth (`nvlink_gb_s`, both directions, all links) and how the
domain is wired (`scaleup_topology`). What a collective can use of it depends on the wiring:
- **switched** (NVLink Switch, NeuronSwitch, UALink): every chip reaches any other at its whole bandwidth (share 1);
- **full mesh** (AMD Infinity Fabric, 8 GPUs): one link per peer, so a group of r ranks uses r - 1 of the
  domain - 1 links: share (r - 1) / (domain - 1), for rings, all-to-all and point-to-point alike;
- **torus** (TPU ICI, Trainium2 NeuronLink; k dimensions, two links per dimension): collectives run as rings along
  dimensions. A group is placed as a compact sub-torus (the shape a scheduler picks); a ring collective over it uses
  the links of the dimensions it spans (share d / k). An all-to-all's bytes travel the mean hop distance of that
  sub-torus (sum of side / 4 over its dimensions, times n / (n - 1)), each hop taking link bandwidth, so it gets
  share d / k / hops. A point-to-point transfer between neighbours takes one of the 2k links (share 1 / 2k).
These are geometry, not fitted: the global `net_eff` of the fit applies on top, as for NVLink.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from model.hardware.systems import System


@lru_cache(maxsize=4096)
def compact_shape(dims: tuple[int, ...], chips: int) -> tuple[int, ...]:
    """Sides of the most compact sub-torus of `dims` holding at least `chips` chips: the shortest side is doubled
    (within its dimension) until the chips fit."""
    sides = [1] * len(dims)
    while math.prod(sides) < chips:
        open_ = [i for i in range(len(dims)) if sides[i] < dims[i]]
        if not open_:
            break
        i = min(open_, key=lambda j: (sides[j], -dims[j]))
        sides[i] = min(dims[i], sides[i] * 2)
    return tuple(sides)


@lru_cache(maxsize=4096)
def _torus_shares(dims: tuple[int, ...], chips: int) -> tuple[float, float]:
    """(ring share, all-to-all share) of a compact group of `chips` chips on a torus of `dims`."""
    if chips <= 1:
        return 1.0, 1.0
    sides = compact_shape(dims, chips)
    used = [a for a in sides if a > 1]
    ring = len(used) / len(dims)
    n = math.prod(sides)
    hops = max(1.0, sum(a / 4.0 for a in used) * n / (n - 1))
    return ring, ring / hops


def _per_group(s: System, ranks, stride, which: int):
    if s.scaleup_topology == "switched":
        return 1.0  # before any array work: NVIDIA's systems pay nothing for this module
    if s.scaleup_topology == "full_mesh":
        links = max(s.nvlink_domain_gpus - 1, 1)
        return np.clip((np.asarray(ranks, dtype=float) - 1.0) / links, 1.0 / links, 1.0)
    dims = s.torus_dims
    region = np.asarray(ranks, dtype=float) * stride
    values, inverse = np.unique(np.maximum(region, 1.0), return_inverse=True)
    table = np.array([_torus_shares(dims, int(v))[which] for v in values])
    return table[inverse].reshape(region.shape)


def ring_share(s: System, ranks, stride=1.0):
    """Share of the per-chip scale-up bandwidth a ring collective (all-reduce, reduce-scatter, all-gather) among
    `ranks` chips, `stride` apart (they span ranks x stride chips), gets; arrays broadcast."""
    return _per_group(s, ranks, stride, 0)


def all_to_all_share(s: System, ranks, stride=1.0):
    """Share of the per-chip scale-up bandwidth an all-to-all among `ranks` chips `stride` apart gets (on a torus,
    divided by the mean hop distance its bytes travel)."""
    return _per_group(s, ranks, stride, 1)


def p2p_share(s: System) -> float:
    """Share a point-to-point transfer to a neighbour gets (pipeline stages): one link of the chip's links."""
    if s.scaleup_topology == "switched":
        return 1.0
    if s.scaleup_topology == "full_mesh":
        return 1.0 / max(s.nvlink_domain_gpus - 1, 1)
    return 1.0 / (2 * len(s.torus_dims))
