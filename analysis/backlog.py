"""Backlog: NVIDIA's order backlog by system, in GPUs, with what moves it marked.

One small panel per system that ever had a backlog, every input a line (median and 5-95% of runs for a sweep); a
dotted line where the system first ships (orders start to be served) and a triangle where the roadmap slipped
(`roadmap_slip` events), so a spike reads as pre-orders piling up before the first shipment or a slip.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import input_titles
from analysis.summaries import systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "backlog"
TITLE = "NVIDIA's order backlog by system, in GPUs"


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    """Per label, month and system: backlog in systems and in GPUs (median, 5-95%); per label, run and system: the
    first month it shipped and the roadmap slips."""
    long = O.backlog(rs.market)
    out = O.band(long, ["date", "system"], "backlog_gpus")
    units = O.band(long, ["date", "system"], "backlog_units")
    out.insert(4, "backlog_units", units["backlog_units"].to_numpy())
    shipped = O.per_system(rs.market, "units_shipped_", "units")
    first = shipped[shipped["units"] > 0].groupby(["label", "run", "system"])["date"].min().rename("first_shipment")
    first = first.reset_index().groupby(["label", "system"])["first_shipment"].median().reset_index()
    ev = rs.events[rs.events["event"] == "roadmap_slip"][["label", "run", "date", "system", "detail"]]
    return {"": out, "first_shipment": first, "slips": ev}


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    data = t[""]
    titles = input_titles(rs)
    colors = F.label_colors(rs.labels)
    peak = data.groupby("system")["backlog_gpus_p95"].max()
    systems = [s for s in systems_in(data["system"].unique()) if peak.get(s, 0) > 0]
    if not systems:
        raise F.NotApplicable(f"{rs.sources[0].path}: no backlog in the results")
    ncols = min(len(systems), 4)
    fig = F.new_figure(2.5 * -(-len(systems) // ncols) + 1.8)
    body = fig.subfigures(1, 1)
    axes = F.grid_axes(body, len(systems), ncols=ncols, sharex=True)
    lo, hi = rs.market["date"].min(), rs.market["date"].max()
    for ax, system in zip(axes, systems, strict=False):
        for src in rs.sources:
            d = data[(data["label"] == src.label) & (data["system"] == system)]
            c = colors[src.label]
            ax.plot(d["date"], d["backlog_gpus"] / 1e3, color=c, linewidth=1.5)
            if src.n_runs > 1:
                F.band(ax, d["date"], d["backlog_gpus_p05"] / 1e3, d["backlog_gpus_p95"] / 1e3, c)
            first = t["first_shipment"]
            f = first[(first["label"] == src.label) & (first["system"] == system)]["first_shipment"]
            if len(f) and f.iloc[0] > lo:
                ax.axvline(f.iloc[0], color=c, linestyle=":", linewidth=1)
            slips = t["slips"]
            for r in slips[(slips["label"] == src.label) & (slips["system"] == system)].drop_duplicates("date")\
                    .itertuples():
                ax.plot([r.date], [0], marker="^", color=c, markersize=7, clip_on=False, zorder=5)
        ax.set_title(F.sys_name(system), fontsize=9)
        ax.set_ylim(bottom=0)
        F.date_axis(ax, lo, hi, narrow=True)
    for i, ax in enumerate(axes):
        if i % ncols == 0:
            ax.set_ylabel("thousand GPUs")
    handles = [Line2D([], [], color=colors[s.label], linewidth=2,
                      label=titles[s.label] + (" (median, 5-95%)" if s.n_runs > 1 else "")) for s in rs.sources]
    handles += [Line2D([], [], color="0.3", linestyle=":", label="first shipment (median month of runs)"),
                Line2D([], [], color="0.3", marker="^", linestyle="none", label="roadmap slip (any run)")]
    F.legend_outside(body, handles, ncols=min(len(handles), 4))
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        "Backlog: systems ordered and not yet shipped at a month's end (market table backlog_units_<system>) times "
        "the catalog's GPUs per system. Orders placed before a system ships (pre-orders) wait until its first "
        "shipment, so the backlog peaks just before it; a roadmap slip holds them longer."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
