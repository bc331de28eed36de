"""The page around SolaraViz: the browser tab's title, the settings card in the sidebar, and the server settings the
app needs (plotly.js served locally, no Solara banner, one upstream template fixed).

Solara's page template loads `custom.css` (the style sheet) and `custom.js` (which starts downloading plotly.js as
the page opens, in parallel with the app) from the static assets; the app's are in `assets/` here. SolaraViz
always draws a few widgets this app has no use for: a "Page 0" tab (the app has one page), the "Use Threads" box
(the app's snapshot of a month assumes the model is not stepped while the page reads it), an "Information" card
with Mesa's step count (the month card says it in months) and an empty "Model Parameters" card (the app's controls
are in its own card). The style sheet hides them; the browser test checks that none shows.
"""

from __future__ import annotations

from pathlib import Path

import plotly
import solara
import solara.server.settings
from solara.widgets.widgets import Navigator

from model.viz.components import PageState, SettingsCard

PLOTLY_ASSETS = Path(plotly.__file__).parent / "package_data"  # plotly.min.js, served as /static/assets/
APP_ASSETS = Path(__file__).with_name("assets")  # custom.css and custom.js, which Solara's page template loads



def configure_server() -> None:
    """Settings for the server process the app runs in (idempotent)."""
    locations = solara.server.settings.assets.extra_locations
    for folder in (APP_ASSETS, PLOTLY_ASSETS):  # looked up before Solara's own assets (its custom.* are empty)
        if str(folder) not in locations:
            locations.append(str(folder))
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
