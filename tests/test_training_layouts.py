"""The vectorised layout generator yields exactly the layouts a plain loop over every choice would."""

import itertools

import pytest

from model.performance.training_layouts import MAX_CP, MAX_EP, MAX_PP, MAX_TP, MICROBATCHES, NAMES, VIRTUAL_STAGES
from model.performance.training_layouts import candidates as vectorised


def reference(gpus, domain, layers, heads, experts, gbs, seq_len) -> set[tuple]:
    """The rules of training_layouts written as nested loops."""
    tps = [t for t in (1, 2, 4, 8, 16) if t <= min(domain, MAX_TP, heads) and heads % t == 0]
    pps = {p for p in range(1, layers + 1) if layers % p == 0 and p <= MAX_PP} | {p for p in (4, 8, 16) if p < layers}
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
