"""The story at a glance, as HTML: the status card (the month, the leader and shares, the record holders, NVIDIA's
revenue) and the scoreboard of firsts (per generation: first delivered, first online, first cluster at the
scenario's scale; the first cluster of 10k, 100k and 1M GPUs).

Everything stated is read from a `Snapshot`, whose outcomes come from `model.results.outcomes`; this module only
picks rows and writes them in words. Elements carry classes and data attributes (`data-system`, `data-event`,
`data-threshold`, `data-measure`) so the browser test can read them.
"""

from __future__ import annotations

from html import escape

import numpy as np

from model.results import outcomes as O
from model.viz.data import Snapshot
from model.viz.names import agent_label, compact, system_short, system_status, usd, whole

FIRST_COLUMNS = (("first_delivery", "first delivered"), ("first_online", "first online"),
                 ("first_cluster_at_scale", "first {at_scale}-GPU cluster"))
SHARES_SHOWN = 5
RECORD_WORDS = {"largest_cluster_gpus": ("GPUs", whole), "largest_cluster_h100e": ("H100e", compact),
                "largest_cluster_mw": ("MW", lambda v: f"{v:,.0f}")}


def progress(snap: Snapshot) -> str:
    if not snap.started:
        return f"not started: the race runs {snap.start_month} to {snap.end_month}; press Step or \u25b6"
    if snap.finished:
        return f"finished: {snap.n_months} months, {snap.start_month} to {snap.end_month}"
    return f"month {snap.months_done} of {snap.n_months} ({snap.start_month} to {snap.end_month})"


def _line(label: str, body: str, cls: str) -> str:
    return f'<div class="airace-line {cls}"><b>{escape(label)}</b> {body}</div>'


def _who(agent: str) -> str:
    return f'<span class="airace-agent">{escape(agent_label(agent))}</span>'


def status_html(snap: Snapshot) -> str:
    """The status card's lines below the month: leader and shares, records, revenue (empty before the start)."""
    if not snap.started or snap.standing is None:
        return ""
    s = snap.standing
    # plain arrays, not pandas selections: the card is written every month, and pandas' per-call cost would be most
    # of it on 16 rows
    agents, h100e, share = s["agent"].to_numpy(dtype=object), s["h100e"].to_numpy(), s["share"].to_numpy()
    named = O.is_named(s["kind"]).to_numpy()
    lines = []
    if named.any():
        top = int(np.flatnonzero(named)[0])
        lines.append(_line("Leader:", f"{_who(agents[top])}, {compact(h100e[top])} H100e, "
                           f"{share[top]:.0%} of all compute", "airace-leader"))
        shares = [f"{escape(agent_label(a))} {v:.0%}" for a, v in
                  zip(agents[named][:SHARES_SHOWN], share[named][:SHARES_SHOWN], strict=True)]
        rest = np.nansum(share[~named])
        shares.append(f"rest of market {rest:.0%}")
        lines.append(_line("Shares:", " \u00b7 ".join(shares), "airace-shares"))
    vendors, vendor_share = snap.vendor_shares
    if len(vendor_share) and (np.nan_to_num(vendor_share[-1]) > 0).sum() > 1:  # once a second vendor has compute
        lines.append(_line("Vendors:", " \u00b7 ".join(f"{escape(v)} {x:.0%}" for v, x in
                                                        zip(vendors, vendor_share[-1], strict=True) if x > 0),
                           "airace-vendors"))
    rec = {} if snap.records is None else {m: (a, v) for m, a, v in zip(
        snap.records["measure"], snap.records["agent"], snap.records["value"], strict=True)}
    cluster = [f'<span data-measure="{m}">{fmt(rec[m][1])} {unit} ({_who(rec[m][0])})</span>'
               for m, (unit, fmt) in RECORD_WORDS.items() if m in rec]
    if cluster:
        lines.append(_line("Largest cluster:", " \u00b7 ".join(cluster), "airace-largest"))
    if "frontier_run_days" in rec:
        agent, days = rec["frontier_run_days"]
        lines.append(_line("Fastest frontier run:", f'<span data-measure="frontier_run_days">{days:,.1f} '
                           f'days ({_who(agent)})</span>', "airace-fastest"))
    revenue = [f"{usd(snap.revenue_usd[-1])} in {snap.month}"]
    if snap.revenue_years is not None and len(snap.revenue_years):
        last = snap.revenue_years.iloc[-1]
        revenue.append(f"{usd(last['nvidia_revenue_usd'])} in {last['period']}")
    lines.append(_line("NVIDIA revenue:", " \u00b7 ".join(revenue), "airace-revenue"))
    return "".join(lines)


