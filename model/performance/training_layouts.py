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


def _pow2_upto(limit: int) -> np.ndarray:
    return 1 << np.arange(max(int(limit), 1).bit_length())


def _divisors(n: int) -> np.ndarray:
    d = np.arange(1, n + 1)
    return d[n % d == 0]


def _cross(a: dict[str, np.ndarray], name: str, values: np.ndarray) -> dict[str, np.ndarray]:
    """Every row of `a` with every value of `values` (row-major)."""
    n, k = len(next(iter(a.values()))), len(values)
    out = {key: np.repeat(col, k) for key, col in a.items()}
    out[name] = np.tile(values, n)
    return out


def _keep(a: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {key: col[mask] for key, col in a.items()}


@lru_cache(maxsize=512)
def candidates(gpus: int, domain: int, layers: int, heads: int, experts: int, gbs: int,
               seq_len: int) -> dict[str, np.ndarray]:
    """All structurally valid layouts as parallel float64 arrays of whole numbers (empty dict if none); float so that
    the physics needs no conversion."""
    tps = _pow2_upto(min(domain, MAX_TP, heads))
    tps = tps[heads % tps == 0]
    pps = np.unique(np.concatenate([_divisors(layers)[_divisors(layers) <= MAX_PP],
                                    np.array([p for p in (4, 8, 16) if p < layers])]))
    cps = _pow2_upto(MAX_CP)
    cps = cps[(seq_len % (2 * cps) == 0) | (cps == 1)]
    eps = _divisors(experts)[_divisors(experts) <= MAX_EP] if experts else np.array([1])

    tp, pp, cp = (g.ravel() for g in np.meshgrid(tps, pps, cps, indexing="ij"))
    model = tp * pp * cp
    a = _keep({"tp": tp, "pp": pp, "cp": cp}, gpus % model == 0)
    if not len(a["tp"]):
        return {}
    a["dp"] = gpus // (a["tp"] * a["pp"] * a["cp"])
    a = _cross(a, "microbatch", MICROBATCHES)
    a = _keep(a, gbs % (a["dp"] * a["microbatch"]) == 0)
    if not len(a["tp"]):
        return {}
    a["m"] = gbs // (a["dp"] * a["microbatch"])
    a = _cross(a, "ep", eps)
    a = _keep(a, (a["dp"] * a["cp"]) % a["ep"] == 0)
    a = _cross(a, "vp", VIRTUAL_STAGES)
    vp, pp = a["vp"], a["pp"]
    a = _keep(a, (vp == 1) | ((pp > 1) & (a["m"] % pp == 0) & ((layers + 2) // (pp * vp) >= 1)))
    a = _cross(a, "recompute", np.array([0, 1]))
    a = _cross(a, "zero", np.array([1, 3]))
    if not len(a["tp"]):
        return {}
    out = {name: a[name].astype(np.float64) for name in NAMES}
    for col in out.values():
        col.flags.writeable = False  # cached and shared: nobody may change it
    return out
