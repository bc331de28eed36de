"""The browser app (Mesa SolaraViz): watch the race month by month, move the scenario knobs, reset.

`data` turns the model's tables so far into chart series and table rows (no Solara, unit-tested), `charts` draws
them with matplotlib, `controls` maps the scenario knobs onto SolaraViz sliders, `app` is the Solara page,
`launch` starts `solara run` on it (`airace viz`) and `browser` drives it in headless Chromium (test, screenshot).
"""
