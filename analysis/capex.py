"""Capex: what each owner has paid for accelerator systems since the run's start, beside the capex it announced.

One small panel per company the public record gives calendar-year capex for, every input a line (cumulative
spending on systems since the run's first month); markers: the announced capex accumulated over the same
calendar years (reported where reported, else the latest guidance, its range as a bar), and the same times the
scenario's share of capex that goes to AI systems (the model's budget for them).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from analysis import figure as F
from analysis import record
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import input_titles
from model.results import ResultSet
from model.results import outcomes as O

NAME = "capex"
TITLE = "Cumulative spending on accelerator systems beside announced capex"


def cumulative_record(start_year: int, last_year: int) -> pd.DataFrame:
    """Announced capex per company accumulated over calendar years, from its first year with a figure at or after
    `start_year` until the year before the first gap: agent, company, since (the first year), year, date (that
    December), capex_usd_cumulative (and _low/_high), kinds."""
    annual = record.annual_capex()
    rows = []
    for agent, g in annual.groupby("agent", sort=False):
        g = g.set_index("year")
        years = [y for y in g.index if start_year <= y <= last_year]
        if not years:
            continue
        since = min(years)
        total = low = high = 0.0
        kinds = []
        for year in range(since, last_year + 1):
            if year not in g.index:
                break
            r = g.loc[year]
            total, low, high = total + r["capex_usd"], low + r["capex_usd_low"], high + r["capex_usd_high"]
            kinds.append(str(r["kind"]))
            rows.append({"agent": agent, "company": r["company"], "since": since, "year": year,
                         "date": pd.Timestamp(year=year, month=12, day=1), "capex_usd_cumulative": total,
                         "capex_usd_cumulative_low": low, "capex_usd_cumulative_high": high,
                         "kinds": "+".join(kinds)})
    return pd.DataFrame(rows, columns=["agent", "company", "since", "year", "date", "capex_usd_cumulative",
                                       "capex_usd_cumulative_low", "capex_usd_cumulative_high", "kinds"])


def since_year(agents: pd.DataFrame, since: dict[str, int]) -> pd.DataFrame:
    """Each run's cumulative spending of each agent counted from January of `since[agent]` (the run's start for the
    others): the cumulative column less its value in the December before (per run)."""
    a = agents[["label", "run", "date", "agent", "kind", "capex_usd_cumulative"]].copy()
    first = a.groupby(["label", "run", "agent"])["date"].transform("min")
    start = pd.to_datetime(a["agent"].map(lambda x: f"{since.get(x, 0)}-01-01" if x in since else None))
    start = start.where(start > first, first)
    keys = ["label", "run", "agent"]
    before = a[a["date"] == start - pd.DateOffset(months=1)].set_index(keys)["capex_usd_cumulative"]
    offset = before.reindex(pd.MultiIndex.from_frame(a[["label", "run", "agent"]])).fillna(0.0).to_numpy()
    a["capex_usd_cumulative"] = a["capex_usd_cumulative"] - offset
    return a[a["date"] >= start]


def ai_share(params: dict, agent: str, kind: str) -> float | None:
    """The scenario's share of an owner's capex that goes to AI systems (its own value, else its kind's)."""
    own = (params.get(kind) or {}).get(agent) or {}
    value = own.get("ai_systems_share", ((params.get("kinds") or {}).get(kind) or {}).get("ai_systems_share"))
    return float(value) if isinstance(value, int | float) else None


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    if "capex_usd_cumulative" not in rs.agents.columns:
        raise F.NotApplicable(f"{rs.sources[0].path}: no capex_usd_cumulative column in the agents table")
    start, end = rs.agents["date"].min(), rs.agents["date"].max()
    rec = cumulative_record(start.year if start.month == 1 else start.year + 1, end.year)
    rec = rec[rec["agent"].isin(set(rs.agents["agent"]))]
    model = O.band(since_year(rs.agents, rec.groupby("agent")["since"].min().to_dict()), ["date", "agent", "kind"],
                   "capex_usd_cumulative")
    params = rs.sources[0].scenario_params
    kinds = F.kind_of(rs.agents)
    rec["ai_systems_share"] = [ai_share(params, a, kinds.get(a, "")) for a in rec["agent"]]
    per_year = O.band(O.capex(rs.agents), ["agent", "kind", "period"], "capex_usd")
    return {"": model, "record": rec, "per_year": per_year}


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    t = tables(rs)
    model, rec = t[""], t["record"]
    if rec.empty:
        raise F.NotApplicable(f"{rs.sources[0].path}: no announced calendar-year capex covers the run's years")
    titles = input_titles(rs)
    colors = F.label_colors(rs.labels)
    owners = F.order_agents(list(dict.fromkeys(rec["agent"])), F.kind_of(rs.agents))
    ncols = min(len(owners), 4)
    fig = F.new_figure(2.7 * -(-len(owners) // ncols) + 2.0)
    body = fig.subfigures(1, 1)
    axes = F.grid_axes(body, len(owners), ncols=ncols, sharex=True)
    lo, hi = F.record_window(model["date"].min(), model["date"].max(), rec["date"].max())
    for ax, agent in zip(axes, owners, strict=False):
        for src in rs.sources:
            d = model[(model["label"] == src.label) & (model["agent"] == agent)]
            d = d[(d["date"] >= lo) & (d["date"] <= hi)]
            ax.plot(d["date"], d["capex_usd_cumulative"] / 1e9, color=colors[src.label], linewidth=1.7)
            if src.n_runs > 1:
                F.band(ax, d["date"], d["capex_usd_cumulative_p05"] / 1e9, d["capex_usd_cumulative_p95"] / 1e9,
                       colors[src.label])
        r = rec[rec["agent"] == agent]
        err = np.vstack([r["capex_usd_cumulative"] - r["capex_usd_cumulative_low"],
                         r["capex_usd_cumulative_high"] - r["capex_usd_cumulative"]]) / 1e9
        ax.errorbar(r["date"], r["capex_usd_cumulative"] / 1e9, yerr=err, linestyle="none", marker="o",
                    markersize=5.5, color=F.RECORD_COLOR, markerfacecolor=F.RECORD_COLOR, capsize=2, zorder=5)
        share = r["ai_systems_share"].dropna()
        if len(share):
            ax.plot(r.loc[share.index, "date"], r.loc[share.index, "capex_usd_cumulative"] * share / 1e9,
                    linestyle="none", marker="s", markersize=5.5, markerfacecolor="white",
                    markeredgecolor=F.RECORD_COLOR, markeredgewidth=1.2, zorder=5)
        ax.set_title(f"{F.agent_label(agent)} (since {int(r['since'].iloc[0])})", fontsize=9)
        ax.set_ylim(bottom=0)
        F.date_axis(ax, lo, hi, narrow=True)
    for i, ax in enumerate(axes):
        if i % ncols == 0:
            ax.set_ylabel("USD bn, cumulative")
    handles = [Line2D([], [], color=colors[s.label], linewidth=2,
                      label=f"{titles[s.label]}: paid for systems") for s in rs.sources]
    handles += [Line2D([], [], linestyle="none", marker="o", color=F.RECORD_COLOR,
                       label="announced capex (whole company), summed over calendar years"),
                Line2D([], [], linestyle="none", marker="s", markerfacecolor="white", markeredgecolor=F.RECORD_COLOR,
                       label="x the scenario's share for AI systems (the model's budget)")]
    F.legend_outside(body, handles, ncols=min(len(handles), 3))
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        "Model: capex_usd_cumulative, money paid for the systems bought, on shipment, since the run's first month "
        "(buildings and power are not in it). Record: analysis/data/capex_by_owner.csv, each company's capex per "
        "calendar year (reported, else the latest guidance; bars span a guided range) summed from the company's first "
        "year with a figure in the run (the model's line counts from the same January) until the first year without "
        "one; companies reporting fiscal years other than the calendar "
        "(Microsoft, Oracle) are shown only where a calendar-year figure exists. The baseline's capex by year is "
        "built from these figures, so this is a check of how much of the budget the model spends, not an "
        "independent check."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
