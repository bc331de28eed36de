"""Capacity: H100-equivalents online by owner, stacked to the total, and each large owner beside Epoch AI's estimates.

Top: one panel per input, owners stacked (hyperscalers from the bottom) so the total is the top edge; a sweep
stacks each owner's mean across runs and draws the 5-95% range of the total. Bottom: one small panel per owner that
the public record estimates (Google, Microsoft, AWS, Meta, Oracle, xAI), every input a line, Epoch AI's estimates as
markers.
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
from model.results import ResultSet
from model.results import outcomes as O

NAME = "capacity"
TITLE = "Compute online (H100e) by owner, and the largest owners beside Epoch AI's estimates"


def table(rs: ResultSet) -> pd.DataFrame:
    """label, date, agent, kind, runs, h100e (median over runs), h100e_p05, h100e_p95, h100e_mean."""
    out = O.band(rs.agents, ["date", "agent", "kind"], "h100e")
    mean = rs.agents.groupby(["label", "date", "agent"], sort=False)["h100e"].mean()
    out["h100e_mean"] = mean.reindex(pd.MultiIndex.from_frame(out[["label", "date", "agent"]])).to_numpy()
    return out


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    totals = O.band(O.totals(rs.agents), ["date"], "total_h100e")
    rec = record.h100e()
    rec = rec[rec["agent"].notna()][["owner", "agent", "month", "value", "definition", "kind", "source_url"]]
    return {"": table(rs), "total": totals, "record": rec}


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    data, totals, rec = t[""], t["total"], t["record"]
    titles = input_titles(rs)
    colors = F.label_colors(rs.labels)
    sources = rs.sources[:F.MAX_ROWS]
    owners_rec = [a for a in dict.fromkeys(rec["agent"]) if a in set(data["agent"])]
    fig = F.new_figure(3.2 * len(sources) + 3.4 + 1.0)
    top, bottom = fig.subfigures(2, 1, height_ratios=[3.2 * len(sources) + 0.3, 3.6])
    kinds = F.kind_of(rs.agents)
    end = data[data["date"] == data["date"].max()].groupby("agent")["h100e_mean"].mean().to_dict()
    owners = F.order_agents(list(dict.fromkeys(data["agent"])), kinds, end)
    axes = np.atleast_1d(top.subplots(len(sources), 1, squeeze=False)).ravel()
    for ax, src in zip(axes, sources, strict=False):
        d = data[data["label"] == src.label].pivot(index="date", columns="agent", values="h100e_mean")
        d = d.reindex(columns=owners).fillna(0.0)
        ax.stackplot(d.index, *(d[a].to_numpy() for a in owners), colors=[F.agent_color(a) for a in owners],
                     linewidth=0.2, edgecolor="white")
        tot = totals[totals["label"] == src.label]
        if src.n_runs > 1:  # the total's range as lines: a band would hide the owners' areas under it
            for col in ("total_h100e_p05", "total_h100e_p95"):
                ax.plot(tot["date"], tot[col], color="0.15", linewidth=0.8, linestyle="--")
        if opts.log:
            ax.set_yscale("log")
        F.millions(ax)
        ax.set_ylabel("H100e (millions)")
        ax.margins(x=0)
        F.date_axis(ax, d.index.min(), d.index.max())
        what = describe_runs(src).replace("median and 5-95% range", "mean per owner, dashed: 5% and 95% of the total")
        ax.set_title(f"{titles[src.label]}: {what}", loc="left", fontsize=9.5, fontweight="normal")
    F.legend_outside(top, [Patch(color=F.agent_color(a), label=F.agent_label(a)) for a in owners], ncols=8)
    small = F.grid_axes(bottom, max(len(owners_rec), 1), ncols=max(min(len(owners_rec), 6), 1), sharex=True)
    lo, hi = F.record_window(data["date"].min(), data["date"].max(), rec["month"][rec["month"] < "2030"].max())
    window = (data["date"] >= lo) & (data["date"] <= hi)
    for ax, agent in zip(small, owners_rec, strict=False):
        for src in rs.sources:
            d = data[(data["label"] == src.label) & (data["agent"] == agent) & window]
            ax.plot(d["date"], d["h100e"], color=colors[src.label], linewidth=1.5)
            if src.n_runs > 1:
                F.band(ax, d["date"], d["h100e_p05"], d["h100e_p95"], colors[src.label])
        r = rec[rec["agent"] == agent]
        r = r[(r["month"] >= lo - pd.DateOffset(months=6)) & (r["month"] <= hi)]
        for kind, g in r.groupby("kind"):
            ax.plot(g["month"], g["value"], linestyle="none", marker=record.KIND_MARKERS.get(kind, "o"),
                    markersize=6, markerfacecolor="white", markeredgecolor=F.RECORD_COLOR, markeredgewidth=1.3,
                    zorder=5)
        ax.set_title(F.agent_label(agent), fontsize=9)
        F.millions(ax)
        F.date_axis(ax, lo, hi, narrow=True)
    small[0].set_ylabel("H100e (millions)")
    handles = [Line2D([], [], color=colors[s.label], linewidth=2, label=titles[s.label]) for s in rs.sources]
    handles += [Line2D([], [], linestyle="none", marker=m, markerfacecolor="white", markeredgecolor=F.RECORD_COLOR,
                       label=f"Epoch AI and company figures: {k}") for k, m in record.KIND_MARKERS.items()
                if k in set(rec["kind"])]
    F.legend_outside(bottom, handles, ncols=4)
    F.title(fig, TITLE)
    skipped = (f" Showing the first {F.MAX_ROWS} of {len(rs.sources)} inputs in the stacked panels." if
               len(rs.sources) > F.MAX_ROWS else "")
    notes = F.definitions(fig, (
        f"H100-equivalents online at the end of each month ({F.H100E}), "
        f"{' and '.join(O.vendors_present(rs.agents)) or 'NVIDIA'} systems. Small panels: "
        "the years with public estimates; the model's median (band: 5-95% of runs) beside estimates of the "
        "owner's compute stock "
        "(analysis/data/h100e_by_owner.csv: Epoch AI's chip-owner estimates count TPUs, Trainium and AMD as well and "
        "track ownership, not use; Meta's and xAI's figures are their own)." + skipped))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
