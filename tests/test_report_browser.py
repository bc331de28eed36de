"""report.html in a real browser: headless Chromium (the system's, through Playwright's Python package) opens the file
with the network cut off, every figure image loads, and no request leaves the page.

Runs in CI (which apt-installs chromium); without chromium or playwright it fails when $CI is set and skips
otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from urllib.parse import urlparse

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _chromium() -> str:
    path = next((p for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
                 if p and os.path.exists(p)), None)
    problems = []
    if path is None:
        problems.append("chromium is not installed (Debian: apt-get install -y chromium; .ci/run installs it)")
    if importlib.util.find_spec("playwright") is None:
        problems.append("the playwright package is missing (pip install -e '.[test]')")
    if problems:
        message = "browser test cannot run: " + "; ".join(problems)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return str(path)


def test_report_html_opens_offline_with_every_image_loaded(report_dir):
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    page_url = (report_dir / "report.html").resolve().as_uri()
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=FLAGS, headless=True)
        try:
            context = browser.new_context(offline=True)  # anything fetched from a network would fail
            page = context.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_url, wait_until="load")
            images = page.evaluate("""() => Array.from(document.images).map(i => ({src: i.currentSrc.slice(0, 22),
                complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}))""")
            title = page.title()
            headings = page.locator("h2").all_inner_texts()
        finally:
            browser.close()
    pngs = sorted(report_dir.glob("*.png"))
    assert len(images) == len(pngs) > 10
    assert all(i["complete"] and i["width"] > 1000 and i["height"] > 300 for i in images), images
    assert all(i["src"].startswith("data:image/png") for i in images)
    leaving = [u for u in requests if u != page_url and not u.startswith("data:")]
    assert not leaving, leaving
    assert all(urlparse(u).scheme in ("file", "data") for u in requests)
    assert title.startswith("airace report") and {"Inputs", "Summary", "Figures", "Sources of the reference data",
                                                  "Notes"} <= set(headings)
