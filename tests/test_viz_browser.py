"""The browser app in a real browser: the server as a subprocess, headless system Chromium through Playwright.

Checks what a user does: the page loads with no internet (every request goes to the local server), the charts
render, Step advances the month and redraws the charts and the event table, a moved slider is applied by Reset and
the month goes back to the start. Runs in CI (which apt-installs chromium); without chromium it fails when $CI is
set and skips otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import re
from urllib.parse import urlparse

import pytest

from model.viz import browser

BASELINE = "scenarios/baseline.toml"


def _require_browser() -> None:
    problems = []
    if browser.chromium_path() is None:
        problems.append("chromium is not on PATH (Debian: apt-get install -y chromium; .ci/run installs it)")
    if importlib.util.find_spec("playwright") is None:
        problems.append("the playwright package is missing (pip install -e '.[test]')")
    if problems:
        message = "browser test cannot run: " + "; ".join(problems)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    _require_browser()
    log = tmp_path_factory.mktemp("viz") / "server.log"
    with browser.app_server(BASELINE, log) as url:
        yield url


def test_step_move_a_control_and_reset_in_chromium(app_url, tmp_path):
    from playwright.sync_api import expect

    with browser.chromium_page() as page:
        foreign, failed = [], []
        host = urlparse(app_url).netloc
        page.on("request", lambda r: foreign.append(r.url)
                if urlparse(r.url).scheme in ("http", "https", "ws", "wss") and urlparse(r.url).netloc != host
                else None)
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)

        page.goto(app_url)
        browser.wait_for_charts(page)
        month, progress = page.locator(".airace-month"), page.locator(".airace-progress")
        expect(month).to_have_text("2024-01")
        expect(progress).to_contain_text("not started")
        expect(page.locator(".airace-events")).to_contain_text("No events yet")
        chart = page.locator("img.airace-chart-h100e")
        before_png, before_src = chart.screenshot(), browser.chart_src(page, "h100e")

        browser.step(page, 3)
        expect(month).to_have_text("2024-03")
        expect(progress).to_have_text("month 3 of 84 (2024-01 to 2030-12)")
        browser.wait_for_new_chart(page, "h100e", before_src)
        assert chart.screenshot() != before_png, "the H100e chart did not change after three steps"
        events = page.locator(".airace-events")
        expect(events).to_contain_text(re.compile(r"Events so far \(\d+\)"))
        expect(events).to_contain_text("2024-0")  # newest first: events of the first three months
        expect(events).not_to_contain_text("No events yet")
        expect(page.locator(".airace-status")).to_contain_text("H100e leader")

        slider = page.get_by_role("slider", name="Vera Rubin delay (months)")
        expect(slider).to_have_attribute("aria-valuenow", "0")  # the scenario file's value
        slider.focus()
        for _ in range(3):
            slider.press("ArrowRight")
        expect(slider).to_have_attribute("aria-valuenow", "3")
        settings = page.locator(".airace-settings")
        expect(settings).to_contain_text("Vera Rubin delay 0 months")  # not applied before Reset

        stepped_src = browser.chart_src(page, "h100e")
        page.get_by_role("button", name="Reset").click()
        expect(month).to_have_text("2024-01")
        expect(progress).to_contain_text("not started")
        expect(settings).to_contain_text("Vera Rubin delay 3 months")
        expect(slider).to_have_attribute("aria-valuenow", "3")
        browser.wait_for_new_chart(page, "h100e", stepped_src)  # the reset model's empty chart

        browser.step(page, 1)
        expect(progress).to_have_text("month 1 of 84 (2024-01 to 2030-12)")
        shot = tmp_path / "viz.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 20_000

    assert foreign == [], f"the page asked for files outside the local server: {foreign[:5]}"
    assert failed == [], f"requests failed: {failed[:5]}"
