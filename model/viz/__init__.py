"""The browser app (Mesa SolaraViz): watch the race month by month, choose a scenario, move its knobs, apply.

`controls` says what a run is made of (scenario file, knobs, seed) and builds the model the app runs; `data` keeps
the live run's tables, series and outcomes (from `model.results.outcomes`), month by month; `charts`, `scoreboard`
and `events` turn them into plotly.js figures and HTML (no Solara, unit-tested); `names` holds the readable names;
`components` and `page` are the Solara parts and `app` the page itself (SolaraViz with those components);
`plotly_chart.vue` draws a figure in the browser; `launch` starts `solara run` on the app (`airace viz`) and
`browser` drives it in headless Chromium (test, timings, screenshot).
"""
