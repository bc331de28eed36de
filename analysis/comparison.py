"""Comparison: each input minus the first (the baseline), with the spread that seeds alone give as a noise band.

Panels: total H100e over time, NVIDIA revenue per calendar year, and the months each generation's first online and
first at-scale cluster come later (or earlier) than in the baseline. Runs with the same seed are paired; the grey
band is 5-95% of the differences between two seeds of the baseline, so an effect inside it is not told apart from
chance. Needs two or more inputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import input_titles
from analysis.summaries import systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "comparison"
TITLE = "Scenario minus baseline"
NOISE_COLOR = "0.82"


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    """Differences against the first input: total H100e per month, NVIDIA revenue per fully simulated calendar
    year, and the month of each generation's first online and first at-scale cluster (named agents), in months."""
    if len(rs.sources) < 2:
        raise F.NotApplicable(f"{rs.sources[0].path}: a comparison needs two or more result or sweep folders "
                              f"(got 1)")
    base = rs.labels[0]
    seeds = rs.runs[["label", "run", "seed"]]
    totals = O.totals(rs.agents)[["label", "run", "date", "total_h100e"]]
    yearly = O.revenue(rs.market, "calendar_year")[["label", "run", "year", "nvidia_revenue_usd"]]
    firsts = O.firsts(rs.events, rs.agents, which=["first_online", "first_cluster_at_scale"])
    start = rs.agents.groupby(["label", "run"])["date"].min()
    firsts["month"] = O.months_between(firsts["date"], pd.Series(
        start.reindex(pd.MultiIndex.from_frame(firsts[["label", "run"]])).to_numpy(), index=firsts.index))
    every = rs.runs[["label", "run"]].merge(pd.DataFrame({"event": ["first_online", "first_cluster_at_scale"]}),
                                            how="cross")
    every = every.merge(pd.DataFrame({"system": sorted(set(firsts["system"]))}), how="cross")
    firsts = every.merge(firsts[["label", "run", "event", "system", "month"]], how="left")
    return {"h100e": O.differences(totals, seeds, ["date"], "total_h100e", base),
            "revenue": O.differences(yearly, seeds, ["year"], "nvidia_revenue_usd", base),
            "firsts": O.differences(firsts, seeds, ["event", "system"], "month", base)}


