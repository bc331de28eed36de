"""The browser app: Mesa's SolaraViz with airace's components (`solara run model/viz/app.py`; `airace viz` starts it).

SolaraViz gives the page (title bar with the theme switch, Reset / play / Step, the play interval, the grid of
components); `components` holds what it shows: the month and the standings, the scoreboard of firsts, eight charts
drawn in the browser with plotly.js, and the events; the sidebar adds the scenario, seed and knobs, Apply, the
baseline overlay and the CSV downloads. Each browser session gets its own model. Mesa's Reset replays the current
run from its start (its `model_params` carry the run's settings); Apply runs the settings shown.
"""

from __future__ import annotations

import solara
from mesa.visualization import SolaraViz

from model.viz import components as C
from model.viz import page
from model.viz.controls import scenario_from_env, seed_from_env

page.configure_server()


@solara.component
def Page():
    state = C.use_page_state(scenario_from_env(), seed_from_env())
    C.page_context.provide(state)
    page.Chrome(state)
    SolaraViz(state.run.value.model, components=C.COMPONENTS, model_params={"settings": state.applied.value},
              name="airace", play_interval=C.PLAY_INTERVAL_MS).key(f"run-{state.run_id.value}")
