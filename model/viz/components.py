"""The page's parts: Solara components that SolaraViz lays out (status, scoreboard, charts, events) and the
settings card in its sidebar. Each main-area component takes the model, as SolaraViz components do, and reads the
run through `data.snapshot(model)`; page-wide state (the settings draft, the baseline overlay, the event filters)
comes from `page_context`, provided by `app.Page`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import pandas as pd
import reacton.ipyvuetify as rv
import solara
from mesa.visualization.utils import update_counter

from model.scenario.mesa_scenario import DEFAULT_SCENARIO_FILE
from model.viz import charts, data, events
from model.viz.controls import (
    KNOB_SLIDERS,
    SEED_MAX,
    RunSettings,
    ScenarioChoice,
    applied_settings,
    build_model,
    scenario_choices,
    scenario_value,
)
from model.viz.scoreboard import scoreboard_html, status_card_html

PLAY_INTERVAL_MS = 1  # Mesa's pause between months while playing (its slider's minimum): the month's work sets the pace
CHART_ORDER = ("compute", "shares", "vendor_shares", "gpus_by_system", "largest_cluster", "frontier_days", "revenue",
               "backlog", "rental")


# -- page state ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Run:
    """One applied run: the reactive that holds its model (what SolaraViz is given; Mesa's Reset replaces the
    model in it)."""

    model: solara.Reactive


@dataclass(frozen=True)
class PageState:
    """What the page remembers across runs: the current run's model, the applied settings and the draft the
    controls edit, the run counter, the baseline overlay and the event filters.

    Each applied run gets its own model reactive (`Run`) and a fresh SolaraViz, so a play loop still running on
    the previous run cannot step the new one.
    """

    run: solara.Reactive[Run]
    applied: solara.Reactive[RunSettings]
    draft: solara.Reactive[RunSettings]
    run_id: solara.Reactive[int]
    compare: solara.Reactive[bool]
    event_types: solara.Reactive[list]
    event_agent: solara.Reactive[str | None]
    event_system: solara.Reactive[str | None]
    choices: tuple[ScenarioChoice, ...]
    baseline: Callable[[], data.Snapshot | None]

    @property
    def model(self):
        """The model the page shows now."""
        return self.run.value.model.value

    def apply(self) -> None:
        """Run exactly the settings shown: a new model, a new SolaraViz; the previous run stops where it is."""
        settings = self.draft.value
        model = build_model(settings)
        self.model.running = False  # Mesa's play loop on the previous run ends at its next month
        self.run.set(Run(solara.reactive(model)))
        self.applied.set(settings)
        self.run_id.set(self.run_id.value + 1)


page_context = solara.create_context(None)


_BASELINES: dict[int, data.Snapshot] = {}


def baseline_run(seed: int) -> data.Snapshot:
    """The baseline scenario run to its end with this seed (cached: a scenario and a seed give one run)."""
    if seed not in _BASELINES:
        model = build_model(RunSettings.of_scenario(DEFAULT_SCENARIO_FILE, seed))
        model.run()
        _BASELINES[seed] = data.snapshot(model)
    return _BASELINES[seed]


def use_page_state(scenario_file, seed: int) -> PageState:
    initial = solara.use_memo(lambda: RunSettings.of_scenario(scenario_file, seed), [])
    run = solara.use_reactive(solara.use_memo(lambda: Run(solara.reactive(build_model(initial))), []))
    applied = solara.use_reactive(initial)
    draft = solara.use_reactive(initial)
    run_id = solara.use_reactive(0)
    compare = solara.use_reactive(False)
    types = solara.use_reactive([])
    agent = solara.use_reactive(None)
    system = solara.use_reactive(None)
    choices = solara.use_memo(lambda: tuple(scenario_choices(scenario_file)), [])
    baseline_seed = applied.value.seed

    def compute():
        return baseline_run(baseline_seed) if compare.value else None

    task = solara.lab.use_task(compute, dependencies=[compare.value, baseline_seed], prefer_threaded=True)

    def baseline() -> data.Snapshot | None:
        return task.value if compare.value and task.finished else None

    return PageState(run, applied, draft, run_id, compare, types, agent, system, choices, baseline)


def use_state() -> PageState:
    return solara.use_context(page_context)


# -- main area ----------------------------------------------------------------------------------------------------
@solara.component
def StatusCard(model):
    """The month the race has reached, big, then the leader, shares, record holders and revenue."""
    update_counter.get()
    state = use_state()
    snap = data.snapshot(model)
    running = solara.use_memo(lambda: applied_settings(model).summary(), [model])
    note = ""
    if state.compare.value:
        note = (f"Faint dotted lines: baseline.toml, seed {state.applied.value.seed}"
                + ("" if state.baseline() is not None else " (computing...)"))
    solara.HTML(tag="div", unsafe_innerHTML=status_card_html(snap, running, note),
                classes=["airace-card", "airace-status"])


@solara.component
def Scoreboard(model):
    """Who was first with each generation, and with each cluster size."""
    update_counter.get()
    snap = data.snapshot(model)
    at_scale = solara.use_memo(lambda: scenario_value(model, "at_scale_gpus"), [model])
    # the firsts and clusters change in a few months of the run: the table is written again only then (the live run
    # keeps the same frames until they change)
    html = solara.use_memo(lambda: scoreboard_html(snap, at_scale),
                           [model, id(snap.firsts), id(snap.clusters), snap.systems, snap.systems_at_start])
    with solara.Column(classes=["airace-card", "airace-scoreboard"], gap="2px"):
        solara.Text("Firsts of the race", classes=["airace-card-title"])
        solara.HTML(tag="div", unsafe_innerHTML=html, classes=["airace-scoreboard-body"])


@solara.component_vue("plotly_chart.vue")
def PlotlyChart(figure_json: str, title: str, unit: str, chart_name: str, log_switch: bool = False,
                log_default: bool = False, in_view: bool = True, on_in_view: Callable[[bool], None] | None = None):
    """A plotly.js chart drawn in the browser (see plotly_chart.vue); `in_view` is set by the browser."""


@cache
def chart(name: str):
    """The SolaraViz component for chart `name` (one class per chart, so Mesa and reacton tell them apart)."""
    spec = charts.CHARTS[name]

    @solara.component
    def Chart(model):
        update_counter.get()
        state = use_state()
        in_view, set_in_view = solara.use_state(True)
        last = solara.use_ref("")
        if in_view or not last.current:  # a chart out of view keeps its figure until it scrolls back in
            last.current = charts.figure_json(name, data.snapshot(model), state.baseline())
        PlotlyChart(figure_json=last.current, title=spec.title, unit=spec.unit, chart_name=name,
                    log_switch=spec.log_switch, log_default=spec.log, in_view=in_view, on_in_view=set_in_view)

    Chart.__name__ = Chart.__qualname__ = f"Chart_{name}"
    return Chart


def _select(label: str, items: list[tuple[str, str]], value, on_value, multiple: bool = False, cls: str = ""):
    return rv.Select(label=label, items=[{"text": t, "value": k} for k, t in items], v_model=value,
                     on_v_model=on_value, multiple=multiple, clearable=True, dense=True, hide_details=True,
                     small_chips=multiple, class_=cls)


@solara.component
def EventsTable(model):
    """Events so far, newest first, filtered by type, agent and system."""
    update_counter.get()
    state = use_state()
    snap = data.snapshot(model)
    filters = (tuple(state.event_types.value or ()), state.event_agent.value, state.event_system.value)
    # events change in some months only: rows and filter choices are made again when they or the filters change
    offered = solara.use_memo(lambda: events.choices(snap.events), [model, len(snap.events)])
    count, rows = solara.use_memo(lambda: events.newest_matching(snap.events, filters[0] or None, *filters[1:]),
                                  [model, len(snap.events), filters])
    table = solara.use_memo(lambda: events.events_html(rows), [model, len(snap.events), filters])
    shown = f", the newest {events.ROWS_SHOWN} shown" if count > events.ROWS_SHOWN else ", newest first"
    with solara.Column(classes=["airace-card", "airace-events"], gap="4px"):
        solara.Text(f"Events so far: {len(snap.events)}; {count} match the filters{shown}",
                    classes=["airace-card-title", "airace-events-count"])
        with solara.Row(gap="6px", classes=["airace-event-filters"]):
            _select("type", offered["event"], state.event_types.value, state.event_types.set, multiple=True,
                    cls="airace-filter-type")
            _select("agent", offered["agent"], state.event_agent.value, state.event_agent.set,
                    cls="airace-filter-agent")
            _select("system", offered["system"], state.event_system.value, state.event_system.set,
                    cls="airace-filter-system")
        if not rows:
            solara.Text("No events yet." if snap.events.empty else "No event matches.")
        else:
            solara.HTML(tag="div", unsafe_innerHTML=table, classes=["airace-event-scroll"])


COMPONENTS = [StatusCard, Scoreboard, *(chart(n) for n in CHART_ORDER), EventsTable]


# -- sidebar ------------------------------------------------------------------------------------------------------
def _knob_slider(knob: str, value: float, on_value: Callable[[float], None]):
    spec = KNOB_SLIDERS[knob]
    return _slider(spec.label, value, spec.shown(value), spec.low, spec.high, spec.step, on_value, knob)


def _slider(label: str, value, shown: str, low, high, step, on_value, key: str):
    """A labelled slider with its value written next to it (always visible, not only while dragged)."""
    low, high = min(low, value), max(high, value)
    with solara.Row(classes=["airace-knob", f"airace-knob-{key}"], gap="6px", style="align-items: center") as row:
        rv.Slider(label=label, v_model=value, on_v_model=on_value, min=low, max=high, step=step, thumb_label=False,
                  hide_details=True, dense=True)
        solara.Text(shown, classes=["airace-knob-value"])
    return row


def _csv(state: PageState, table: str) -> Callable[[], bytes]:
    """The current run's table so far as CSV (written when the button is pressed)."""

    def make() -> bytes:
        return csv_bytes(getattr(data.snapshot(state.model), table))

    return make


