"""Power: facility power online by owner (GW) beside the power owners have reported or announced.

Top: power online stacked by kind of owner, one panel per input. Below: one small panel per owner the public record
gives power for, every input a line; filled markers for power the owner reports online (active, connected; for
OpenAI its compute capacity, owned and rented), hollow markers for power contracted, committed or planned for a
campus (a target, at its due date).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis import figure as F
from analysis import record
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import describe_runs, input_titles
from analysis.summaries import KIND_ORDER
from model.results import ResultSet
from model.results import outcomes as O

NAME = "power"
TITLE = "Power online by owner (GW) beside reported and announced capacity"
KIND_COLORS = {"hyperscaler": "microsoft", "neocloud": "coreweave", "lab": "openai", "other": "rest_of_market"}


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    if "power_mw_online" not in rs.agents.columns:
        raise F.NotApplicable(f"{rs.sources[0].path}: no power_mw_online column in the agents table")
    owner = O.band(rs.agents, ["date", "agent", "kind"], "power_mw_online")
    per_kind = rs.agents.groupby(["label", "run", "date", "kind"], sort=False)["power_mw_online"].sum().reset_index()
    kind = O.band(per_kind, ["date", "kind"], "power_mw_online")
    rec = record.power()
    rec = rec[rec["agent"].notna() & (rec["metric"] != "added_mw")]
    rec = rec[["owner", "agent", "site", "metric", "online", "value_mw", "as_of", "month", "kind", "source_url"]]
    return {"": owner, "kind": kind, "record": rec}


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    owner, kind, rec = t[""], t["kind"], t["record"]
    titles = input_titles(rs)
    colors = F.label_colors(rs.labels)
    sources = rs.sources[:F.MAX_ROWS]
    owners = F.order_agents([a for a in dict.fromkeys(rec["agent"]) if a in set(owner["agent"])],
                            F.kind_of(rs.agents))
    ncols = min(max(len(owners), 1), 5)
    small_rows = -(-len(owners) // ncols)
    fig = F.new_figure(2.6 * len(sources) + 2.5 * small_rows + 2.4)
    top, bottom = fig.subfigures(2, 1, height_ratios=[2.6 * len(sources) + 0.4, 2.5 * small_rows + 0.9])
    axes = np.atleast_1d(top.subplots(1, len(sources), squeeze=False, sharey=True)).ravel()
    kinds = [k for k in KIND_ORDER if k in set(kind["kind"])]
    for ax, src in zip(axes, sources, strict=False):
        d = kind[kind["label"] == src.label].pivot(index="date", columns="kind", values="power_mw_online")
        d = d.reindex(columns=kinds).fillna(0.0) / 1000
        ax.stackplot(d.index, *(d[k].to_numpy() for k in kinds), colors=[F.agent_color(KIND_COLORS[k]) for k in kinds],
                     linewidth=0.2, edgecolor="white")
        ax.margins(x=0)
        ax.set_ylabel("GW online")
        F.date_axis(ax, d.index.min(), d.index.max(), narrow=len(sources) > 2)
        what = describe_runs(src).replace("median and 5-95% range", "median per kind")
        ax.set_title(f"{titles[src.label]}: {what}", loc="left", fontsize=9, fontweight="normal")
    F.legend_outside(top, [Patch(color=F.agent_color(KIND_COLORS[k]), label=F.KIND_TITLES[k]) for k in kinds],
                     ncols=len(kinds))
    small = F.grid_axes(bottom, max(len(owners), 1), ncols=ncols, sharex=True)
    lo, hi = F.record_window(owner["date"].min(), owner["date"].max(), rec["month"][rec["month"] < "2029"].max())
    for ax, agent in zip(small, owners, strict=False):
        for src in rs.sources:
            d = owner[(owner["label"] == src.label) & (owner["agent"] == agent)]
            d = d[(d["date"] >= lo) & (d["date"] <= hi)]
            ax.plot(d["date"], d["power_mw_online"] / 1000, color=colors[src.label], linewidth=1.6)
            if src.n_runs > 1:
                F.band(ax, d["date"], d["power_mw_online_p05"] / 1000, d["power_mw_online_p95"] / 1000,
                       colors[src.label])
        r = rec[(rec["agent"] == agent) & (rec["month"] >= lo - pd.DateOffset(months=6)) & (rec["month"] <= hi)]
        for online, g in r.groupby("online"):
            ax.plot(g["month"], g["value_mw"] / 1000, linestyle="none", marker="o" if online else "^",
                    markersize=6, markeredgecolor=F.RECORD_COLOR, markeredgewidth=1.2,
                    markerfacecolor=F.RECORD_COLOR if online else "white", zorder=5)
        ax.set_title(F.agent_label(agent), fontsize=9)
        ax.set_ylim(bottom=0)
        F.date_axis(ax, lo, hi, narrow=True)
    small[0].set_ylabel("GW")
    handles = [Line2D([], [], color=colors[s.label], linewidth=2, label=titles[s.label]) for s in rs.sources]
    handles += [Line2D([], [], linestyle="none", marker="o", markerfacecolor=F.RECORD_COLOR,
                       markeredgecolor=F.RECORD_COLOR, label="reported online (active, connected; OpenAI: compute "
                       "capacity, owned and rented)"),
                Line2D([], [], linestyle="none", marker="^", markerfacecolor="white", markeredgecolor=F.RECORD_COLOR,
                       label="contracted, committed or planned campus (a target, at its date)")]
    F.legend_outside(bottom, handles, ncols=min(len(handles), 3))
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        "Model: power_mw_online, the facility power of the owner's sites that is built and energised (GPUs online "
        "draw power_mw_used of it); labs that rent draw none of their own. Record: analysis/data/power_by_owner.csv "
        "(each owner's own definition of 'active'; 'added' figures are flows and not drawn). CoreWeave's power "
        "additions and some campus powers are also scenario inputs (analysis/data/README.md), so they are not "
        "independent checks."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
