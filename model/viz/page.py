"""The page around SolaraViz: the browser tab's title, the style sheet, the settings card in the sidebar, and the
server settings the app needs (plotly.js served locally, no Solara banner, one upstream template fixed).

Style sheet: SolaraViz always draws a few widgets this app has no use for: a "Page 0" tab (the app has one page),
the "Use Threads" box (the app's snapshot of a month assumes the model is not stepped while the page reads it),
an "Information" card with Mesa's step count (the month card says it in months) and an empty "Model Parameters"
card (the app's controls are in its own card). They are hidden by CSS; the browser test checks that none shows.
"""

from __future__ import annotations

from pathlib import Path

import plotly
import solara
import solara.server.settings
from solara.widgets.widgets import Navigator

from model.viz.components import PageState, SettingsCard

PLOTLY_ASSETS = Path(plotly.__file__).parent / "package_data"  # plotly.min.js, served as /static/assets/

CSS = """
/* SolaraViz widgets the app does not use (see the module docstring) */
.v-content .v-tabs, .v-main .v-tabs { display: none !important; }
.v-navigation-drawer .v-card:not(.airace-settings-card) ~ .v-card:not(.airace-settings-card)
  { display: none !important; }
.v-navigation-drawer .v-input--checkbox { display: none !important; }
/* Mesa's sliders show their value all the time, not only while dragged */
.v-navigation-drawer .v-slider__thumb-label-container { display: block !important; }
.v-navigation-drawer .v-input__slider:not(.airace-knob) { margin-top: 18px; }

/* cards in SolaraViz's grid: fill the cell, scroll inside it */
.airace-card { height: 100%; overflow: auto; padding: 6px 10px; font-size: 13px; line-height: 1.35; }
.airace-card-title { font-weight: 600; font-size: 15px; }
.airace-month { font-size: 3em; font-weight: 700; line-height: 1.05; }
.airace-progress { font-size: 1.05em; margin-bottom: 6px; }
.airace-line { margin: 1px 0; }
.airace-settings, .airace-compare-note, .airace-story, .airace-draft-state, .airace-downloads-title
  { opacity: 0.78; font-size: 12px; }
.airace-settings { margin-top: 8px; }
.airace-scoreboard { container-type: inline-size; }
.airace-firsts { border-collapse: collapse; width: 100%; font-size: 12px; }
.airace-firsts th, .airace-firsts td { padding: 1px 4px; text-align: left; white-space: nowrap; }
.airace-firsts td.airace-span { white-space: normal; }
@container (max-width: 560px) { .airace-firsts .airace-col-first_delivery { display: none; } }
.airace-thresholds { display: flex; flex-wrap: wrap; gap: 2px 14px; font-size: 12px; padding: 0 4px; }
.airace-firsts thead th { font-weight: 600; opacity: 0.8; border-bottom: 1px solid rgba(128,128,128,0.4); }
.airace-firsts tbody th { font-weight: 600; }
.airace-firsts td.airace-none, .airace-thresholds-title { opacity: 0.65; }
.airace-thresholds-title { margin-top: 6px; font-size: 12px; }
.airace-when { font-variant-numeric: tabular-nums; opacity: 0.8; }
.airace-event-filters .v-select { max-width: 32%; }
.airace-event-scroll { overflow: auto; max-height: 300px; }
.airace-event-table { border-collapse: collapse; font-size: 11.5px; width: 100%; }
.airace-event-table th { position: sticky; top: 0; text-align: left; font-weight: 600; padding: 2px 4px; }
.theme--light .airace-event-table th { background: #fff; }
.theme--dark .airace-event-table th { background: #1e1e1e; }
.airace-event-table td { padding: 1px 4px; border-top: 1px solid rgba(128,128,128,0.2); vertical-align: top; }
.airace-event-table td:not(:last-child) { white-space: nowrap; }
.airace-event-table td:last-child { min-width: 140px; }
/* the settings card in the sidebar (SolaraViz's drawer is 400 px wide) */
.airace-settings-card { max-width: 376px; }
.airace-knob { margin-top: 2px; }
.airace-knob .v-label { font-size: 13px; min-width: 128px; }
.airace-knob-value { font-variant-numeric: tabular-nums; min-width: 40px; text-align: right; font-size: 13px; }
.airace-downloads { flex-wrap: wrap; }
"""


def configure_server() -> None:
    """Settings for the server process the app runs in (idempotent)."""
    locations = solara.server.settings.assets.extra_locations
    if str(PLOTLY_ASSETS) not in locations:
        locations.append(str(PLOTLY_ASSETS))
    solara.server.settings.theme.show_banner = False
    solara.server.settings.theme.title = "airace"
    _fix_navigator_template()


def _fix_navigator_template() -> None:
    """solara 1.58.2's navigator.vue assigns `modules.export` (a typo for `module.exports`), so ipyvue warns
    "Failed to evaluate Vue script" on every page load. Load the same template with the name corrected."""
    if getattr(Navigator, "_airace_fixed", False):
        return
    text = Path(Navigator.template_file).read_text(encoding="utf-8")
    fixed = text.replace("modules.export = {", "module.exports = {", 1)
    original_init = Navigator.__init__

    def __init__(self, *args, **kwargs):  # noqa: N807 (replaces the class's constructor)
        kwargs.setdefault("template", fixed)
        original_init(self, *args, **kwargs)

    Navigator.__init__ = __init__
    Navigator._airace_fixed = True


@solara.component
def Chrome(state: PageState):
    solara.Title("airace")
    solara.Style(CSS)
    with solara.Sidebar():
        # SolaraViz's sidebar (Mesa's Controls) sits in the page's sidebar list after this, and Solara reuses a
        # part at the same place in that list with its state: Mesa's controller would keep the previous run's
        # "finished" and "playing" and its Reset the previous run's parameters. An empty part here on every
        # other run moves Mesa's sidebar by one place, so each applied run gets a fresh one.
        if state.run_id.value % 2:
            solara.Div(style="display: none", classes=["airace-run-parity"])
    _Settings(state)


@solara.component
def _Settings(state: PageState):
    """The settings card, placed in the sidebar one component level below SolaraViz's own sidebar content, so it
    comes after Mesa's Controls card (the sidebar orders its parts by their depth in the page)."""
    with solara.Sidebar():
        SettingsCard(state)
