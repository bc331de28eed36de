"""Race timeline: when each agent first brings each generation online and first reaches an at-scale cluster.

A dot plot, one row per agent and a slot per generation within the row; for sweeps the dot is the median date over
the runs that reached the milestone and the line its 5-95% range.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.summaries import KIND_ORDER, MILESTONES, systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "timeline"
TITLE = "Race timeline: first online and first at-scale cluster per generation"
MARKERS = {"first_online": "o", "first_cluster_at_scale": "D"}


def table(rs: ResultSet) -> pd.DataFrame:
    """label, agent, kind, system, event, runs, runs_reached, date (median), date_p05, date_p95: each agent's own
    first of each milestone (months by the outcomes module's conventions across runs)."""
    own = O.milestones(rs.events, which=list(MILESTONES))
    t = O.date_band(own, ["agent", "system", "event"], {s.label: s.n_runs for s in rs.sources})
    kinds = rs.agents.drop_duplicates(["label", "agent"]).set_index(["label", "agent"])["kind"]
    t.insert(2, "kind", [kinds.get((lab, a), "") for lab, a in zip(t["label"], t["agent"], strict=True)])
    return t


def _agent_order(rs: ResultSet, label: str, agents: set[str]) -> list[str]:
    a = rs.agents[rs.agents["label"] == label].drop_duplicates("agent")
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    a = a.assign(r=a["kind"].map(lambda k: rank.get(k, len(rank))), o=range(len(a)))
    return [x for x in a.sort_values(["r", "o"])["agent"] if x in agents]


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    data = table(rs)
    order = {lab: _agent_order(rs, lab, set(data.loc[data["label"] == lab, "agent"])) for lab in rs.labels}
    heights = [max(len(a), 1) * 0.42 + 1.0 for a in order.values()]
    fig = F.new_figure(sum(heights) + 1.6)
    subfigs = np.atleast_1d(fig.subfigures(len(rs.sources), 1, squeeze=False, height_ratios=heights)).ravel()
    systems = systems_in(data["system"].unique())
    step = 0.8 / max(len(systems), 1)
    offset = {s: (i - (len(systems) - 1) / 2) * step for i, s in enumerate(systems)}
    for sub, src in zip(subfigs, rs.sources, strict=True):
        ax = sub.subplots()
        agents = order[src.label]
        d = data[data["label"] == src.label]
        y_of = {a: i for i, a in enumerate(agents)}
        for row in d.itertuples():
            y = y_of[row.agent] + offset[row.system]
            color = F.system_color(row.system)
            if row.runs > 1:
                ax.plot([row.date_p05, row.date_p95], [y, y], color=color, linewidth=1.4, alpha=0.8,
                        solid_capstyle="butt")
            filled = row.event == "first_online"
            # Hollow diamond drawn larger and below, so a dot in the same month stays visible inside it.
            ax.plot([row.date], [y], marker=MARKERS.get(row.event, "s"), markersize=4.5 if filled else 8.5,
                    color=color, markerfacecolor=color if filled else "white", markeredgewidth=1.4,
                    linestyle="none", zorder=4 if filled else 3)
        ax.set_yticks(range(len(agents)), agents)
        ax.set_ylim(len(agents) - 0.5, -0.5)
        kinds = [rs.agents.loc[(rs.agents["label"] == src.label) & (rs.agents["agent"] == a), "kind"].iloc[0]
                 for a in agents]
        for i in range(1, len(agents)):
            if kinds[i] != kinds[i - 1]:
                ax.axhline(i - 0.5, color="0.55", linewidth=0.8)
        ax.grid(axis="y", visible=False)
        for i in range(len(agents)):
            ax.axhspan(i - 0.5, i + 0.5, color="0.5", alpha=0.06 if i % 2 else 0, linewidth=0)
        dates = rs.agents.loc[rs.agents["label"] == src.label, "date"]
        ax.set_xlim(dates.min() - pd.Timedelta(days=20), dates.max() + pd.Timedelta(days=40))
        F.date_axis(ax)
        ax.set_ylabel("agent (grouped by kind)")
        if d.empty:
            F.note(ax, "no first-online or at-scale events")
        what = (f"median date over the runs that reached it, line = 5-95% range ({src.n_runs} runs)"
                if src.n_runs > 1 else "one run")
        ax.set_title(f"{src.label}: {what}", fontsize=10, fontweight="normal", loc="left")
    sys_handles = [Line2D([], [], marker="s", linestyle="none", markersize=8, color=F.system_color(s),
                          label=F.sys_name(s)) for s in systems]
    if len(sys_handles) % 2:  # keep the two milestone markers together in the last legend column
        sys_handles.append(Line2D([], [], linestyle="none", label=" "))
    mil_handles = [Line2D([], [], marker=MARKERS[m], linestyle="none", markersize=7, color="0.25",
                          markerfacecolor="0.25" if m == "first_online" else "white", label=text)
                   for m, text in MILESTONES.items()]
    if systems:
        fig.legend(handles=sys_handles + mil_handles, loc="outside lower center",
                   ncols=(len(sys_handles) + 2) // 2, fontsize=8.5,
                   title="colour = system (slot within each row, oldest at top); marker = milestone")
    fig.suptitle(TITLE)
    return [F.save(fig, out, NAME, TITLE, {"": data})]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
