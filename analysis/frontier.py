"""Frontier: days to train the scenario's reference frontier run on the fastest cluster each agent can use.

Lower is faster; an agent appears once a cluster it can use fits the run. Sweeps show the median over the runs
where the agent had such a cluster that month, and the 5-95% range.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import describe_runs, input_titles
from model.results import ResultSet
from model.results import outcomes as O

NAME = "frontier"
TITLE = "Days to train the reference frontier run on the fastest cluster each agent can use"


def table(rs: ResultSet) -> pd.DataFrame:
    """label, date, agent, kind, runs (with a value), frontier_run_days (median), _p05, _p95."""
    return O.band(rs.agents, ["date", "agent", "kind"], "frontier_run_days")


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    data = table(rs)
    titles = input_titles(rs)
    sources = rs.sources[:F.MAX_ROWS]
    named = data[O.is_named(data["kind"]) & data["frontier_run_days"].notna()]
    end = named.groupby("agent")["frontier_run_days"].last().to_dict()
    agents = F.order_agents(list(dict.fromkeys(named["agent"])), F.kind_of(rs.agents),
                            {a: -v for a, v in end.items()})
    fig = F.new_figure(3.6 * len(sources) + 1.6)
    rows = np.atleast_1d(fig.subfigures(len(sources), 1, squeeze=False)).ravel()
    for sub, src in zip(rows, sources, strict=False):
        ax = sub.subplots()
        d = named[named["label"] == src.label]
        for agent in agents:
            a = d[d["agent"] == agent]
            ax.plot(a["date"], a["frontier_run_days"], color=F.agent_color(agent), linewidth=1.4)
            if src.n_runs > 1:
                F.band(ax, a["date"], a["frontier_run_days_p05"], a["frontier_run_days_p95"], F.agent_color(agent),
                       alpha=0.12)
        limit = (src.scenario_params.get("frontier") or {}).get("max_run_days")
        if isinstance(limit, int | float):
            ax.axhline(limit, color="0.3", linestyle="--", linewidth=1)
            ax.annotate(f"longest run labs start: {limit:g} days", (src.agents["date"].max(), limit),
                        xytext=(-4, 4), textcoords="offset points", ha="right", fontsize=7.5, color="0.3",
                        bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
        if ax.lines:
            ax.set_yscale("log")
            if isinstance(limit, int | float):  # runs over ten times the longest anyone starts: off the chart
                ax.set_ylim(top=min(ax.get_ylim()[1], 10 * limit))
            F.plain_ticks(ax)
        else:
            F.note(ax, "no cluster fits the reference run")
        ax.set_ylabel("days (log scale)")
        F.date_axis(ax, src.agents["date"].min(), src.agents["date"].max())
        ax.set_title(f"{titles[src.label]}: {describe_runs(src)}", loc="left", fontsize=9.5, fontweight="normal")
    handles = [Line2D([], [], color=F.agent_color(a), linewidth=2, label=F.agent_label(a)) for a in agents]
    F.legend_outside(rows[len(sources) - 1], handles, ncols=min(len(handles), 8))
    flops = {s.scenario_params.get("reference_frontier_flop") for s in rs.sources}
    ref = f" ({flops.pop():.0e} FLOP)".replace("e+", "e") if len(flops) == 1 and None not in flops else ""
    F.title(fig, TITLE + ref)
    cluster = ("reference_run_cluster_gpus" if "reference_run_cluster_gpus" in rs.agents.columns
               else "largest_cluster_gpus (in these results the fastest cluster, not the largest)")
    notes = F.definitions(fig, (
        "frontier_run_days: days the scenario's reference frontier run takes on the cluster, among those the agent "
        f"owns or (a lab) can reach, that trains it fastest ({cluster}); a compute-optimal dense model at the "
        "cluster's goodput (failures and checkpoints included); clusters needing over ten times the longest run labs "
        "start are off the chart. Named agents only; the rest of the market is an aggregate and holds no cluster "
        "anyone could name."))
    return [F.save(fig, out, NAME, TITLE, {"": data}, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
