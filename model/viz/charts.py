"""The app's charts as plotly.js figures (plain dicts: `data` traces and `layout`), drawn in the browser.

No plotly Python objects: building and validating `plotly.graph_objects` figures costs more per month than the
model's step, and `solara.FigurePlotly` re-sends every trace through the widget protocol (see the README's browser
app section for the measurements). A figure here is JSON that `plotly_chart.vue` hands to `Plotly.react`.

Every chart reads a `Snapshot` (the run so far) and, for the "compare with baseline" overlay, the baseline run's
snapshot cut to the same month: its lines are drawn faint and dotted behind the current run, in the same colour,
toggled with the same legend entry. Traces carry catalog and agent names, the unit in every hover label, and a
stable `uid`, so legend toggles survive the monthly updates (`uirevision`). Only series with data are drawn, and
the time axis spans the months simulated so far.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from model.palette import agent_color, system_color, vendor_color
from model.viz.data import Snapshot
from model.viz.names import agent_label, system_label

BASELINE_OPACITY = 0.45


@dataclass(frozen=True)
class Chart:
    """One chart: its title, what its y axis holds, whether a log/linear switch matters, and how it is built."""

    name: str
    title: str
    unit: str
    build: Callable[[Snapshot, Snapshot | None], list[dict]]
    log: bool = False  # log scale by default
    log_switch: bool = False
    stacked: bool = False
    percent: bool = False


def _clean(values: np.ndarray, decimals: int) -> list:
    """Finite values rounded (smaller JSON), NaN for the gaps (written as null)."""
    arr = np.asarray(values, dtype=float)
    return np.round(np.where(np.isfinite(arr), arr, np.nan), decimals).tolist()


def _has_data(column: np.ndarray) -> bool:
    finite = column[np.isfinite(column)]
    return bool(finite.size) and bool((finite > 0).any())


def _line(x: list[str], y: np.ndarray, key: str, name: str, color: str, hover: str, decimals: int,
          baseline: bool = False, stack: bool = False) -> dict:
    trace = {
        "type": "scatter", "mode": "lines", "x": x, "y": _clean(y, decimals), "name": name, "uid": key,
        "legendgroup": key, "line": {"color": color, "width": 1.7},
        "hovertemplate": f"%{{fullData.name}}: {hover}<extra></extra>",
    }
    if stack:
        trace.update(stackgroup="stack", line={"color": color, "width": 0.5}, fillcolor=color)
    if baseline:
        trace.update(name=f"baseline \u00b7 {name}", uid=f"baseline-{key}", showlegend=False, opacity=BASELINE_OPACITY,
                     line={"color": color, "width": 1.4, "dash": "dot"})
    return trace


def _per_agent(column: str, hover: str, decimals: int) -> Callable[[Snapshot, Snapshot | None], list[dict]]:
    """One line per agent with data (kind order); the baseline's agents behind, faint."""

    def build(snap: Snapshot, base: Snapshot | None) -> list[dict]:
        traces = []
        for run, is_base in ((base, True), (snap, False)):
            if run is None or not run.months_done:
                continue
            values = run.per_agent[column]
            for j, agent in enumerate(run.agent_names):
                if _has_data(values[:, j]):
                    traces.append(_line(run.dates, values[:, j], agent, agent_label(agent), agent_color(agent), hover,
                                        decimals, baseline=is_base))
        return traces

    return build


def _per_system(attribute: str, hover: str, decimals: int, stack: bool,
                scale: float = 1.0) -> Callable[[Snapshot, Snapshot | None], list[dict]]:
    """One series per system with data (catalog order); stacked charts get the baseline's total as one faint line,
    line charts the baseline's systems."""

    def build(snap: Snapshot, base: Snapshot | None) -> list[dict]:
        traces = []
        if base is not None and base.months_done:
            values = getattr(base, attribute) * scale
            if stack:
                total = np.nansum(values, axis=1)
                traces.append(_line(base.dates, total, "total", "all systems", "#888888", hover, decimals,
                                    baseline=True))
            else:
                traces += [_line(base.dates, values[:, i], k, system_label(k), system_color(k), hover, decimals,
                                 baseline=True) for i, k in enumerate(base.systems) if _has_data(values[:, i])]
        if snap.months_done:
            values = getattr(snap, attribute) * scale
            traces += [_line(snap.dates, values[:, i], k, system_label(k), system_color(k), hover, decimals,
                             stack=stack) for i, k in enumerate(snap.systems) if _has_data(values[:, i])]
        return traces

    return build


def _shares(snap: Snapshot, base: Snapshot | None) -> list[dict]:
    """Each agent's share of all H100e (the rest of the market included), stacked to 100%."""
    if not snap.months_done:
        return []
    return [_line(snap.dates, snap.share[:, j] * 100, a, agent_label(a), agent_color(a), "%{y:.1f}% of all H100e", 2,
                  stack=True)
            for j, a in enumerate(snap.agent_names) if _has_data(snap.share[:, j])]


