"""Rental prices: the model's price per GPU-hour of each system beside the prices reported for it.

One small panel per system (each its own scale, so Feynman's price does not squash Hopper's), every input a line
(median and 5-95% for a sweep); reported prices as vertical bars from low to high (a dot for a point price), marked
by pricing model: on demand, contracts, spot, reserved blocks, market medians.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D

from analysis import figure as F
from analysis import record
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import input_titles
from analysis.summaries import systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "rental"
TITLE = "Rental price per GPU-hour by system beside reported prices"
PRICING_MARKERS = {"on_demand": "o", "contract_1yr": "s", "contract_3yr": "s", "contract_5yr": "s", "spot": "v",
                   "capacity_block": "D", "median_posted": "P", "implied": "X"}
PRICING_NAMES = {"o": "on demand", "s": "1-5 year contract", "v": "spot", "D": "reserved block (AWS)",
                 "P": "median posted price", "X": "implied by a lease"}


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    long = O.per_system(rs.market, "rental_usd_per_gpu_hour_", "rental_usd_per_gpu_hour")
    model = O.band(long, ["date", "system"], "rental_usd_per_gpu_hour").dropna(subset=["rental_usd_per_gpu_hour"])
    rec = record.rental()
    rec = rec[["system", "pricing", "provider_tier", "low", "high", "mid", "date", "month", "kind", "source_url"]]
    return {"": model, "record": rec}


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    model, rec = t[""], t["record"]
    titles = input_titles(rs)
    colors = F.label_colors(rs.labels)
    systems = systems_in(model["system"].unique())
    if not systems:
        raise F.NotApplicable(f"{rs.sources[0].path}: no rental prices in the results")
    ncols = min(len(systems), 4)
    fig = F.new_figure(2.5 * -(-len(systems) // ncols) + 1.8)
    body = fig.subfigures(1, 1)
    axes = F.grid_axes(body, len(systems), ncols=ncols, sharex=True)
    lo, hi = rs.market["date"].min(), rs.market["date"].max()
    for ax, system in zip(axes, systems, strict=False):
        for src in rs.sources:
            d = model[(model["label"] == src.label) & (model["system"] == system)]
            ax.plot(d["date"], d["rental_usd_per_gpu_hour"], color=colors[src.label], linewidth=1.5)
            if src.n_runs > 1:
                F.band(ax, d["date"], d["rental_usd_per_gpu_hour_p05"], d["rental_usd_per_gpu_hour_p95"],
                       colors[src.label])
        r = rec[(rec["system"] == system) & (rec["month"] >= lo - pd.DateOffset(months=3)) & (rec["month"] <= hi)]
        ranged = r[r["high"] > r["low"]]
        if len(ranged):
            ax.vlines(ranged["month"], ranged["low"], ranged["high"], color=F.RECORD_COLOR, linewidth=1.2, alpha=0.8)
        for marker, g in r.groupby(r["pricing"].map(lambda p: PRICING_MARKERS.get(p, "o"))):
            ax.plot(g["month"], g["mid"], marker=marker, markersize=5, linestyle="none", markerfacecolor="white",
                    markeredgecolor=F.RECORD_COLOR, markeredgewidth=1.1, zorder=5)
        ax.set_title(F.sys_name(system), fontsize=9)
        ax.set_ylim(bottom=0)
        F.date_axis(ax, lo, hi, narrow=True)
    for i, ax in enumerate(axes):
        if i % ncols == 0:
            ax.set_ylabel("USD per GPU-hour")
    handles = [Line2D([], [], color=colors[s.label], linewidth=2,
                      label=titles[s.label] + (" (median, 5-95%)" if s.n_runs > 1 else "")) for s in rs.sources]
    used = {PRICING_MARKERS.get(p, "o") for p in rec["pricing"]}
    handles += [Line2D([], [], marker=m, linestyle="none", markerfacecolor="white", markeredgecolor=F.RECORD_COLOR,
                       label=f"reported: {n}") for m, n in PRICING_NAMES.items() if m in used]
    F.legend_outside(body, handles, ncols=min(len(handles), 4))
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        "Model: rental_usd_per_gpu_hour_<system>, cost recovery (the system's price amortised at the scenario's "
        "utilisation, plus margin and power) with a scarcity premium; empty while the system is not shipping. "
        "Reported: analysis/data/rental_prices.csv (a bar spans the low and high of a range; providers from "
        "hyperscalers to marketplaces differ by 2-4x for the same GPU; GB200 prices per superchip halved to per "
        "GPU)."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
