"""Revenue: NVIDIA's revenue per fiscal quarter beside every reported data-center quarter, and what shipped.

Top: the model's revenue per NVIDIA fiscal quarter (bars; several inputs side by side; a sweep's bar is the median
with its 5-95% range) and the reported data-center revenue of every quarter on record. Middle: model minus
reported, in percent of reported, for the quarters both have. Bottom: GPUs shipped per fiscal quarter by system
(the first input), which is what moves the bars from quarter to quarter.
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

NAME = "revenue"
TITLE = "NVIDIA revenue per fiscal quarter beside reported data-center revenue"


def revenue_table(rs: ResultSet) -> pd.DataFrame:
    """Per label and fiscal quarter: runs, months simulated (partial quarters at the run's edges are kept and
    flagged), model revenue (median, 5-95%), reported data-center revenue and its source, model vs reported."""
    q = O.revenue(rs.market, "fiscal_quarter", partial="flag")
    keys = ["period", "fiscal_year", "fiscal_quarter", "period_start", "period_end", "months", "complete"]
    out = O.band(q, keys, "nvidia_revenue_usd")
    rep = record.revenue()[["quarter", "reported_dc_revenue_usd", "source_url"]].rename(columns={"quarter": "period"})
    out = out.merge(rep, on="period", how="left")
    out["model_vs_reported"] = (out["nvidia_revenue_usd"] / out["reported_dc_revenue_usd"] - 1).where(out["complete"])
    return out


def shipments_table(rs: ResultSet) -> pd.DataFrame:
    """Per label, fiscal quarter and system: GPUs shipped (median, 5-95%) and units."""
    ship = O.shipments(rs.market, "fiscal_quarter", partial="flag")
    return O.band(ship, ["period", "period_start", "months", "complete", "system"], "gpus")


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    rev, ship = revenue_table(rs), shipments_table(rs)
    reported = record.revenue()
    titles = input_titles(rs)
    colors = F.label_colors(rs.labels)
    fig = F.new_figure(10.5)
    body = fig.subfigures(1, 1)
    ax, ratio, mix = body.subplots(3, 1, sharex=True, height_ratios=[1.5, 0.7, 1.1])
    n = len(rs.labels)
    width = 80 / n
    for i, src in enumerate(rs.sources):
        r = rev[rev["label"] == src.label]
        x = r["period_start"] + pd.to_timedelta(45 + (i - (n - 1) / 2) * width, unit="D")
        full = r["complete"].to_numpy()
        err = None
        if src.n_runs > 1:
            err = np.vstack([r["nvidia_revenue_usd"] - r["nvidia_revenue_usd_p05"],
                             r["nvidia_revenue_usd_p95"] - r["nvidia_revenue_usd"]]) / 1e9
        F.bars(ax, x[full], r.loc[full, "nvidia_revenue_usd"] / 1e9, width, colors[src.label], alpha=0.85)
        if err is not None:
            ax.errorbar(x[full], r.loc[full, "nvidia_revenue_usd"] / 1e9, yerr=err[:, full], fmt="none",
                        ecolor="0.2", elinewidth=0.8, capsize=1.5)
        F.bars(ax, x[~full], r.loc[~full, "nvidia_revenue_usd"] / 1e9, width, colors[src.label], alpha=0.3)
        both = r[r["model_vs_reported"].notna()]
        F.bars(ratio, both["period_start"] + pd.to_timedelta(45 + (i - (n - 1) / 2) * width, unit="D"),
               both["model_vs_reported"], width, colors[src.label], alpha=0.85)
    ax.plot(reported["quarter_start"] + pd.Timedelta(days=45), reported["dc_revenue_usd_bn"], marker="D",
            color=F.RECORD_COLOR, markerfacecolor="white", markeredgewidth=1.3, linewidth=1.2, markersize=5, zorder=5)
    last = reported.iloc[-1]
    ax.annotate(f"{last['quarter']}: ${last['dc_revenue_usd_bn']:g}bn", (last["quarter_start"] + pd.Timedelta(days=45),
                last["dc_revenue_usd_bn"]), xytext=(6, 0), textcoords="offset points", fontsize=7.5, va="center")
    ax.set_ylabel("USD bn per quarter")
    ax.set_title("revenue per NVIDIA fiscal quarter (Q1 = Feb-Apr); faded: quarters the run covers only in part",
                 loc="left", fontsize=9)
    ratio.axhline(0, color="0.3", linewidth=0.8)
    for level in (-0.15, 0.15):
        ratio.axhline(level, color="0.5", linewidth=0.8, linestyle=":")
    F.percent(ratio)
    ratio.set_ylabel("model vs\nreported")
    ratio.set_title("model minus reported, share of reported (dotted: +-15%)", loc="left", fontsize=9)
    first = rs.sources[0]
    s = ship[ship["label"] == first.label]
    systems = [k for k in systems_in(s["system"].unique()) if (s.loc[s["system"] == k, "gpus"] > 0).any()]
    wide = s.pivot(index="period_start", columns="system", values="gpus").reindex(columns=systems).fillna(0.0)
    bottom = np.zeros(len(wide))
    for k in systems:
        F.bars(mix, wide.index + pd.Timedelta(days=45), wide[k] / 1e6, 80, F.system_color(k), bottom=bottom)
        bottom += wide[k].to_numpy() / 1e6
    mix.set_ylabel("GPUs shipped\n(millions)")
    mix.set_title(f"GPUs shipped per fiscal quarter by system ({titles[first.label]}"
                  + (", median of runs" if first.n_runs > 1 else "") + ")", loc="left", fontsize=9)
    lo = min(rev["period_start"].min(), reported["quarter_start"].min())
    hi = rev["period_end"].max()
    F.date_axis(mix, lo, hi)
    handles = [Patch(color=colors[s.label], label=titles[s.label] + (" (median, 5-95%)" if s.n_runs > 1 else ""))
               for s in rs.sources]
    handles.append(Line2D([], [], marker="D", color=F.RECORD_COLOR, markerfacecolor="white",
                          label="reported: NVIDIA data-center revenue"))
    handles += [Patch(color=F.system_color(k), label=F.sys_name(k)) for k in systems]
    F.legend_outside(body, handles, ncols=6)
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        "Model: nvidia_revenue_usd, NVIDIA's share of what buyers pay for the systems shipped in a month plus "
        "networking, summed over NVIDIA's fiscal quarters (fiscal year N runs February of N-1 to January of N; "
        "months stand in for NVIDIA's 13-week quarters). Reported: Data Center segment revenue of every quarter "
        "from Q1 FY2024 to the latest, Q1 FY2027 (analysis/data/nvidia_dc_revenue.csv, a source per quarter; Q1 "
        "FY2027 is the first under NVIDIA's new segment framework). GPUs shipped: systems shipped x the catalog's "
        "GPUs per system."))
    return [F.save(fig, out, NAME, TITLE, {"": rev, "shipments": ship}, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
