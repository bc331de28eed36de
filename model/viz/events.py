"""The events table: what happened so far, newest first, filtered by type, agent and system, in readable names,
with the fields each type of event has (a finished training run has no system or GPU count of its own)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

import pandas as pd

from model.hardware import SYSTEM_KEYS
from model.viz.names import agent_label, readable, system_label, system_short, whole

ROWS_SHOWN = 200


@dataclass(frozen=True)
class EventKind:
    label: str
    fields: tuple[str, ...]  # of "system", "gpus", "detail": what this type of event fills in


EVENT_KINDS: dict[str, EventKind] = {
    "first_delivery": EventKind("first delivery", ("system", "gpus")),
    "first_online": EventKind("first online", ("system", "gpus")),
    "first_cluster_at_scale": EventKind("first cluster at scale", ("system", "gpus", "detail")),
    "training_run_started": EventKind("training run started", ("system", "gpus", "detail")),
    "training_run_finished": EventKind("training run finished", ("detail",)),
    "contract_signed": EventKind("contract signed", ("system", "gpus", "detail")),
    "preorder": EventKind("pre-order", ("system", "gpus", "detail")),
    "roadmap_slip": EventKind("roadmap slip", ("system", "detail")),
}
COLUMNS = ["month", "event", "agent", "system", "gpus", "detail"]


def event_kind(event: str) -> EventKind:
    return EVENT_KINDS.get(event) or EventKind(event.replace("_", " "), ("system", "gpus", "detail"))


def choices(events: pd.DataFrame) -> dict[str, list[tuple[str, str]]]:
    """The values the filters offer, (key, label) pairs of what occurs so far: types, agents, systems."""
    if events.empty:
        return {"event": [], "agent": [], "system": []}
    systems = [s for s in dict.fromkeys(events["system"]) if s]
    return {"event": [(e, event_kind(e).label) for e in dict.fromkeys(events["event"])],
            "agent": sorted(((a, agent_label(a)) for a in dict.fromkeys(events["agent"])), key=lambda p: p[1].lower()),
            "system": [(s, system_label(s)) for s in sorted(systems, key=_catalog_order)]}


def _catalog_order(key: str) -> tuple[int, str]:
    return (SYSTEM_KEYS.index(key) if key in SYSTEM_KEYS else len(SYSTEM_KEYS), key)


def event_rows(events: pd.DataFrame, types: Iterable[str] | None = None, agent: str | None = None,
               system: str | None = None) -> pd.DataFrame:
    """Events matching the filters (None: any), newest first (same month: logged last first), in words; a field
    the type of event does not have is blank."""
    if events.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = events.assign(_order=range(len(events)))
    if types is not None:
        rows = rows[rows["event"].isin(list(types))]
    if agent:
        rows = rows[rows["agent"] == agent]
    if system:
        rows = rows[rows["system"] == system]
    rows = rows.sort_values(["date", "_order"], ascending=False)
    kinds = [event_kind(e) for e in rows["event"]]
    out = pd.DataFrame({
        "month": rows["date"].dt.strftime("%Y-%m").to_numpy(),
        "event": [k.label for k in kinds],
        "agent": [agent_label(a) for a in rows["agent"]],
        "system": [system_short(s) if s and "system" in k.fields else "" for s, k in zip(rows["system"], kinds,
                                                                                          strict=True)],
        "gpus": [whole(g) if g and "gpus" in k.fields else "" for g, k in zip(rows["gpus"], kinds, strict=True)],
        "detail": [readable(d) if "detail" in k.fields else "" for d, k in zip(rows["detail"], kinds, strict=True)],
    })
    return out


def events_html(rows: pd.DataFrame, limit: int = ROWS_SHOWN) -> str:
    """The first `limit` rows as an HTML table."""
    head = "".join(f"<th>{c if c != 'gpus' else 'GPUs'}</th>" for c in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>"
                   for row in rows.head(limit).itertuples(index=False))
    return f'<table class="airace-event-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
