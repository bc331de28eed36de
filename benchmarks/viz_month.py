"""Server-side cost of one month in the browser app (run by hand): the model's step, then the page's render (the
snapshot of the tables, the outcomes, eight chart figures, scoreboard, events), per month over a whole baseline
run, in CPU milliseconds (`time.process_time`, so other processes on a shared machine do not count).

    python benchmarks/viz_month.py [RUNS]      (default 3; prints the median run)

The page is rendered in this process by Solara without a browser (widgets are built and diffed, nothing is sent),
so this measures what the server does each month; the browser test reports what a user sees (months per second).
"""

from __future__ import annotations

import sys
import time

import solara
from mesa.visualization.utils import force_update

from model.scenario.mesa_scenario import DEFAULT_SCENARIO_FILE
from model.viz import components as C


def one_run() -> tuple[float, float, int]:
    state_box = {}

    @solara.component
    def Harness():
        state = C.use_page_state(DEFAULT_SCENARIO_FILE, 0)
        C.page_context.provide(state)
        state_box["state"] = state
        with solara.Column():
            for component in C.COMPONENTS:
                component(state.model)

    _, render_context = solara.render(Harness(), handle_error=False)
    model = state_box["state"].model
    step_s = render_s = 0.0
    months = 0
    while model.running:
        t0 = time.process_time()
        model.step()
        t1 = time.process_time()
        with render_context:  # one render for the month, as the server batches it
            force_update()
        t2 = time.process_time()
        step_s += t1 - t0
        render_s += t2 - t1
        months += 1
    render_context.close()  # else the next run's months would re-render this page too (one global update counter)
    return step_s * 1000 / months, render_s * 1000 / months, months


def main(argv: list[str]) -> int:
    runs = int(argv[0]) if argv else 3
    results = sorted(one_run() for _ in range(runs))
    step_ms, render_ms, months = results[len(results) // 2]
    print(f"{months} months: model step {step_ms:.1f} ms/month, page render {render_ms:.1f} ms/month "
          f"(median of {runs} runs; CPU time); {1000 / (step_ms + render_ms):.1f} months/s of server CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
