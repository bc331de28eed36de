"""The events table: what happened so far, newest first, filtered by type, agent and system, in readable names,
with the fields each type of event has (a finished training run has no system or GPU count of its own)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from html import escape

import numpy as np
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


@dataclass(frozen=True)
class EventRow:
    """One event as the table shows it: its cells and its HTML row."""

    cells: tuple[str, ...]
    html: str


@lru_cache(maxsize=50_000)
def _row(month: str, event: str, agent: str, system: str, gpus: int, detail: str) -> EventRow:
    """An event in words (made once per event: each month adds a few to hundreds already shown)."""
    kind = event_kind(event)
    cells = (month, kind.label, agent_label(agent), system_short(system) if system and "system" in kind.fields else "",
             whole(gpus) if gpus and "gpus" in kind.fields else "", readable(detail) if "detail" in kind.fields else "")
    return EventRow(cells, "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")


def _picked(events: pd.DataFrame, types: Iterable[str] | None, agent: str | None,
            system: str | None) -> tuple[pd.DataFrame, np.ndarray]:
    """The matching events and their order, newest first (same month: logged last first)."""
    keep = np.ones(len(events), dtype=bool)
    if types is not None:
        keep &= events["event"].isin(list(types)).to_numpy()
    if agent:
        keep &= (events["agent"] == agent).to_numpy()
    if system:
        keep &= (events["system"] == system).to_numpy()
    picked = events[keep]
    dates = picked["date"]
    month_number = (dates.dt.year * 100 + dates.dt.month).to_numpy()
    return picked, np.lexsort((-np.arange(len(picked)), -month_number))


def _rows(picked: pd.DataFrame, order: np.ndarray) -> list[EventRow]:
    months = picked["date"].to_numpy().astype("datetime64[M]").astype(str)
    columns = [picked[c].to_numpy() for c in ("event", "agent", "system", "gpus", "detail")]
    return [_row(months[i], *(str(c[i]) if j != 3 else int(c[i]) for j, c in enumerate(columns))) for i in order]


def matching(events: pd.DataFrame, types: Iterable[str] | None = None, agent: str | None = None,
             system: str | None = None) -> list[EventRow]:
    """Events matching the filters (None: any), newest first (same month: logged last first)."""
    if events.empty:
        return []
    return _rows(*_picked(events, types, agent, system))


def newest_matching(events: pd.DataFrame, types: Iterable[str] | None = None, agent: str | None = None,
                    system: str | None = None, limit: int = ROWS_SHOWN) -> tuple[int, list[EventRow]]:
    """How many events match, and the newest `limit` of them (`matching`'s first rows): the table shows only
    those, so only those are put in words each month."""
    if events.empty:
        return 0, []
    picked, order = _picked(events, types, agent, system)
    return len(order), _rows(picked, order[:limit])


def event_rows(events: pd.DataFrame, types: Iterable[str] | None = None, agent: str | None = None,
               system: str | None = None) -> pd.DataFrame:
    """`matching` as a table of words; a field the type of event does not have is blank."""
    return pd.DataFrame([r.cells for r in matching(events, types, agent, system)], columns=COLUMNS)


def events_html(rows: list[EventRow], limit: int = ROWS_SHOWN) -> str:
    """The first `limit` rows as an HTML table."""
    head = "".join(f"<th>{c if c != 'gpus' else 'GPUs'}</th>" for c in COLUMNS)
    body = "".join(r.html for r in rows[:limit])
    return f'<table class="airace-event-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