def _vendor_shares(snap: Snapshot, base: Snapshot | None) -> list[dict]:
    """Each vendor's share of all H100e (NVIDIA, Google's TPUs, AWS's Trainium, AMD), stacked to 100%."""
    if not snap.months_done:
        return []
    vendors, share = snap.vendor_shares
    return [_line(snap.dates, share[:, i] * 100, f"vendor-{v}", v, vendor_color(v), "%{y:.1f}% of all H100e", 2,
                  stack=True) for i, v in enumerate(vendors) if _has_data(share[:, i])]


def _revenue(snap: Snapshot, base: Snapshot | None) -> list[dict]:
    traces = []
    for run, is_base in ((base, True), (snap, False)):
        if run is not None and run.months_done:
            traces.append(_line(run.dates, run.revenue_usd / 1e9, "nvidia", "NVIDIA revenue", "#76b900",
                                "$%{y:.1f} B in the month", 3, baseline=is_base))
    return traces


CHARTS: dict[str, Chart] = {c.name: c for c in (
    Chart("compute", "Compute online by agent", "H100-equivalents",
          _per_agent("h100e", "%{y:,.3~s} H100e", 0), log=True, log_switch=True),
    Chart("shares", "Share of all compute", "% of H100e online (rest of market included)", _shares, stacked=True,
          percent=True),
    Chart("vendor_shares", "Share of all compute by vendor", "% of H100e online (dense BF16, every vendor alike)",
          _vendor_shares, stacked=True, percent=True),
    Chart("gpus_by_system", "GPUs online by system", "GPUs, all agents",
          _per_system("gpus_by_system", "%{y:,.3~s} GPUs", 0, stack=True), stacked=True, log_switch=False),
    Chart("largest_cluster", "Largest training cluster by agent", "GPUs in one cluster",
          _per_agent("largest_cluster_gpus", "%{y:,.3~s} GPUs", 0), log=True, log_switch=True),
    Chart("frontier_days", "Days to train the reference frontier run", "days on the best cluster the agent can reach",
          _per_agent("frontier_run_days", "%{y:,.1f} days", 2), log=True, log_switch=True),
    Chart("revenue", "NVIDIA revenue", "USD B per month", _revenue),
    Chart("backlog", "NVIDIA order backlog", "GPUs ordered, not yet shipped",
          _per_system("backlog_gpus", "%{y:,.3~s} GPUs", 0, stack=True), stacked=True),
    Chart("rental", "Rental price by system", "USD per GPU-hour",
          _per_system("rental", "$%{y:.2f} per GPU-hour", 3, stack=False)),
)}


def figure(name: str, snap: Snapshot, base: Snapshot | None = None) -> dict:
    """Chart `name` for the run so far (and the baseline run cut to the same month) as a plotly.js figure."""
    chart = CHARTS[name]
    if base is not None:
        base = base.truncated(snap.months_done)
    traces = chart.build(snap, base)
    layout = {
        "margin": {"l": 52, "r": 6, "t": 26, "b": 30},  # t: room for plotly's tool bar above the legend
        "xaxis": {"type": "date", "hoverformat": "%Y-%m", "tickformat": "%Y", "dtick": "M12",
                  "showspikes": False},
        "yaxis": {"type": "log" if chart.log else "linear", "tickformat": "~s",  # no automargin: a second pass
                  "rangemode": "tozero", "ticksuffix": "%" if chart.percent else ""},
        "legend": {"font": {"size": 10}, "itemsizing": "constant", "tracegroupgap": 1,
                   "traceorder": "reversed" if chart.stacked else "normal"},
        "hovermode": "x unified", "hoverlabel": {"font": {"size": 11}},
        "uirevision": name, "showlegend": True,
        "paper_bgcolor": "rgba(0,0,0,0)", "plot_bgcolor": "rgba(0,0,0,0)",
    }
    if chart.percent:
        layout["yaxis"].update(range=[0, 100], tickformat="d")
    if not traces:
        layout.update(xaxis={"visible": False}, yaxis={"visible": False}, showlegend=False, annotations=[{
            "text": f"starts {snap.start_month}: press Step or \u25b6" if not snap.started else "nothing yet",
            "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5, "font": {"size": 13}}])
    return {"month": snap.month if snap.started else "", "data": traces, "layout": layout}


def figure_json(name: str, snap: Snapshot, base: Snapshot | None = None) -> str:
    """`figure` as strict JSON (gaps as null), what the browser component parses."""
    return json.dumps(figure(name, snap, base), separators=(",", ":")).replace("NaN", "null")
