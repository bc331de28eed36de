"""Training runs: the labs' frontier runs (FLOP) over time beside the public record of notable frontier runs.

Each `training_run_started` event is a dot (its FLOP and start month; a sweep's runs are all drawn, faint); Epoch
AI's estimates of notable runs are labelled diamonds; the scenario's own frontier trend (an input: its 2024 run and
growth per year) is the dashed line, and its reference run the dotted one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, NullLocator

from analysis import figure as F
from analysis import record
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import input_titles
from model.results import ResultSet
from model.results import outcomes as O

NAME = "training"
TITLE = "Labs' training runs (FLOP) beside the public record of frontier runs"


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    runs = O.training_runs(rs.events, rs.agents)
    if runs.empty:
        raise F.NotApplicable(f"{rs.sources[0].path}: no training_run_started events in the results")
    rec = record.frontier_runs()[["model", "developer", "agent", "date", "month", "training_flop", "hardware",
                                 "hardware_count", "kind", "source_url"]]
    return {"": runs, "record": rec}


def trend(params: dict, dates: pd.Series) -> pd.Series | None:
    """The scenario's frontier trend at `dates`: flop_2024 x growth_per_year^(years since 2024-01)."""
    frontier = params.get("frontier") or {}
    base, growth = frontier.get("flop_2024"), frontier.get("growth_per_year")
    if not isinstance(base, int | float) or not isinstance(growth, int | float):
        return None
    years = (dates - pd.Timestamp("2024-01-01")).dt.days / 365.25
    return base * growth ** years


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    runs, rec = t[""], t["record"]
    titles = input_titles(rs)
    sources = rs.sources[:F.MAX_ROWS]
    fig = F.new_figure(4.2 * len(sources) + 1.6)
    rows = np.atleast_1d(fig.subfigures(len(sources), 1, squeeze=False)).ravel()
    lo = min(rs.agents["date"].min(), rec["month"].min()) - pd.DateOffset(months=3)
    hi = rs.agents["date"].max()
    labs = F.order_agents(list(dict.fromkeys(runs["agent"])), F.kind_of(rs.agents))
    for sub, src in zip(rows, sources, strict=False):
        ax = sub.subplots()
        d = runs[runs["label"] == src.label]
        alpha = 0.9 if src.n_runs == 1 else max(0.08, 0.9 / src.n_runs ** 0.5)
        for lab in labs:
            g = d[d["agent"] == lab]
            ax.scatter(g["date"], g["flop"], s=14, color=F.agent_color(lab), alpha=alpha, linewidths=0, zorder=3)
        months = pd.Series(pd.date_range(lo, hi, freq="MS"))
        line = trend(src.scenario_params, months)
        if line is not None:
            ax.plot(months, line, color="0.35", linestyle="--", linewidth=1.2, zorder=2)
        ref = src.scenario_params.get("reference_frontier_flop")
        if isinstance(ref, int | float):
            ax.axhline(ref, color="0.35", linestyle=":", linewidth=1.2)
            ax.annotate(f"reference run {ref:.0e} FLOP".replace("e+", "e"), (hi, ref), xytext=(-4, 3),
                        textcoords="offset points", ha="right", fontsize=7.5, color="0.3")
        ax.scatter(rec["month"], rec["training_flop"], marker="D", s=34, facecolor="white",
                   edgecolor=F.RECORD_COLOR, linewidths=1.3, zorder=5)
        for r in rec.itertuples():
            ax.annotate(r.model, (r.month, r.training_flop), xytext=(4, -9), textcoords="offset points",
                        fontsize=6.5, color="0.25")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"1e{np.log10(v):.0f}" if v > 0 else ""))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_ylabel("training compute (FLOP, log scale)")
        F.date_axis(ax, lo, hi)
        what = f"{src.n_runs} runs, every training run drawn" if src.n_runs > 1 else "one run"
        ax.set_title(f"{titles[src.label]}: {what}", loc="left", fontsize=9.5, fontweight="normal")
    handles = [Line2D([], [], linestyle="none", marker="o", color=F.agent_color(a), label=F.agent_label(a))
               for a in labs]
    handles += [Line2D([], [], linestyle="none", marker="D", markerfacecolor="white", markeredgecolor=F.RECORD_COLOR,
                       label="notable frontier runs (Epoch AI estimates)"),
                Line2D([], [], color="0.35", linestyle="--", label="the scenario's frontier trend (an input)")]
    F.legend_outside(rows[len(sources) - 1], handles, ncols=min(len(handles), 4))
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        "Model: each training_run_started event, at its start month, with the run's total FLOP (labs follow the "
        "scenario's frontier trend or, where that does not fit in its longest run on the most capable cluster they "
        "can reach, the largest run that does). Record: analysis/data/frontier_runs.csv, Epoch AI's estimates of "
        "total training compute at the model's release (release comes after training; Epoch gives no estimate for "
        "most 2025-2026 flagships). Non-NVIDIA runs (Gemini on TPUs) are on record; the model simulates NVIDIA "
        "systems only."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
