"""Race timeline: when each agent first brings each generation online and first runs an at-scale cluster of it.

A table as a picture, one per input and milestone: a row per named agent (grouped by kind), a column per
generation that arrives during the run; each cell gives the month (YY-MM) and is shaded by how many months after
the first named agent it came (darkest: first). For a sweep the month is the median over the runs that reached the
milestone (inverted CDF), with "*" when not every run reached it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.patches import Patch

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import describe_runs, input_titles
from analysis.summaries import MILESTONES, systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "timeline"
TITLE = "Race timeline: when each agent first brought each generation online and first ran it at scale"
BEHIND_MAX = 12  # months; later cells share the lightest shade
BOUNDS = (-0.5, 0.5, 2.5, 5.5, 11.5, BEHIND_MAX + 0.5)  # first; 1-2; 3-5; 6-11; 12+ months after the first
BIN_NAMES = ("first", "1-2 months later", "3-5 months", "6-11 months", f"{BEHIND_MAX}+ months")
SHADES = tuple(colormaps["YlGnBu_r"](x) for x in (0.0, 0.3, 0.55, 0.75, 0.92))


def table(rs: ResultSet) -> pd.DataFrame:
    """label, agent, kind, system, event, runs, runs_reached, date (median), date_p05, date_p95, months_behind: each
    agent's own first of each milestone (months by the outcomes module's conventions across runs) and how many
    months after the earliest named agent's median it came."""
    own = O.milestones(rs.events, which=list(MILESTONES))
    t = O.date_band(own, ["agent", "system", "event"], {s.label: s.n_runs for s in rs.sources})
    kinds = rs.agents.drop_duplicates(["label", "agent"]).set_index(["label", "agent"])["kind"]
    t.insert(2, "kind", [kinds.get((lab, a), "") for lab, a in zip(t["label"], t["agent"], strict=True)])
    named = t[O.is_named(t["kind"])]
    first = named.groupby(["label", "system", "event"])["date"].min()
    earliest = first.reindex(pd.MultiIndex.from_frame(t[["label", "system", "event"]])).to_numpy()
    t["months_behind"] = O.months_between(t["date"], pd.Series(earliest, index=t.index, dtype="datetime64[ns]"))
    return t


def _heatmap(ax, d: pd.DataFrame, agents: list[str], systems: list[str], runs: int) -> None:
    grid = np.full((len(agents), len(systems)), np.nan)
    text = [["" for _ in systems] for _ in agents]
    row_of = {a: i for i, a in enumerate(agents)}
    col_of = {s: j for j, s in enumerate(systems)}
    for r in d.itertuples():
        if r.agent not in row_of or r.system not in col_of:
            continue
        i, j = row_of[r.agent], col_of[r.system]
        grid[i, j] = min(r.months_behind, BEHIND_MAX)
        text[i][j] = f"{r.date:%y-%m}" + ("*" if r.runs_reached < runs else "")
    cmap = ListedColormap(SHADES)
    norm = BoundaryNorm(BOUNDS, cmap.N)
    ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
    for i in range(len(agents)):
        for j in range(len(systems)):
            if text[i][j]:  # an empty (white) cell: never in the run
                dark = grid[i, j] <= 2
                ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7,
                        color="white" if dark else "0.1", fontweight="bold" if grid[i, j] == 0 else "normal",
                        in_layout=False)  # inside its cell: the layout need not measure it
    ax.set_xticks(range(len(systems)), [F.sys_name(s) for s in systems], rotation=30, ha="right", fontsize=7.5)
    ax.set_yticks(range(len(agents)), [F.agent_label(a) for a in agents], fontsize=8)
    ax.grid(False)
    ax.set_xticks(np.arange(-0.5, len(systems)), minor=True)
    ax.set_yticks(np.arange(-0.5, len(agents)), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.2)
    ax.tick_params(which="minor", length=0)


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    data = table(rs)
    titles = input_titles(rs)
    sources = rs.sources[:F.MAX_ROWS]
    named = data[O.is_named(data["kind"])]
    systems = systems_in(named["system"].unique())
    kinds = F.kind_of(rs.agents)
    agents = F.order_agents([a for a in dict.fromkeys(rs.agents["agent"]) if O.is_named(pd.Series([kinds[a]])).all()],
                            kinds)
    if not systems:
        raise F.NotApplicable(f"{rs.sources[0].path}: no first-online or at-scale events in the results")
    height = 0.24 * len(agents) + 1.6
    fig = F.new_figure(height * len(sources) + 1.3)
    rows = np.atleast_1d(fig.subfigures(len(sources), 1, squeeze=False)).ravel()
    for sub, src in zip(rows, sources, strict=False):
        d = named[named["label"] == src.label]
        axes = sub.subplots(1, 2, sharey=True)
        at_scale = src.scenario_params.get("at_scale_gpus")
        names = {"first_online": "first online",
                 "first_cluster_at_scale": "first cluster at scale" + (f" (>= {at_scale:,} GPUs in one cluster)"
                                                                      if isinstance(at_scale, int) else "")}
        for ax, event in zip(axes, MILESTONES, strict=True):
            _heatmap(ax, d[d["event"] == event], agents, systems, src.n_runs)
            ax.set_title(names[event], fontsize=9)
        sub.suptitle(f"{titles[src.label]}: {describe_runs(src).replace('median and 5-95% range', 'median month')}",
                     fontsize=10, fontweight="normal", x=0.01, ha="left")
    F.legend_outside(rows[len(sources) - 1], [Patch(color=c, label=n) for c, n in zip(SHADES, BIN_NAMES, strict=True)],
                     ncols=len(SHADES), title="months after the first named agent")
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        "Cell: the month (YY-MM) the agent first had GPUs of that system online, or first had one training cluster "
        "of at least the scenario's at-scale threshold of that system; shade: months after the first named agent "
        "(bold: first); empty: never in the run; '*': not every run of a "
        "sweep reached it (the median is over those that did). Generations some buyer already runs at the start "
        "raise no firsts; the rest of the market, an aggregate, is never first and is not shown."))
    return [F.save(fig, out, NAME, TITLE, {"": data}, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
