"""Generations: installed GPUs by system over time, stacked, one panel per agent kind (medians for sweeps)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.summaries import kinds_in, systems_in
from model.results import ResultSet
from model.results.outcomes import band

NAME = "generations"
TITLE = "Installed GPUs by system and agent kind"
PREFIX = "gpus_online_"


def table(rs: ResultSet) -> pd.DataFrame:
    """label, date, kind, system, runs, gpus (median over runs of the kind's total), gpus_p05, gpus_p95."""
    systems = systems_in(rs.agents.columns, PREFIX)
    cols = [PREFIX + s for s in systems]
    per_kind = rs.agents.groupby(["label", "run", "date", "kind"], sort=False)[cols].sum().reset_index()
    long = per_kind.melt(id_vars=["label", "run", "date", "kind"], value_vars=cols, var_name="system",
                         value_name="gpus")
    long["system"] = long["system"].str.removeprefix(PREFIX)
    return band(long, ["date", "kind", "system"], "gpus")


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    data = table(rs)
    kinds = kinds_in(rs.agents)
    systems = systems_in(rs.agents.columns, PREFIX)
    used = [s for s in systems if (data.loc[data["system"] == s, "gpus"] > 0).any()]
    ncols = 2 if len(kinds) > 1 else 1
    nrows = math.ceil(len(kinds) / ncols)
    fig = F.new_figure(nrows * 3.3 * len(rs.sources) + 0.7 * len(rs.sources) + 0.4)
    subfigs = np.atleast_1d(fig.subfigures(len(rs.sources), 1, squeeze=False)).ravel()
    handles = None
    for sub, src in zip(subfigs, rs.sources, strict=True):
        d = data[data["label"] == src.label]
        axes = np.atleast_1d(sub.subplots(nrows, ncols, sharex=True, squeeze=False)).ravel()
        for ax in axes[len(kinds):]:
            ax.set_visible(False)
        for ax, kind in zip(axes, kinds, strict=False):
            k = d[d["kind"] == kind].pivot(index="date", columns="system", values="gpus").reindex(columns=used)
            if k.fillna(0).to_numpy().sum() > 0:
                polys = ax.stackplot(k.index, *(k[s].fillna(0).to_numpy() for s in used),
                                     labels=[F.sys_name(s) for s in used], colors=[F.system_color(s) for s in used],
                                     linewidth=0.3, edgecolor="white")
                handles = handles or polys
                F.millions(ax)
                ax.set_ylabel("GPUs online (millions)")
            else:
                F.note(ax, "no GPUs of their own")
                ax.set_yticks([])
            ax.set_title(F.KIND_TITLES.get(kind, kind))
            ax.margins(x=0)
            F.date_axis(ax)
            ax.tick_params(labelbottom=True)
        what = (f"median across {src.n_runs} runs of each system's total (stacked)" if src.n_runs > 1
                else "one run")
        sub.suptitle(f"{src.label}: {what}", fontsize=10, fontweight="normal", x=0.01, ha="left")
    if handles:
        fig.legend(handles, [F.sys_name(s) for s in used], loc="outside lower center", ncols=min(len(used), 5),
                   title="system (GPUs, not racks)")
    fig.suptitle(TITLE)
    return [F.save(fig, out, NAME, TITLE, {"": data})]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
