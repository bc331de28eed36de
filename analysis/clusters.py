"""Clusters: the largest training cluster of each owner over time, in GPUs and in MW, beside the public record.

One small panel per owner (those with a public cluster on record, then the largest in the model), every input a
line (median and 5-95% of runs for a sweep); the public record's clusters as markers: filled when the source says it
runs, hollow at its target date when announced, a cross for TPU and Trainium clusters (vendors the model does not
simulate yet). The MW panels need the agents table's `largest_cluster_mw` (the market's second generation); without
it they show the record alone and say so.
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
from model.results import ResultSet
from model.results import outcomes as O

NAME = "clusters"
TITLE = "Largest training cluster by owner, in GPUs and MW, beside the public record"
MAX_OWNERS = 8
FLOOR = {"largest_cluster_gpus": 1000.0, "largest_cluster_mw": 1.0}  # axis floor: smaller is not a training cluster


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    """Bands across runs of `largest_cluster_gpus` (and `largest_cluster_mw` when the results have it) per label,
    date and named agent; the public record's clusters."""
    named = rs.agents[O.is_named(rs.agents["kind"])]
    out = {"": O.band(named, ["date", "agent", "kind"], "largest_cluster_gpus")}
    if "largest_cluster_h100e" in named.columns:
        h = O.band(named, ["date", "agent", "kind"], "largest_cluster_h100e")
        out[""] = out[""].merge(h.drop(columns="runs"), on=["label", "date", "agent", "kind"], how="left")
    if "largest_cluster_mw" in named.columns:
        out["mw"] = O.band(named, ["date", "agent", "kind"], "largest_cluster_mw")
    rec = record.clusters()
    out["record"] = rec[["owner", "agent", "user", "site", "gpus", "mw", "system", "vendor", "status", "date",
                         "target_date", "month", "kind", "source_url"]]
    return out


def owners(rs: ResultSet, gpus: pd.DataFrame, rec: pd.DataFrame) -> list[str]:
    """Named agents with a public cluster on record, then the largest in the model at the end, up to MAX_OWNERS."""
    present = set(gpus["agent"])
    end = gpus[gpus["date"] == gpus["date"].max()].groupby("agent")["largest_cluster_gpus"].max()
    chosen = [a for a in dict.fromkeys(rec["agent"].dropna()) if a in present]
    chosen += [a for a in end.sort_values(ascending=False).index if a not in chosen]
    chosen = chosen[:MAX_OWNERS]
    return F.order_agents(chosen, F.kind_of(rs.agents))


def _record_points(ax, r: pd.DataFrame, value: str, lo: pd.Timestamp, hi: pd.Timestamp) -> None:
    r = r[r[value].notna() & (r["month"] >= lo - pd.DateOffset(months=6)) & (r["month"] <= hi)]
    nvidia = r["vendor"] == "NVIDIA"
    for mask, marker, fill in ((nvidia & (r["status"] == "online"), "o", F.RECORD_COLOR),
                               (nvidia & (r["status"] != "online"), "o", "white"), (~nvidia, "X", "white")):
        if mask.any():
            ax.plot(r.loc[mask, "month"], r.loc[mask, value], linestyle="none", marker=marker, markersize=6.5,
                    markeredgewidth=1.3, markeredgecolor=F.RECORD_COLOR, markerfacecolor=fill, zorder=6, alpha=0.9)


def _record_mw(sub, rec: pd.DataFrame, lo: pd.Timestamp, hi: pd.Timestamp) -> None:
    """Without the model's cluster power: the public record's cluster powers by owner in one panel."""
    ax = sub.subplots()
    r = rec[rec["mw"].notna() & (rec["month"] >= lo - pd.DateOffset(months=6)) & (rec["month"] <= hi)]
    for row in r.itertuples():
        color = F.agent_color(row.agent) if isinstance(row.agent, str) else "0.5"
        ax.plot([row.month], [row.mw], linestyle="none", marker="o" if row.vendor == "NVIDIA" else "X", markersize=7,
                markerfacecolor=color if row.status == "online" else "white", markeredgecolor=color,
                markeredgewidth=1.5)
        ax.annotate(f"{row.owner}: {str(row.site).split(' (')[0]}", (row.month, row.mw), xytext=(5, 2),
                    textcoords="offset points", fontsize=6.5, color="0.3")
    ax.set_yscale("log")
    F.count_ticks(ax)
    ax.set_ylabel("MW (log scale)")
    F.date_axis(ax, lo, hi)
    ax.set_title("power of the largest clusters on record (filled: online; hollow: announced, at its target date)\n"
                 "the model's cluster power needs largest_cluster_mw, which these results do not have (the market's "
                 "second generation adds it)", fontsize=8.5, loc="left", fontweight="normal")


