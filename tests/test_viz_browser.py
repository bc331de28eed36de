"""The browser app in a real browser, along a user's path: the server as a subprocess, headless system Chromium
through Playwright, no internet (every request must go to the local server), no console error or warning.

Load the page, read the scoreboard, step and play to the scenario's last month, find a known first on the
scoreboard and in the filtered events, replay with Mesa's Reset and a Render Interval of 13 (which once ran past the
end), choose another scenario and move two sliders, Apply, and check that the run has exactly those parameters and
that the charts changed; overlay the baseline, toggle a legend entry and the log scale, download a table. Every wait
is on a condition the page shows. It reports the time to the page and to its first charts after the server
answers, months per second while playing and the reset time (printed and recorded as test properties; never
asserted). Runs in CI (which apt-installs chromium); without chromium it fails when $CI is set and skips otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest

from model.results import conform, outcomes
from model.viz import browser as B
from model.viz import controls
from model.viz.names import agent_label

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"
SEED = 0

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _require_browser() -> None:
    problems = []
    if B.chromium_path() is None:
        problems.append("chromium is not on PATH (Debian: apt-get install -y chromium; .ci/run installs it)")
    if importlib.util.find_spec("playwright") is None:
        problems.append("the playwright package is missing (pip install -e '.[test]')")
    if problems:
        message = "browser test cannot run: " + "; ".join(problems)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def gb300_first() -> pd.Series:
    """Who brought GB300 NVL72 online first in the baseline with this seed, by the outcomes module."""
    model = controls.build_model(controls.RunSettings.of_scenario(BASELINE, SEED))
    model.run()
    first = outcomes.firsts(conform("events", model.events_frame()), conform("agents", model.agents_frame()))
    return first[(first["event"] == "first_online") & (first["system"] == "gb300_nvl72")].iloc[0]


def _visible(page, text: str) -> bool:
    matches = page.get_by_text(text, exact=True)
    return any(matches.nth(i).is_visible() for i in range(matches.count()))


def _press(page, slider_name: str, key: str, times: int) -> None:
    slider = page.get_by_role("slider", name=slider_name)
    slider.focus()
    for _ in range(times):
        slider.press(key)


def _choose(page, select_class: str, option: str) -> None:
    page.locator(f".{select_class}").click()
    page.get_by_role("option", name=option, exact=True).click()
    page.keyboard.press("Escape")


def test_a_users_path_through_the_app(gb300_first, tmp_path, record_property):
    _require_browser()
    timings: dict[str, float] = {}
    with B.chromium_page(1280, 800) as page, B.app_server(BASELINE, tmp_path / "server.log", SEED) as (url, answered):
        host = urlparse(url).netloc
        foreign, failed, console = [], [], []
        page.on("request", lambda r: foreign.append(r.url)
                if urlparse(r.url).scheme in ("http", "https", "ws", "wss") and urlparse(r.url).netloc != host
                else None)
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning")
                else None)
        page.on("pageerror", lambda e: console.append(f"page error: {e}"))

        # -- load: a clean page, the story so far ---------------------------------------------------------------
        page.goto(url)
        page.wait_for_selector(".airace-month")
        timings["page_shown_s"] = time.monotonic() - answered  # the month, scoreboard and controls
        B.wait_for_page(page)
        timings["first_paint_s"] = time.monotonic() - answered  # ... and every chart in view drawn
        assert page.title() == "airace"
        for stray in ("Page 0", "Use Threads", "Information", "Model Parameters", "This website runs on Solara"):
            assert not _visible(page, stray), f"{stray!r} shows"
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")  # 1280 x 800 fits
        assert B.text_of(page, ".airace-progress").startswith("not started: the race runs 2024-01 to 2030-12")
        assert page.locator(".airace-knob-value").all_inner_texts()[:3] == ["0", "0", "\u00d71.00"]  # values show
        assert all(page.locator(".v-slider__thumb-label").nth(i).is_visible() for i in range(2))  # Mesa's too

        B.step(page, 12)
        B.wait_for_month(page, "2024-12")
        B.wait_for_charts_in_view(page, {})
        h100 = page.locator('.airace-scoreboard tr[data-system="hgx_h100"]')
        assert "in service at the start" in h100.inner_text()  # not part of the race
        assert page.locator('.airace-scoreboard tr[data-system="hgx_h200"] td[data-event="first_online"]'
                            ).inner_text().startswith("2024-")  # filled as the race runs
        first_run_revenue = B.chart_at(page, "revenue", "2024-12")[0]["y"]
        assert len(first_run_revenue) == 12  # the time axis grows with the run
        compute = {t["uid"] for t in B.chart_at(page, "compute", "2024-12")}
        assert "microsoft" in compute and "openai" not in compute  # only agents with compute of their own

        # -- play to the end: it stops at the scenario's last month -------------------------------------------
        played = B.play_to_end(page)
        timings["play_months_per_s"] = played.months_per_s
        timings["play_months"] = played.months
        assert played.last_month == "2030-12" and B.month(page) == "2030-12"
        assert played.months == 72  # every month from 2025-01 to 2030-12 was shown while playing
        assert B.text_of(page, ".airace-progress") == "finished: 84 months, 2024-01 to 2030-12"
        assert page.get_by_role("button", name="Step", exact=True).is_disabled()
        row = page.locator('.airace-scoreboard tr[data-system="gb300_nvl72"] td[data-event="first_online"]')
        assert row.inner_text() == f"{gb300_first['date']:%Y-%m} {agent_label(gb300_first['agent'])}"

        # the same first, in the events filtered by type and system (oldest last; the aggregate is never first)
        _choose(page, "airace-filter-type", "first online")
        _choose(page, "airace-filter-system", "GB300 NVL72")
        B.wait_for_text(page, ".airace-events-count", "Events so far: ", "starts")
        page.wait_for_function("() => [...document.querySelectorAll('.airace-event-table tbody tr')].every("
                               "r => r.children[3].innerText === 'GB300 NVL72' && r.children[1].innerText === "
                               "'first online')")
        rows = [r for r in page.locator(".airace-event-table tbody tr").all_inner_texts()
                if agent_label("rest_of_market") not in r]
        assert rows[-1].split("\t")[:3] == [f"{gb300_first['date']:%Y-%m}", "first online",
                                            agent_label(gb300_first["agent"])]

        # the run's tables as CSV
        with page.expect_download() as download:
            page.get_by_role("button", name="agents.csv").click()
        agents_csv = pd.read_csv(download.value.path())
        assert len(agents_csv) == 84 * agents_csv["agent"].nunique() and agents_csv["date"].iloc[-1] == "2030-12-01"

        # -- Mesa's Reset replays the run; with Render Interval 13 it still stops at the last month --------------
        before = B.draws(page)

        def reset() -> None:
            page.get_by_role("button", name="Reset", exact=True).click()
            B.wait_for_month(page, "2024-01")
            B.wait_for_text(page, ".airace-progress", "not started", "starts")
            B.wait_for_charts_in_view(page, before)

        timings["reset_s"] = B.timed(reset)
        _press(page, "Render Interval (steps)", "ArrowRight", 6)
        B.wait_for_text(page, ".v-navigation-drawer", "13", "contains")
        B.step(page, 1)
        B.wait_for_month(page, "2025-01")  # 13 months at a time
        B.play_to_end(page)
        assert B.month(page) == "2030-12"

        # -- another scenario, two sliders moved, Apply: the run has exactly what the page shows ---------------
        _choose(page, "airace-scenario-select", "rubin_delay.toml")
        B.wait_for_text(page, ".airace-knob-vr_delay_months .airace-knob-value", "6")  # the file's value
        assert B.text_of(page, ".airace-story").startswith("Rubin delay:")
        _press(page, "Vera Rubin delay (months)", "ArrowRight", 3)
        _press(page, "Supply growth", "ArrowRight", 3)
        B.wait_for_text(page, ".airace-knob-supply_growth_multiplier .airace-knob-value", "\u00d71.15")
        B.wait_for_text(page, ".airace-knob-vr_delay_months .airace-knob-value", "9")
        B.wait_for_text(page, ".airace-draft-state", "changed", "starts")
        shown = dict(zip(controls.KNOB_SLIDERS, page.locator(".airace-knob-value").all_inner_texts()[1:], strict=True))
        page.get_by_role("button", name="Apply", exact=True).click()
        B.wait_for_text(page, ".airace-settings", "rubin_delay.toml", "contains")
        B.wait_for_text(page, ".airace-draft-state", "as running")
        # read back from the typed scenario the new model runs
        running = B.text_once_it_starts(page, ".airace-settings",
                                        f"Running: rubin_delay.toml \u00b7 seed {SEED} \u00b7 ")
        for knob, spec in controls.KNOB_SLIDERS.items():
            assert f"{spec.label.split(' (')[0]} {shown[knob]}" in running, knob
        assert "Vera Rubin delay 9" in running and "Supply growth \u00d71.15" in running
        B.wait_for_month(page, "2024-01")
        B.wait_for_page(page)
        B.step(page, 12)
        new_revenue = B.chart_at(page, "revenue", "2024-12")[0]["y"]
        assert len(new_revenue) == 12 and new_revenue != first_run_revenue  # the charts changed

        # -- the baseline, faint behind; a legend entry and the log scale toggled ---------------------------------
        page.get_by_text("compare with baseline").click()
        B.wait_for_text(page, ".airace-compare-note", "Faint dotted lines: baseline.toml", "starts")
        page.wait_for_function("() => ((document.querySelector('.airace-chart-revenue .airace-plot') || {}).data "
                               "|| []).some(t => t.uid === 'baseline-nvidia')", timeout=90_000)
        revenue = {t["uid"]: t for t in B.chart_at(page, "revenue", "2024-12")}
        assert revenue["baseline-nvidia"]["y"] == first_run_revenue  # the baseline is the first run, to this month
        assert revenue["nvidia"]["y"] == new_revenue

        page.locator(".airace-chart-compute").scroll_into_view_if_needed()
        page.locator(".airace-chart-compute .legend .traces").filter(has_text="Microsoft").locator(
            ".legendtoggle").click()
        page.wait_for_function("() => document.querySelector('.airace-chart-compute .airace-plot').data"
                               ".find(t => t.uid === 'microsoft').visible === 'legendonly'")
        page.locator(".airace-chart-compute").get_by_role("button", name="linear").click()
        page.wait_for_function("() => document.querySelector('.airace-chart-compute .airace-plot')"
                               ".layout.yaxis.type === 'linear'")
        draws = B.draws(page)
        B.step(page, 1)
        page.wait_for_function("n => Number(document.querySelector('.airace-chart-compute').dataset.draws) > n",
                               arg=draws["compute"])
        ms = {t["uid"]: t for t in B.chart_data(page, "compute")}["microsoft"]
        assert ms["visible"] == "legendonly" and len(ms["x"]) == 13  # the reader's choices survive a month
        assert page.evaluate("() => document.querySelector('.airace-chart-compute .airace-plot').layout.yaxis.type") \
            == "linear"

        # -- the wide screen uses its width -------------------------------------------------------------------------
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.wait_for_function("() => document.querySelector('.airace-chart-compute .main-svg')"
                               ".getBoundingClientRect().width > 650")
        seen = {"foreign": list(foreign), "failed": list(failed), "console": list(console)}  # before the server stops

    for name, value in timings.items():
        record_property(name, round(value, 2))
    print("browser timings:", ", ".join(f"{k} {v:.2f}" for k, v in timings.items()))
    assert seen["foreign"] == [], f"the page asked for files outside the local server: {seen['foreign'][:5]}"
    assert seen["failed"] == [], f"requests failed: {seen['failed'][:5]}"
    assert seen["console"] == [], f"console errors or warnings: {seen['console'][:5]}"
