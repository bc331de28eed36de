"""Frontier: days to train the scenario's reference frontier run on each agent's largest cluster, over time.

Lower is faster; an agent appears once it has a cluster the run fits on. Sweeps show the median over the runs where
the agent had such a cluster that month, and the 5-95% range.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.summaries import kinds_in
from model.results import ResultSet
from model.results.outcomes import band

NAME = "frontier"
TITLE = "Days to train the reference frontier run on each agent's largest cluster"


def table(rs: ResultSet) -> pd.DataFrame:
    """label, date, agent, kind, runs (with a value), frontier_run_days (median), _p05, _p95."""
    return band(rs.agents, ["date", "agent", "kind"], "frontier_run_days")


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    data = table(rs)
    kinds = kinds_in(rs.agents)
    nrows = -(-len(kinds) // 2)
    fig = F.new_figure(nrows * 3.3 * len(rs.sources) + 0.7 * len(rs.sources) + 0.4)
    subfigs = np.atleast_1d(fig.subfigures(len(rs.sources), 1, squeeze=False)).ravel()
    for sub, src in zip(subfigs, rs.sources, strict=True):
        d = data[data["label"] == src.label]
        F.kind_panels(sub, d, "frontier_run_days", kinds, "days to train (log scale)", True,
                      "no cluster of this kind fits the run", descending=False,
                      hidden_text="not shown (no cluster fits)", legend_loc="upper right")
        limit = (src.scenario_params.get("frontier") or {}).get("max_run_days")  # labs start no longer run
        for ax in sub.axes:
            if ax.get_visible() and ax.lines and isinstance(limit, int | float):
                ax.axhline(limit, color="0.3", linestyle="--", linewidth=1,
                           label=f"longest run labs start ({limit:g} days)")
                ax.legend(title=None, loc="upper right", fontsize=8)
        what = (f"median and 5-95% range across {src.n_runs} runs" if src.n_runs > 1 else "one run")
        sub.suptitle(f"{src.label}: {what}", fontsize=10, fontweight="normal", x=0.01, ha="left")
    flops = {s.scenario_params.get("reference_frontier_flop") for s in rs.sources}
    ref = f" ({flops.pop():.0e} FLOP)" if len(flops) == 1 and None not in flops else ""
    fig.suptitle(TITLE + ref.replace("e+", "e"))
    return [F.save(fig, out, NAME, TITLE, {"": data})]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
