"""The vectorised layout generator yields exactly the layouts a plain loop over every choice would."""

import itertools

import pytest

from model.performance.training_layouts import (
    MAX_CP,
    MAX_EP,
    MAX_PP,
    MAX_TP,
    MICROBATCHES,
    NAMES,
    UNEVEN_PP,
    VIRTUAL_STAGES,
)
from model.performance.training_layouts import candidates as vectorised


def reference(gpus, domain, layers, heads, experts, gbs, seq_len) -> set[tuple]:
    """The rules of training_layouts written as nested loops."""
    tps = [t for t in (1, 2, 4, 8, 16) if t <= min(domain, MAX_TP, heads) and heads % t == 0]
    pps = {p for p in range(1, layers + 1) if layers % p == 0 and p <= MAX_PP} | {p for p in UNEVEN_PP if p < layers}
    cps = [c for c in (1, 2, 4, 8, 16, 32) if c <= MAX_CP and (seq_len % (2 * c) == 0 or c == 1)]
    eps = [e for e in range(1, experts + 1) if experts % e == 0 and e <= MAX_EP] if experts else [1]
    out = set()
    for tp, pp, cp in itertools.product(tps, sorted(pps), cps):
        if gpus % (tp * pp * cp):
            continue
        dp = gpus // (tp * pp * cp)
        for mb in MICROBATCHES:
            if gbs % (dp * mb):
                continue
            m = gbs // (dp * mb)
            for ep, vp in itertools.product(eps, VIRTUAL_STAGES):
                if (dp * cp) % ep:
                    continue
                if vp > 1 and not (pp > 1 and m % pp == 0 and (layers + 2) // (pp * vp) >= 1):
                    continue
                for rc, zero in itertools.product((0, 1), (1, 3)):
                    out.add((tp, pp, dp, cp, ep, int(mb), int(vp), rc, zero, m))
    return out


@pytest.mark.parametrize("args", [
    (1024, 8, 126, 128, 0, 1536, 8192),   # Llama 3.1 405B on H100
    (256, 72, 61, 128, 256, 4096, 4096),  # DeepSeek-V3 on GB200
    (16, 8, 48, 32, 128, 1024, 4096),     # Qwen3-30B-A3B on H100
    (96, 8, 30, 32, 0, 192, 4096),        # a layer count with few divisors
    (12, 8, 7, 6, 0, 36, 2048),           # odd sizes: few or no valid layouts
    (7, 8, 32, 32, 0, 5, 8192),           # a prime GPU count and batch: no data-parallel split
])
def test_vectorised_generation_matches_the_loops(args):
    got = vectorised(*args)
    rows = set(zip(*(got[n].tolist() for n in NAMES), strict=True)) if got else set()
    assert rows == reference(*args)
    if got:
        assert len(rows) == len(got["tp"])  # no duplicates
        assert all((got["tp"] * got["pp"] * got["cp"] * got["dp"]) == args[0])


def test_recompute_and_sharding_variants_come_in_groups_of_four():
    """The search skips variants a cheaper twin dominates; it relies on this order."""
    got = vectorised(256, 72, 61, 128, 256, 4096, 4096)
    rc = got["recompute"].reshape(-1, 4)
    zero = got["zero"].reshape(-1, 4)
    assert (rc == [0, 0, 1, 1]).all() and (zero == [1, 3, 1, 3]).all()
    for name in ("tp", "pp", "dp", "cp", "ep", "microbatch", "vp", "m"):
        col = got[name].reshape(-1, 4)
        assert (col == col[:, :1]).all()


def test_pruned_search_finds_the_same_best_layout():
    """Skipping dominated recompute/FSDP variants never changes the answer."""
    import numpy as np

    from model.hardware.systems import get_system
    from model.hardware.workloads import get_workload
    from model.performance.params import fitted
    from model.performance.training import era_factors, hbm_budget_gb, undominated
    from model.performance.training_physics import memory_gb, step_time

    for system, gpus, wl, gbs, seq in (("hgx_h100", 64, "llama3-70b", 128, 8192),
                                       ("gb200_nvl72", 256, "deepseek-v3", 4096, 4096),
                                       ("hgx_h100", 16, "qwen3-30b-a3b", 1024, 4096)):
        s, w = get_system(system), get_workload(wl)
        c = vectorised(gpus, s.nvlink_domain_gpus, w.layers, w.heads, w.experts_routed, gbs, seq)
        fits = memory_gb(s, w, seq, c, True) <= hbm_budget_gb(s)
        general, moe = era_factors(s, None, fitted()[0])
        every = step_time(s, w, "fp8", seq, {k: v[fits] for k, v in c.items()}, fitted()[0], general, moe)
        pruned = step_time(s, w, "fp8", seq, {k: v[fits & undominated(fits)] for k, v in c.items()}, fitted()[0],
                           general, moe)
        assert np.min(pruned["step_s"]) == np.min(every["step_s"])