def status_card_html(snap: Snapshot, running: str, note: str = "") -> str:
    """The whole status card: the month, the progress line, the standings, the run's settings (one widget, so a
    month costs one update)."""
    parts = [f'<div class="airace-month">{snap.month}</div>',
             f'<div class="airace-progress">{escape(progress(snap))}</div>',
             f'<div class="airace-status-lines">{status_html(snap)}</div>',
             f'<div class="airace-settings">Running: {escape(running)}</div>']
    if note:
        parts.append(f'<div class="airace-compare-note">{escape(note)}</div>')
    return "".join(parts)


def _first_cell(first: dict, event: str, system: str, reached_at_start: bool) -> str:
    r = first.get((event, system))
    if r is not None:
        return (f'<td data-event="{event}" class="airace-col-{event}" title="{whole(r["gpus"])} GPUs">'
                f'<span class="airace-when">{r["date"]:%Y-%m}</span> {_who(r["agent"])}</td>')
    text = "in service at the start" if reached_at_start else "-"
    return f'<td data-event="{event}" class="airace-col-{event} airace-none">{text}</td>'


def scoreboard_html(snap: Snapshot, at_scale_gpus: int | None) -> str:
    """The scoreboard: a row per generation, then the cluster-size thresholds. Filled as the race runs."""
    first = {} if snap.firsts is None else {(r["event"], r["system"]): r for r in snap.firsts.to_dict("records")}
    systems_with_firsts = {system for _, system in first}
    scale = whole(at_scale_gpus) if at_scale_gpus else "at-scale"
    head = "".join(f'<th class="airace-col-{event}">{escape(label.format(at_scale=scale))}</th>'
                   for event, label in FIRST_COLUMNS)
    rows = []
    for system in snap.systems:
        at_start = system in snap.systems_at_start
        has = system in systems_with_firsts
        if system_status(system) == "dropped" and not has:
            cells = '<td colspan="3" class="airace-none airace-span">dropped from the roadmap</td>'
        elif at_start and not has:
            cells = '<td colspan="3" class="airace-none airace-span">in service at the start: not in the race</td>'
        else:
            cells = "".join(_first_cell(first, event, system, at_start) for event, _ in FIRST_COLUMNS)
        rows.append(f'<tr data-system="{system}"><th>{escape(system_short(system))}</th>{cells}</tr>')
    clusters = {} if snap.clusters is None else {r["threshold_gpus"]: r for r in snap.clusters.to_dict("records")}
    sizes = []
    for threshold in O.CLUSTER_THRESHOLDS_GPUS:
        h = clusters.get(threshold)
        if h is not None:
            text = f'<span class="airace-when">{h["date"]:%Y-%m}</span> {_who(h["agent"])}'
            tip = f' title="{whole(h["largest_cluster_gpus"])} GPUs"'
        else:
            text, tip = "-", ""
        sizes.append(f'<span data-threshold="{threshold}"{tip}><b>{compact(threshold)}</b> {text}</span>')
    return (f'<table class="airace-firsts"><thead><tr><th>generation</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>'
            f'<div class="airace-thresholds-title">First single cluster of at least (GPUs)</div>'
            f'<div class="airace-thresholds">{"".join(sizes)}</div>')
