"""Time the baseline market and synthetic 10x / 100x provider markets.

python benchmarks/market_run.py [FACTOR ...]   (default 1 10; 100 takes minutes: order book is O(orders^2))
"""

from __future__ import annotations

import copy
import sys
import time

from model.market import run_params
from model.scenario.loading import load_scenario_dict


def scaled(params: dict, factor: int) -> dict:
    p = copy.deepcopy(params)
    for kind in ("hyperscaler", "neocloud"):
        base = p[kind]
        p[kind] = {f"{n}_{i}": copy.deepcopy(v) for n, v in base.items() for i in range(factor)}
    for lab in p["lab"].values():
        lab["hosts"] = [f"{h}_0" for h in lab.get("hosts", [])]
    for c in p.get("contracts", []):
        c["provider"] = f"{c['provider']}_0"
    return p


def main() -> None:
    params = load_scenario_dict("scenarios/baseline.toml")
    run_params(params, 0)  # warm caches / imports
    for factor in [int(a) for a in sys.argv[1:]] or [1, 10]:
        p = params if factor == 1 else scaled(params, factor)
        t0 = time.perf_counter()
        run_params(p, 0)
        print(f"{factor:>4}x providers: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