def _firsts_panel(ax, f: pd.DataFrame, event: str, labels: list[str], colors: dict[str, str], title: str) -> None:
    d = f[f["event"] == event]
    systems = systems_in(d["system"].unique())
    step = 0.7 / max(len(labels), 1)
    for j, system in enumerate(systems):
        s = d[d["system"] == system]
        if len(s) and not np.isnan(s["noise_p05"].iloc[0]):
            ax.fill_betweenx([j - 0.4, j + 0.4], s["noise_p05"].iloc[0], s["noise_p95"].iloc[0], color=NOISE_COLOR,
                             linewidth=0)
        for i, label in enumerate(labels):
            r = s[s["label"] == label]
            if r.empty or np.isnan(r["delta"].iloc[0]):
                continue
            r = r.iloc[0]
            y = j + (i - (len(labels) - 1) / 2) * step
            if not np.isnan(r["delta_p05"]):
                ax.plot([r["delta_p05"], r["delta_p95"]], [y, y], color=colors[label], linewidth=1.5)
            ax.plot([r["delta"]], [y], marker="o", markersize=5, color=colors[label], linestyle="none")
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.set_yticks(range(len(systems)), [F.sys_name(s) for s in systems], fontsize=8)
    ax.set_ylim(len(systems) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("months later than in the baseline (negative: earlier)")
    ax.set_title(title, fontsize=9)


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    titles = input_titles(rs)
    base, others = rs.labels[0], rs.labels[1:]
    colors = F.label_colors(rs.labels)
    fig = F.new_figure(10.0)
    body = fig.subfigures(1, 1)
    axd = body.subplot_mosaic([["h100e", "revenue"], ["online", "scale"]])
    h = t["h100e"]
    ax = axd["h100e"]
    noise = h[h["label"] == others[0]]
    if noise["noise_p05"].notna().any():
        F.band(ax, noise["date"], noise["noise_p05"] / 1e6, noise["noise_p95"] / 1e6, NOISE_COLOR, alpha=1.0)
    for label in others:
        d = h[h["label"] == label]
        ax.plot(d["date"], d["delta"] / 1e6, color=colors[label], linewidth=1.8)
        if d["delta_p05"].notna().any():
            F.band(ax, d["date"], d["delta_p05"] / 1e6, d["delta_p95"] / 1e6, colors[label], alpha=0.15)
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.set_ylabel("difference in H100e (millions)")
    ax.set_title("total H100e online", fontsize=9)
    F.date_axis(ax, h["date"].min(), h["date"].max())
    rev = t["revenue"]
    ax = axd["revenue"]
    years = sorted(rev["year"].unique())
    width = 0.8 / max(len(others), 1)
    for k, year in enumerate(years):
        n = rev[(rev["year"] == year)].iloc[0]
        if not np.isnan(n["noise_p05"]):
            ax.fill_between([k - 0.45, k + 0.45], n["noise_p05"] / 1e9, n["noise_p95"] / 1e9, color=NOISE_COLOR,
                            linewidth=0)
    for i, label in enumerate(others):
        r = rev[rev["label"] == label].set_index("year").reindex(years)
        x = np.arange(len(years)) + (i - (len(others) - 1) / 2) * width
        err = None
        if r["delta_p05"].notna().any():
            err = np.vstack([r["delta"] - r["delta_p05"], r["delta_p95"] - r["delta"]]) / 1e9
        ax.bar(x, r["delta"] / 1e9, width=width, color=colors[label], yerr=err, error_kw={"elinewidth": 1,
                                                                                          "capsize": 2})
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.set_xticks(np.arange(len(years)), [str(y) for y in years])
    ax.set_ylabel("difference in USD bn per year")
    ax.set_title("NVIDIA revenue per calendar year (fully simulated years)", fontsize=9)
    if not years:
        F.note(ax, "no fully simulated calendar year")
    _firsts_panel(axd["online"], t["firsts"], "first_online", others, colors, "first online, per generation")
    at_scale = rs.sources[0].scenario_params.get("at_scale_gpus")
    _firsts_panel(axd["scale"], t["firsts"], "first_cluster_at_scale", others, colors,
                  "first cluster at scale" + (f" (>= {at_scale:,} GPUs)" if isinstance(at_scale, int) else ""))
    handles = []
    for label in others:
        src = rs.source(label)
        paired = t["h100e"].loc[t["h100e"]["label"] == label, "paired"].any()
        what = (f"median and 5-95% of {src.n_runs} seed-paired differences" if paired and src.n_runs > 1
                else "paired by seed" if paired else "difference of medians (no common seeds)")
        handles.append(Line2D([], [], color=colors[label], linewidth=6, label=f"{titles[label]} ({what})"))
    base_src = rs.source(base)
    handles.append(Patch(color=NOISE_COLOR, label=(f"seeds alone: 5-95% of differences between two of the "
                                                   f"baseline's {base_src.n_runs} runs") if base_src.n_runs > 1
                         else "no noise band: the baseline is a single run (give a sweep of seeds)"))
    F.legend_outside(body, handles, ncols=2)
    F.title(fig, f"{TITLE}: each input minus {titles[base]}")
    notes = F.definitions(fig, (
        f"Baseline: the first input ({titles[base]}). Differences are taken per seed where both inputs ran the "
        "same seed (a sweep's run i uses seed base + i), so the story of each input, not the seed, is what "
        "differs; H100e: all owners; revenue: NVIDIA's, per fully simulated calendar year; firsts: the month the "
        "first named agent reached the milestone (runs that never did are left out). The noise band is what "
        "changing the seed alone does; effects inside it are not told apart from chance."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
