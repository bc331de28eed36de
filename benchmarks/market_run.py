"""Wall time of the baseline market and of synthetic markets with 10x and 100x the providers.

    python benchmarks/market_run.py [FACTOR ...]     (default: 1 10 100)

Prints the first run in a fresh process (performance-model caches cold), warm runs, and the cost per agent-month,
which should stay flat as the market grows (cost linear in agents x months). Run by hand; tests never time.
"""

from __future__ import annotations

import copy
import sys
import time

from model.market import run_params
from model.scenario.loading import load_scenario_dict


def scaled(params: dict, factor: int) -> dict:
    """The baseline with every hyperscaler and neocloud copied `factor` times (copy 0 keeps the contracts)."""
    p = copy.deepcopy(params)
    providers = set()
    for kind in ("hyperscaler", "neocloud"):
        providers |= set(p[kind])
        p[kind] = {f"{n}_{i}": copy.deepcopy(v) for n, v in p[kind].items() for i in range(factor)}
    for lab in p["lab"].values():
        lab["hosts"] = [f"{h}_0" for h in lab.get("hosts", [])]
    for c in p.get("contracts", []):
        c["provider"] = f"{c['provider']}_0"
        if c["lab"] in providers:
            c["lab"] = f"{c['lab']}_0"
    return p


def timed(params: dict) -> tuple[float, int]:
    t0 = time.perf_counter()
    result = run_params(params, 0)
    return time.perf_counter() - t0, len(result.agents)


def main() -> None:
    params = load_scenario_dict("scenarios/baseline.toml")
    cold, rows = timed(params)
    print(f"baseline, first run in this process: {cold:.2f} s ({rows} agent-months)")
    for factor in [int(a) for a in sys.argv[1:]] or [1, 10, 100]:
        p = params if factor == 1 else scaled(params, factor)
        runs = [timed(p) for _ in range(3 if factor < 100 else 1)]
        best, rows = min(runs)
        print(f"{factor:>4}x providers: {best:.2f} s warm, {rows} agent-months, "
              f"{best / rows * 1e6:.0f} us per agent-month")


if __name__ == "__main__":
    main()
