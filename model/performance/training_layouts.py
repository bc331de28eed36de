"""Candidate training layouts, generated with numpy (no Python loops over the product of choices).

A layout is (tp, pp, dp, cp, ep, microbatch, vp, recompute, zero) with m microbatches per step per pipeline. Only
structural validity is judged here (sizes divide, a pipeline stage holds at least one layer); speed and memory are
judged by `training_physics`. Interleaved pipelines may count the embedding and the output layer as stages' layers
(Megatron's account-for-embedding/loss split), so layers + 2 need only fill pp x vp virtual stages.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

NAMES = ("tp", "pp", "dp", "cp", "ep", "microbatch", "vp", "recompute", "zero", "m")
MICROBATCHES = np.array([1, 2, 4, 8])
VIRTUAL_STAGES = np.array([1, 2, 4, 8])
MAX_TP, MAX_PP, MAX_CP, MAX_EP = 16, 32, 32, 256
UNEVEN_PP = (4, 8, 16, 32)
"""Pipeline sizes allowed whether or not they divide the layers (stages then differ by a layer: Llama 3 405B ran its
126 layers on 16 stages, the first and last one layer short, https://arxiv.org/abs/2407.21783 section 3.3.2); up to
MAX_PP, so that a model too big for 16 stages of a small-memory GPU (a ~2T-parameter dense model on 80 GB) can use 32,
as Megatron-LM's 1T-parameter model used 64 (https://arxiv.org/abs/2104.04473, table 1)."""


def _pow2_upto(limit: int) -> np.ndarray:
    return 1 << np.arange(max(int(limit), 1).bit_length())


def _divisors(n: int) -> np.ndarray:
    d = np.arange(1, n + 1)
    return d[n % d == 0]


@lru_cache(maxsize=512)
def candidates(gpus: int, domain: int, layers: int, heads: int, experts: int, gbs: int,
               seq_len: int) -> dict[str, np.ndarray]:
    """All structurally valid layouts as parallel float64 arrays of whole numbers (empty dict if none); float so that
    the physics needs no conversion. Rows come in groups of four (recompute x sharding), see training.undominated.

    Each level of choices is a boolean mask over a broadcast grid; rows are picked with np.nonzero and the columns
    built once by indexing, so the cost does not grow with Python loops over the product of choices."""
    tps = _pow2_upto(min(domain, MAX_TP, heads))
    tps = tps[heads % tps == 0]
    div = _divisors(layers)
    pps = np.unique(np.concatenate([div[div <= MAX_PP], np.array([p for p in UNEVEN_PP if p < layers], dtype=int)]))
    cps = _pow2_upto(MAX_CP)
    cps = cps[(seq_len % (2 * cps) == 0) | (cps == 1)]
    eps = _divisors(experts)[_divisors(experts) <= MAX_EP] if experts else np.array([1])

    tp, pp, cp = (g.ravel() for g in np.meshgrid(tps, pps, cps, indexing="ij"))
    keep = gpus % (tp * pp * cp) == 0
    tp, pp, cp = tp[keep], pp[keep], cp[keep]
    if not len(tp):
        return {}
    dp = gpus // (tp * pp * cp)
    # microbatch: the global batch splits evenly over data-parallel ranks and microbatches
    i, j = np.nonzero(gbs % (dp[:, None] * MICROBATCHES[None, :]) == 0)
    if not len(i):
        return {}
    tp, pp, cp, dp, mb = tp[i], pp[i], cp[i], dp[i], MICROBATCHES[j]
    m = gbs // (dp * mb)
    # expert parallel x virtual stages
    ep_ok = (dp * cp)[:, None] % eps[None, :] == 0
    vp = VIRTUAL_STAGES[None, :]
    vp_ok = (vp == 1) | ((pp[:, None] > 1) & (m[:, None] % pp[:, None] == 0)
                         & ((layers + 2) // (pp[:, None] * vp) >= 1))
    i, e, v = np.nonzero(ep_ok[:, :, None] & vp_ok[:, None, :])
    if not len(i):
        return {}
    # recompute x sharding: four variants of every row, in the order training.undominated relies on
    rows = np.repeat(i, 4)
    f = np.float64
    out = {"tp": tp.astype(f)[rows], "pp": pp.astype(f)[rows], "dp": dp.astype(f)[rows], "cp": cp.astype(f)[rows],
           "ep": np.repeat(eps.astype(f)[e], 4), "microbatch": mb.astype(f)[rows],
           "vp": np.repeat(VIRTUAL_STAGES.astype(f)[v], 4),
           "recompute": np.tile(np.array([0.0, 0.0, 1.0, 1.0]), len(i)),
           "zero": np.tile(np.array([1.0, 3.0, 1.0, 3.0]), len(i)), "m": m.astype(f)[rows]}
    for col in out.values():
        col.flags.writeable = False  # cached and shared: nobody may change it
    return out
