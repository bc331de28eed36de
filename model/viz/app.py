"""The Solara page (`solara run model/viz/app.py`; normally started by `airace viz`).

Mesa's SolaraViz gives the sidebar (Step, play/pause, Reset, the sliders of `controls.model_params`); the main area
holds the month card, six charts and the event table. Each browser session gets its own model (built in `Page`), so
two tabs do not step each other's race. Sliders take effect on Reset, as everywhere in SolaraViz.
"""

from __future__ import annotations

import html

import solara
from mesa.visualization import SolaraViz
from mesa.visualization.utils import update_counter

from model.viz import charts, data
from model.viz.controls import build_model, knob_summary, knob_values, model_params, scenario_from_env, seed_from_env

PLAY_INTERVAL_MS = 150
# Charts fill their grid cell (about 390 px high) without spilling into the next one on wide screens.
CSS = ".airace-chart { max-height: 380px; object-fit: contain; object-position: left top; }"


@solara.component
def MonthCard(model):
    """The month the race has reached, big, with a few headline numbers."""
    update_counter.get()
    snap = data.cached_snapshot(model)
    settings = solara.use_memo(lambda: knob_summary(knob_values(model), model.scenario.rng), [model])
    with solara.Column(classes=["airace-status"], style="padding: 8px 16px"):
        solara.HTML(tag="h1", unsafe_innerHTML=snap.month, classes=["airace-month"],
                    style="font-size: 3.6em; font-weight: 700; line-height: 1.1; margin: 0")
        if not snap.started:
            progress = f"not started: the race runs {snap.start_month} to {snap.end_month}; press Step or \u25b6"
        elif snap.finished:
            progress = f"finished: {snap.n_months} months, {snap.start_month} to {snap.end_month}"
        else:
            progress = f"month {snap.months_done} of {snap.n_months} ({snap.start_month} to {snap.end_month})"
        solara.Text(progress, classes=["airace-progress"], style="font-size: 1.1em")
        with solara.Column(gap="2px", style="margin-top: 12px"):
            for name, value in data.headline(snap).items():
                solara.HTML(tag="div", unsafe_innerHTML=f"<b>{html.escape(name)}:</b> {html.escape(value)}")
        solara.Text(f"Running with: {settings}", classes=["airace-settings"],
                    style="color: #555; margin-top: 12px; font-size: 0.9em")
        solara.Text("Move a slider, then Reset to run with it.", style="color: #777; font-size: 0.9em")


@solara.component
def EventsTable(model):
    """Events so far, newest first."""
    update_counter.get()
    snap = data.cached_snapshot(model)
    rows = data.event_rows(snap.events, snap.month) if snap.started else None
    with solara.Column(classes=["airace-events"], style="padding: 4px 8px"):
        solara.Text(f"Events so far ({0 if rows is None else len(rows)}), newest first",
                    style="font-weight: 600; font-size: 1.05em")
        if rows is None or rows.empty:
            solara.Text("No events yet.")
        else:
            solara.DataFrame(rows, items_per_page=7)


def chart_component(name: str):
    """A SolaraViz component showing chart `name` as a PNG that is redrawn once per simulated month."""

    @solara.component
    def Chart(model):
        update_counter.get()
        solara.Image(charts.chart_png(model, name), width="100%", classes=["airace-chart", f"airace-chart-{name}"])

    Chart.__name__ = Chart.__qualname__ = f"Chart_{name}"
    return Chart


COMPONENTS = [MonthCard, *(chart_component(name) for name in charts.CHARTS), EventsTable]


@solara.component
def Page():
    scenario = scenario_from_env()
    seed = seed_from_env()
    model = solara.use_memo(lambda: build_model(scenario, seed), [])
    params = solara.use_memo(lambda: model_params(scenario, seed), [])
    solara.Style(CSS)
    SolaraViz(model, components=COMPONENTS, model_params=params, name=f"airace: {scenario.name}",
              play_interval=PLAY_INTERVAL_MS)
