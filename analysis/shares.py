"""Shares: each owner's, each kind's (and, once systems carry a vendor, each vendor's) share of all compute.

100% areas of H100e over time, one row per input: by owner, by kind of owner beside Epoch AI's estimate of the five
largest hyperscalers' share of world AI compute, and by vendor when the results hold more than one. For a sweep the
areas are the mean share across runs (means of shares sum to one; medians need not).
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
from analysis.summaries import KIND_ORDER, kinds_in
from model.palette import vendor_color
from model.results import ResultSet
from model.results import outcomes as O

NAME = "shares"
TITLE = "Share of all compute (H100e) by owner, by kind of owner and by vendor"
TOP5 = "Top-5 hyperscalers"


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    """Mean share across runs (and its 5-95% range) per label, date and owner / kind / vendor; the Epoch AI share
    rows drawn beside the kinds."""
    owner = O.mean_shares(O.compute_shares(rs.agents, "agent"), "agent")
    kinds = F.kind_of(rs.agents)
    owner.insert(3, "kind", owner["agent"].map(kinds))
    epoch = record.world_shares()
    epoch = epoch[epoch["owner"].str.startswith(TOP5)][["owner", "month", "share", "kind", "source_url"]]
    return {"owner": owner, "kind": O.mean_shares(O.compute_shares(rs.agents, "kind"), "kind"),
            "vendor": O.mean_shares(O.compute_shares(rs.agents, "vendor"), "vendor"), "record": epoch}


def _stack(ax, d: pd.DataFrame, group: str, order: list[str], colors: dict[str, str]) -> None:
    wide = d.pivot(index="date", columns=group, values="share").reindex(columns=order).fillna(0.0)
    ax.stackplot(wide.index, *(wide[c].to_numpy() for c in order), colors=[colors[c] for c in order],
                 linewidth=0.25, edgecolor="white")
    ax.set_ylim(0, 1)
    ax.margins(x=0)
    F.percent(ax)


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    titles = input_titles(rs)
    sources = rs.sources[:F.MAX_ROWS]
    vendors = O.vendors_present(rs.agents)
    ncols = 3 if len(vendors) > 1 else 2
    fig = F.new_figure(3.0 * len(sources) + 2.2)
    rows = np.atleast_1d(fig.subfigures(len(sources), 1, squeeze=False)).ravel()
    kinds = F.kind_of(rs.agents)
    end = t["owner"][t["owner"]["date"] == t["owner"]["date"].max()].groupby("agent")["share"].mean().to_dict()
    owners = F.order_agents(list(dict.fromkeys(t["owner"]["agent"])), kinds, end)
    kind_order = [k for k in KIND_ORDER if k in set(t["kind"]["kind"])] + \
        [k for k in kinds_in(rs.agents) if k not in KIND_ORDER]
    kind_colors = {"hyperscaler": F.agent_color("microsoft"), "neocloud": F.agent_color("coreweave"),
                   "lab": F.agent_color("openai"), "other": F.agent_color("rest_of_market")}
    epoch = t["record"]
    for sub, src in zip(rows, sources, strict=False):
        axes = sub.subplots(1, ncols, sharex=True, width_ratios=[1.25, 1, 1][:ncols])
        lab = src.label
        _stack(axes[0], t["owner"][t["owner"]["label"] == lab], "agent", owners, F.agent_palette(owners))
        axes[0].set_title("by owner (hyperscalers from the bottom, then neoclouds, labs, rest of market)"
                          if ncols == 2 else "by owner (from the bottom: hyperscalers, neoclouds, labs, rest)",
                          fontsize=9)
        _stack(axes[1], t["kind"][t["kind"]["label"] == lab], "kind", kind_order,
               {k: kind_colors.get(k, F.agent_color(k)) for k in kind_order})
        axes[1].set_title("by kind of owner", fontsize=9)
        lo, hi = src.agents["date"].min(), src.agents["date"].max()
        seen = epoch[(epoch["month"] >= lo) & (epoch["month"] <= hi)]
        axes[1].plot(seen["month"], seen["share"], linestyle="none", marker="D", markersize=6,
                     markerfacecolor="white", markeredgecolor=F.RECORD_COLOR, markeredgewidth=1.4, zorder=5)
        for r in seen.itertuples():
            axes[1].annotate(f"{r.share:.0%}", (r.month, r.share), xytext=(4, 4), textcoords="offset points",
                             fontsize=7.5, color=F.RECORD_COLOR)
        if ncols == 3:
            palette = {v: vendor_color(v) for v in vendors}
            _stack(axes[2], t["vendor"][t["vendor"]["label"] == lab], "vendor", vendors, palette)
            axes[2].set_title("by vendor", fontsize=9)
        for ax in axes:
            F.date_axis(ax, lo, hi)
        axes[0].set_ylabel("share of all H100e")
        sub.suptitle(f"{titles[lab]}: {describe_runs(src).replace('median and 5-95% range', 'mean share')}",
                     fontsize=10, fontweight="normal", x=0.01, ha="left")
        last = axes
    owner_handles = [Patch(color=F.agent_color(a), label=F.agent_label(a)) for a in owners]
    kind_handles = [Patch(color=kind_colors.get(k, F.agent_color(k)), label=F.KIND_TITLES.get(k, k))
                    for k in kind_order]
    kind_handles.append(Line2D([], [], linestyle="none", marker="D", markerfacecolor="white",
                               markeredgecolor=F.RECORD_COLOR, label="Epoch AI: top-5 hyperscalers' share of world"
                               + ("\n" if ncols == 3 else " ") + "AI compute (owned, all vendors)"))
    F.legend_below(last[0], owner_handles, ncols=5 if ncols == 2 else 3)  # three panels: narrower legends
    F.legend_below(last[1], kind_handles, ncols=2 if ncols == 2 else 1)
    if ncols == 3:
        F.legend_below(last[2], [Patch(color=vendor_color(v), label=v) for v in vendors], ncols=2)
    F.title(fig, TITLE)
    vendor_note = ("Vendor: every system in these results is NVIDIA's, so there is no vendor panel; it appears when "
                   "the catalog's systems carry other vendors (TPU, Trainium, AMD)." if ncols == 2 else
                   "Vendor shares weigh each system's GPUs by the catalog's H100e per GPU (dense BF16, every "
                   "vendor alike); shipments by vendor are in the vendors figure.")
    skipped = (f" Showing the first {F.MAX_ROWS} of {len(rs.sources)} inputs." if len(rs.sources) > F.MAX_ROWS
               else "")
    notes = F.definitions(fig, (
        f"Share of all H100e online in each month ({F.H100E}); the rest of the market, an aggregate of many buyers, "
        "counts in every total. The Epoch AI points (analysis/data/h100e_by_owner.csv) count every accelerator "
        f"vendor and ownership, not use; the model counts {', '.join(vendors) or 'no'} systems. " + vendor_note
        + skipped))
    return [F.save(fig, out, NAME, TITLE, {"": t["owner"], "kind": t["kind"], "vendor": t["vendor"],
                                           "record": t["record"]}, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
