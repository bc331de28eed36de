"""What the performance model decides: the baseline run as it is, and with every buyer valuing systems by peak
FLOP/s instead (dense peak at each reference job's precision relative to HGX H100; same prices, waits, sites and
frontier-run days). Prints, over seeds, the outcomes that differ: GPUs shipped per system, who is first with each
generation at scale, and NVIDIA's revenue.

    python benchmarks/peak_flops.py [--seeds 5] [--end 2027-12]

An experiment, not a model option: the peak-FLOP table is built here and handed to the market in place of the
capability table. Run by hand; tests never call this.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace
from functools import partial

import pandas as pd

from model.capability.build import _precision, capability_table
from model.capability.table import SystemValue
from model.hardware.systems import systems
from model.market import run_params
from model.results import outcomes as O
from model.scenario import load_scenario
from model.scenario.schema import BASELINE_SYSTEM


def _peak_ratio(system: str, precision: str) -> float:
    catalog = systems()
    return (catalog[system].dense_tflops(_precision(system, precision))
            / catalog[BASELINE_SYSTEM].dense_tflops(_precision(BASELINE_SYSTEM, precision)))


def _peak_value(scenario, system: str, era: str | None) -> SystemValue:
    jobs = scenario.reference_jobs
    train = _peak_ratio(system, jobs.train.precision)
    return SystemValue(training=train, serving=tuple(_peak_ratio(system, job.precision) for job in jobs.serve),
                       training_at_scale=(train,) * 3)


def peak_table(scenario):
    """The scenario's capability table with every value replaced by the peak-FLOP ratio (frontier days kept)."""
    table = capability_table(scenario)
    return replace(table, valuer=partial(_peak_value, scenario), _values={})


def summarise(label: str, results: list) -> None:
    shipped, firsts, revenue = [], [], []
    for r in results:
        m = r.market.copy()
        m["year"] = pd.to_datetime(m["date"]).dt.year
        units = m.groupby("year")[[c for c in m.columns if c.startswith("units_shipped_")]].sum()
        gpus = {c.removeprefix("units_shipped_"): units[c] * systems()[c.removeprefix("units_shipped_")].gpus_per_system
                for c in units.columns}
        shipped.append(pd.DataFrame(gpus).loc[2025:2026].sum())
        ev, ag = r.events.copy(), r.agents.copy()
        ev["date"], ag["date"] = pd.to_datetime(ev["date"]), pd.to_datetime(ag["date"])
        firsts.append(O.firsts(ev, ag, which=["first_online", "first_cluster_at_scale"]))
        revenue.append(m.groupby("year")["nvidia_revenue_usd"].sum() / 1e9)
    print(f"== {label}")
    mix = pd.concat(shipped, axis=1).median(axis=1)
    print("GPUs shipped 2025-2026 (median over seeds, thousands):",
          {k: round(v / 1e3) for k, v in mix.items() if v > 0})
    f = pd.concat(firsts)
    for (event, system), g in f.groupby(["event", "system"]):
        agent, n = Counter(g["agent"]).most_common(1)[0]
        print(f"  {event:24s} {system:20s} {g['date'].median():%Y-%m}  {agent} {n}/{len(g)}")
    print("NVIDIA revenue by year ($B, median):", pd.concat(revenue, axis=1).median(axis=1).round(0).to_dict())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--end", default="2027-12")
    args = ap.parse_args()
    scenario = load_scenario("scenarios/baseline.toml", [f"end={args.end}"])
    peak = peak_table(scenario)
    summarise("performance model", [run_params(scenario, seed) for seed in range(args.seeds)])
    summarise("peak FLOP/s", [run_params(scenario, seed, capability=peak) for seed in range(args.seeds)])


if __name__ == "__main__":
    main()
