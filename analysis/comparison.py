"""Comparison: key outcomes of two or more scenarios (result or sweep folders) overlaid, coloured by scenario.

Panels: total H100e, NVIDIA revenue per calendar year, the largest single cluster, and when each generation is first
brought online by anyone. Sweeps show medians with 5-95% ranges.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.summaries import systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "comparison"
TITLE = "Scenario comparison"


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    """Bands across runs of each input: total H100e and the largest named cluster by month, NVIDIA revenue per fully
    simulated calendar year, and the month each system first came online (named agents)."""
    runs = {s.label: s.n_runs for s in rs.sources}
    totals = O.totals(rs.agents)
    yearly = O.revenue(rs.market, "calendar_year")
    firsts = O.firsts(rs.events, rs.agents, which=["first_online"])
    return {
        "h100e": O.band(totals, ["date"], "total_h100e"),
        "revenue": O.band(yearly, ["year"], "nvidia_revenue_usd"),
        "cluster": O.band(totals, ["date"], "largest_cluster_gpus"),
        "firsts": O.date_band(firsts, ["system"], runs),
    }


def _lines(ax, d: pd.DataFrame, value: str, colors: dict[str, str], scale: float) -> None:
    for label, s in d.groupby("label", sort=False):
        ax.plot(s["date"], s[value] / scale, color=colors[label], linewidth=1.8)
        if (s["runs"] > 1).any():
            ax.fill_between(s["date"], s[f"{value}_p05"] / scale, s[f"{value}_p95"] / scale, color=colors[label],
                            alpha=0.18, linewidth=0)
    F.date_axis(ax)


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    if len(rs.sources) < 2:
        raise F.NotApplicable(f"{rs.sources[0].path}: a comparison needs two or more result or sweep folders "
                              f"(got 1)")
    t = tables(rs)
    colors = F.label_colors(rs.labels)
    fig = F.new_figure(9.5)
    axd = fig.subplot_mosaic([["h100e", "revenue"], ["cluster", "firsts"]])
    _lines(axd["h100e"], t["h100e"], "total_h100e", colors, 1e6)
    axd["h100e"].set_ylabel("H100e (millions)")
    axd["h100e"].set_title("Total H100-equivalent capacity")

    rev = t["revenue"]
    years = sorted(rev["year"].unique())
    width = 0.8 / len(rs.labels)
    ax = axd["revenue"]
    for i, label in enumerate(rs.labels):
        r = rev[rev["label"] == label].set_index("year").reindex(years)
        x = np.arange(len(years)) + (i - (len(rs.labels) - 1) / 2) * width
        err = None
        if (r["runs"] > 1).any():
            err = np.vstack([r["nvidia_revenue_usd"] - r["nvidia_revenue_usd_p05"],
                             r["nvidia_revenue_usd_p95"] - r["nvidia_revenue_usd"]]) / 1e9
        ax.bar(x, r["nvidia_revenue_usd"] / 1e9, width=width, color=colors[label], yerr=err,
               error_kw={"elinewidth": 1, "capsize": 2})
    ax.set_xticks(np.arange(len(years)), [str(y) for y in years])
    ax.set_xlabel("calendar year (fully simulated years)")
    ax.set_ylabel("NVIDIA revenue (USD bn per year)")
    ax.set_title("NVIDIA revenue per calendar year")
    if not years:
        F.note(ax, "no fully simulated calendar year")

    _lines(axd["cluster"], t["cluster"], "largest_cluster_gpus", colors, 1e3)
    axd["cluster"].set_ylabel("largest single cluster (thousand GPUs)")
    axd["cluster"].set_title("Largest cluster of a named agent")

    ax = axd["firsts"]
    f = t["firsts"]
    systems = systems_in(f["system"].unique())
    step = 0.7 / len(rs.labels)
    for i, label in enumerate(rs.labels):
        d = f[f["label"] == label].set_index("system")
        for j, system in enumerate(systems):
            if system not in d.index:
                continue
            row = d.loc[system]
            y = j + (i - (len(rs.labels) - 1) / 2) * step
            if row["runs"] > 1:
                ax.plot([row["date_p05"], row["date_p95"]], [y, y], color=colors[label], linewidth=1.5)
            ax.plot([row["date"]], [y], marker="o", markersize=5, color=colors[label], linestyle="none")
    ax.set_yticks(range(len(systems)), [F.sys_name(s) for s in systems])
    ax.set_ylim(len(systems) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    F.date_axis(ax)
    ax.set_ylabel("system")
    ax.set_title("First brought online by a named agent")

    def describe(label: str) -> str:
        n = rs.source(label).n_runs
        return f"{label} (median, 5-95% of {n} runs)" if n > 1 else label

    handles = [Line2D([], [], color=colors[lab], linewidth=6, label=describe(lab)) for lab in rs.labels]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4), title="scenario")
    fig.suptitle(TITLE + ": " + " vs ".join(rs.labels))
    return [F.save(fig, out, NAME, TITLE, t)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