def _panels(sub, rs: ResultSet, data: pd.DataFrame | None, value: str, rec: pd.DataFrame, agents: list[str],
            colors: dict[str, str], ylabel: str, missing: str) -> None:
    axes = F.grid_axes(sub, len(agents), ncols=min(len(agents), 4), sharex=True)
    lo, hi = rs.agents["date"].min(), rs.agents["date"].max()
    for ax, agent in zip(axes, agents, strict=False):
        if data is not None:
            for src in rs.sources:
                d = data[(data["label"] == src.label) & (data["agent"] == agent)]
                floor = FLOOR[value]
                ax.plot(d["date"], d[value].where(d[value] >= floor), color=colors[src.label], linewidth=1.6)
                if src.n_runs > 1:
                    F.band(ax, d["date"], d[f"{value}_p05"].clip(lower=floor), d[f"{value}_p95"], colors[src.label],
                           where=(d[f"{value}_p95"] >= floor).to_numpy())
        _record_points(ax, rec[rec["agent"] == agent], "gpus" if value == "largest_cluster_gpus" else "mw", lo, hi)
        if ax.lines:
            ax.set_yscale("log")
            ax.set_ylim(bottom=FLOOR[value])
            F.count_ticks(ax)
        ax.set_title(F.agent_label(agent), fontsize=9)
        F.date_axis(ax, lo, hi, narrow=True)
    for i, ax in enumerate(axes):
        if i % 4 == 0:
            ax.set_ylabel(ylabel)


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    gpus, rec = t[""], t["record"]
    titles = input_titles(rs)
    colors = F.label_colors(rs.labels)
    agents = owners(rs, gpus, rec)
    systems = [c.removeprefix(O.SYSTEM_PREFIX) for c in rs.agents.columns if c.startswith(O.SYSTEM_PREFIX)]
    simulated = set(O.system_facts(systems)["vendor"])
    rows = -(-len(agents) // 4)
    mw_rows = rows if "mw" in t else 1
    fig = F.new_figure(2.4 * (rows + mw_rows) + 2.6)
    top, bottom = fig.subfigures(2, 1, height_ratios=[2.4 * rows + 0.4, 2.4 * mw_rows + 1.0])
    has_largest = O.has_largest_cluster(rs.agents.columns)
    _panels(top, rs, gpus, "largest_cluster_gpus", rec, agents, colors, "GPUs (log scale)", "")
    top.suptitle("GPUs in the cluster" + ("" if has_largest else " (the cluster that trains the reference run "
                                         "fastest: see the note)"), fontsize=10, x=0.01, ha="left")
    if "mw" in t:
        _panels(bottom, rs, t["mw"], "largest_cluster_mw", rec, agents, colors, "MW (log scale)", "")
        bottom.suptitle("power of the cluster (MW)", fontsize=10, x=0.01, ha="left")
    else:
        _record_mw(bottom, rec, rs.agents["date"].min(), rs.agents["date"].max())
    handles = [Line2D([], [], color=colors[s.label], linewidth=2,
                      label=titles[s.label] + (" (median, 5-95%)" if s.n_runs > 1 else "")) for s in rs.sources]
    handles += [Line2D([], [], linestyle="none", marker="o", markerfacecolor=F.RECORD_COLOR,
                       markeredgecolor=F.RECORD_COLOR, label="public record: online (NVIDIA)"),
                Line2D([], [], linestyle="none", marker="o", markerfacecolor="white", markeredgecolor=F.RECORD_COLOR,
                       label="announced, at its target date"),
                Line2D([], [], linestyle="none", marker="X", markerfacecolor="white", markeredgecolor=F.RECORD_COLOR,
                       label="TPU or Trainium" + ("" if simulated - {"NVIDIA"} else " (not simulated)"))]
    F.legend_outside(bottom, handles, ncols=min(len(handles), 4))
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        f"Model: the agents table's largest_cluster_gpus, which here is {O.largest_cluster_meaning(rs.agents.columns)}"
        + ("" if has_largest else " (so it can fall when a newer, smaller site trains the run faster)")
        + "; drawn from 1,000 GPUs up. Public record: analysis/data/public_clusters.csv (one site or fabric per "
        "row; GPU counts are packages; MW as the source gives it, facility or IT). Some campus powers are also "
        "scenario inputs (site caps): see analysis/data/README.md. Labs' clusters on a partner's site are on record "
        "under the owner of the site."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
