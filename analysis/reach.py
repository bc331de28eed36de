"""Reach: the compute each lab can use, what it owns plus what it holds under contract, over time.

One small panel per lab, every input a line: reachable H100e (solid) and owned H100e (dashed). Where the results
carry the market's `reachable_h100e` column it is read as written; older results rebuild the contracted part from
`contract_signed` events (`model.results.outcomes.lab_compute`, which says what that stand-in misses).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import input_titles
from model.results import ResultSet
from model.results import outcomes as O

NAME = "reach"
TITLE = "Compute each lab can reach: owned plus contracted H100e"


def table(rs: ResultSet) -> pd.DataFrame:
    """label, date, agent, runs, owned/contracted/reachable H100e (median, 5%, 95% across runs), contracted_from."""
    per_run = O.lab_compute(rs.agents, rs.events)
    if per_run.empty:
        raise F.NotApplicable(f"{rs.sources[0].path}: no agent of kind 'lab' in the results")
    out = O.band(per_run, ["date", "agent"], "reachable_h100e")
    for col in ("owned_h100e", "contracted_h100e"):
        b = O.band(per_run, ["date", "agent"], col)
        out[[col, f"{col}_p05", f"{col}_p95"]] = b[[col, f"{col}_p05", f"{col}_p95"]].to_numpy()
    src = per_run.groupby(["label", "date", "agent"], sort=False)["contracted_from"].first()
    out["contracted_from"] = src.reindex(pd.MultiIndex.from_frame(out[["label", "date", "agent"]])).to_numpy()
    return out


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    data = table(rs)
    titles = input_titles(rs)
    colors = F.label_colors(rs.labels)
    labs = F.order_agents(list(dict.fromkeys(data["agent"])), F.kind_of(rs.agents))
    ncols = min(len(labs), 5)
    fig = F.new_figure(2.9 * -(-len(labs) // ncols) + 1.9)
    body = fig.subfigures(1, 1)
    axes = F.grid_axes(body, len(labs), ncols=ncols, sharex=True)
    lo, hi = rs.agents["date"].min(), rs.agents["date"].max()
    for ax, lab in zip(axes, labs, strict=False):
        for src in rs.sources:
            d = data[(data["label"] == src.label) & (data["agent"] == lab)]
            c = colors[src.label]
            ax.plot(d["date"], d["reachable_h100e"], color=c, linewidth=1.7)
            ax.plot(d["date"], d["owned_h100e"], color=c, linewidth=1.2, linestyle="--")
            if src.n_runs > 1:
                F.band(ax, d["date"], d["reachable_h100e_p05"], d["reachable_h100e_p95"], c)
        ax.set_title(F.agent_label(lab), fontsize=9)
        ax.set_ylim(bottom=0)
        if not (data.loc[data["agent"] == lab, "reachable_h100e_p95"] > 0).any():
            ax.set_ylim(0, 1e6)
            F.note(ax, "no compute of its own or under contract in these results")
        F.millions(ax)
        F.date_axis(ax, lo, hi, narrow=True)
    axes[0].set_ylabel("H100e (millions)")
    handles = [Line2D([], [], color=colors[s.label], linewidth=2, label=titles[s.label]) for s in rs.sources]
    handles += [Line2D([], [], color="0.3", linewidth=1.7, label="reachable: owned + contracted"),
                Line2D([], [], color="0.3", linewidth=1.2, linestyle="--", label="owned")]
    F.legend_outside(body, handles, ncols=min(len(handles), 5))
    F.title(fig, TITLE)
    from_events = (data["contracted_from"] == "events").any()
    stand_in = (" These results have no reachable_h100e column (the market's second generation adds it): the "
                "contracted part is rebuilt from contract_signed events, each contract's GPUs in H100e from the "
                "month it was signed for its duration; contracts signed before the run (backlog at the start) raise "
                "no event and are missing, a contract is counted from signing even when it starts later, and two "
                "labs may hold the same provider cluster." if from_events else "")
    notes = F.definitions(fig, (
        f"H100e ({F.H100E}) a lab owns (its own sites) and holds under contract with providers, month by month; "
        "for a sweep the median across runs (band: 5-95% of runs, reachable)." + stand_in))
    return [F.save(fig, out, NAME, TITLE, {"": data}, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
