"""Capacity: H100-equivalents online by agent over time, one panel per agent kind (median and 5-95% for sweeps)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.summaries import kinds_in
from model.results import ResultSet
from model.results.outcomes import band

NAME = "capacity"
TITLE = "H100-equivalent capacity by agent"


def table(rs: ResultSet) -> pd.DataFrame:
    """label, date, agent, kind, runs, h100e (median over runs), h100e_p05, h100e_p95."""
    return band(rs.agents, ["date", "agent", "kind"], "h100e")


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    data = table(rs)
    kinds = kinds_in(rs.agents)
    rows_per_label = math.ceil(len(kinds) / 2)
    panel_h = 3.3
    fig = F.new_figure(rows_per_label * panel_h * len(rs.sources) + 0.7 * len(rs.sources) + 0.4)
    subfigs = np.atleast_1d(fig.subfigures(len(rs.sources), 1, squeeze=False)).ravel()
    for sub, src in zip(subfigs, rs.sources, strict=True):
        d = data[data["label"] == src.label]
        F.kind_panels(sub, d, "h100e", kinds, "H100e (millions)" + (", log scale" if opts.log else ""),
                         opts.log, "no agent of this kind has capacity of its own")
        for ax in sub.axes:
            F.millions(ax)
        what = (f"median and 5-95% range across {src.n_runs} runs" if src.n_runs > 1 else "one run")
        sub.suptitle(f"{src.label}: {what}", fontsize=10, fontweight="normal", x=0.01, ha="left")
    fig.suptitle(f"{TITLE} (1 H100e = 989 dense BF16 TFLOP/s)")
    return [F.save(fig, out, NAME, TITLE, {"": data})]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
