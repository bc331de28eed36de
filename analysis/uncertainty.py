"""Uncertainty: fan charts of a sweep's outcomes, and when each generation first arrives across its runs.

One row per sweep: total H100e and NVIDIA revenue per fiscal quarter as fans (median, 50% and 90% of runs; the
reported quarters beside the revenue), and the distribution of the month each generation first came online (named
agents), a dot per run. Needs a sweep of three or more runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis import figure as F
from analysis import record
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import input_titles
from analysis.summaries import systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "uncertainty"
TITLE = "Uncertainty across runs: fans of compute and revenue, and when each generation first arrives"
MIN_RUNS = 3
FAN_COLOR = "#2166ac"


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    sweeps = [s.label for s in rs.sources if s.n_runs >= MIN_RUNS]
    if not sweeps:
        raise F.NotApplicable(f"{rs.sources[0].path}: fan charts need a sweep of at least {MIN_RUNS} runs")
    agents = rs.agents[rs.agents["label"].isin(sweeps)]
    market = rs.market[rs.market["label"].isin(sweeps)]
    events = rs.events[rs.events["label"].isin(sweeps)]
    h100e = O.fan(O.totals(agents), ["date"], "total_h100e")
    revenue = O.fan(O.revenue(market, "fiscal_quarter", partial="flag"),
                    ["period", "period_start", "months", "complete"], "nvidia_revenue_usd")
    firsts = O.firsts(events, agents, which=["first_online"])[["label", "run", "system", "date", "agent"]]
    return {"h100e": h100e, "revenue": revenue, "firsts": firsts}


def _fan(ax, x, d: pd.DataFrame, value: str, scale: float) -> None:
    F.band(ax, x, d[f"{value}_p05"] / scale, d[f"{value}_p95"] / scale, FAN_COLOR, alpha=0.15)
    F.band(ax, x, d[f"{value}_p25"] / scale, d[f"{value}_p75"] / scale, FAN_COLOR, alpha=0.3)
    ax.plot(x, d[value] / scale, color=FAN_COLOR, linewidth=1.6)


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    titles = input_titles(rs)
    sweeps = [s for s in rs.sources if s.n_runs >= MIN_RUNS][:F.MAX_ROWS]
    reported = record.revenue()
    fig = F.new_figure(3.6 * len(sweeps) + 1.7)
    rows = np.atleast_1d(fig.subfigures(len(sweeps), 1, squeeze=False)).ravel()
    rng = np.random.default_rng(0)  # jitter of the dots only
    for sub, src in zip(rows, sweeps, strict=False):
        a, b, c = sub.subplots(1, 3, width_ratios=[1, 1.2, 1])
        h = t["h100e"][t["h100e"]["label"] == src.label]
        _fan(a, h["date"], h, "total_h100e", 1e6)
        a.set_ylabel("total H100e (millions)")
        a.set_title("total H100e online", fontsize=9)
        F.date_axis(a, h["date"].min(), h["date"].max(), narrow=True)
        r = t["revenue"][(t["revenue"]["label"] == src.label) & t["revenue"]["complete"]]
        mid = r["period_start"] + pd.Timedelta(days=45)
        _fan(b, mid, r, "nvidia_revenue_usd", 1e9)
        b.plot(reported["quarter_start"] + pd.Timedelta(days=45), reported["dc_revenue_usd_bn"], marker="D",
               markersize=4, color=F.RECORD_COLOR, markerfacecolor="white", linewidth=1)
        b.set_ylabel("USD bn per fiscal quarter")
        b.set_title("NVIDIA revenue per fiscal quarter", fontsize=9)
        F.date_axis(b, min(mid.min(), reported["quarter_start"].min()), mid.max(), narrow=True)
        f = t["firsts"][t["firsts"]["label"] == src.label]
        systems = systems_in(f["system"].unique())
        for j, system in enumerate(systems):
            dates = f.loc[f["system"] == system, "date"]
            y = j + rng.uniform(-0.22, 0.22, len(dates))
            c.scatter(dates, y, s=12, color=F.system_color(system), alpha=0.75, linewidths=0)
            if len(dates):
                lo, med, hi = O.month_quantiles(dates)
                c.plot([lo, hi], [j, j], color="0.2", linewidth=1)
                c.plot([med], [j], marker="|", markersize=12, color="0.1")
            if len(dates) < src.n_runs:
                c.annotate(f"{len(dates)}/{src.n_runs} runs", (1.0, j), xycoords=("axes fraction", "data"),
                           ha="right", va="center", fontsize=7, color="0.35")
        c.set_yticks(range(len(systems)), [F.sys_name(s) for s in systems], fontsize=7.5)
        c.set_ylim(len(systems) - 0.5, -0.5)
        c.grid(axis="y", visible=False)
        c.set_title("month each generation first came online", fontsize=9)
        if len(f):
            F.date_axis(c, f["date"].min() - pd.DateOffset(months=2), f["date"].max() + pd.DateOffset(months=2),
                        narrow=True)
        sub.suptitle(f"{titles[src.label]}: {src.n_runs} runs", fontsize=10, fontweight="normal", x=0.01, ha="left")
    handles = [Line2D([], [], color=FAN_COLOR, linewidth=2, label="median of runs"),
               Patch(color=FAN_COLOR, alpha=0.45, label="50% of runs"),
               Patch(color=FAN_COLOR, alpha=0.2, label="90% of runs"),
               Line2D([], [], marker="D", color=F.RECORD_COLOR, markerfacecolor="white",
                      label="reported data-center revenue"),
               Line2D([], [], marker="o", linestyle="none", color="0.5", label="one run's first month (jittered)"),
               Line2D([], [], marker="|", markersize=10, color="0.1", label="median; line: 5-95% of runs")]
    F.legend_outside(rows[len(sweeps) - 1], handles, ncols=6)
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        "Fans: quantiles across the sweep's runs at each month (H100e, all owners) or fiscal quarter (NVIDIA "
        "revenue; quarters the run covers in part are left out); the 50% band holds the middle half of the runs, "
        "the 90% band all but the 5% at each end. First online: the month the first named agent had GPUs of the "
        "system online in each run (months by the inverted CDF, so the median is a month some run saw); runs "
        "that never reached it are counted at the right."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