def csv_bytes(frame) -> bytes:
    """A table as `airace run` writes CSV files (dates as YYYY-MM-DD, `model.results.write_csv`'s convention)."""
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_datetime64_any_dtype(out[column]):
            out[column] = out[column].dt.strftime("%Y-%m-%d")
    buffer = io.StringIO()
    out.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


@solara.component
def SettingsCard(state: PageState):
    """Scenario, seed and knobs as shown are what Apply runs; the baseline overlay; the run's tables as CSV."""
    draft = state.draft.value
    by_path = {c.path: c for c in state.choices}
    changed = draft != state.applied.value
    with solara.Card("Scenario", classes=["airace-settings-card"]):
        rv.Select(label="scenario file", items=[{"text": c.name, "value": c.path} for c in state.choices],
                  v_model=draft.scenario_file, on_v_model=lambda p: state.draft.set(state.draft.value.with_scenario(p)),
                  dense=True, hide_details=True, class_="airace-scenario-select")
        story = by_path.get(draft.scenario_file)
        solara.Text(story.story if story else "", classes=["airace-story"])
        _slider("Seed", draft.seed, str(draft.seed), 0, SEED_MAX, 1,
                lambda v: state.draft.set(state.draft.value.with_seed(int(v))), "seed")
        for knob in KNOB_SLIDERS:
            _knob_slider(knob, draft.knob(knob),
                         lambda v, knob=knob: state.draft.set(state.draft.value.with_knob(knob, float(v))))
        with solara.Row(justify="space-between", style="align-items: center"):
            solara.Button("Apply", color="primary", on_click=state.apply, classes=["airace-apply"])
            solara.Text("changed: Apply runs it" if changed else "as running", classes=["airace-draft-state"])
        solara.Switch(label="compare with baseline", value=state.compare, classes=["airace-compare"])
        solara.Text("The current run's tables so far:", classes=["airace-downloads-title"])
        with solara.Row(gap="4px", classes=["airace-downloads"]):
            for table in ("agents", "market", "events"):
                solara.FileDownload(_csv(state, table), filename=f"{table}.csv", mime_type="text/csv",
                                    children=[solara.Button(f"{table}.csv", icon_name="mdi-download", small=True,
                                                            outlined=True, classes=[f"airace-download-{table}"])])
