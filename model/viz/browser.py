"""Drive the app in headless Chromium (Playwright's Python package + the system `chromium`): for the browser test and
for the README screenshot (`python -m model.viz.browser docs/viz.png`, or `make viz-screenshot`).

Playwright cannot download its own browser here, so it drives Debian's `chromium` binary (`executable_path`) with
the flags that work headless as root in a container. The server is started on a free port as a subprocess.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from model.scenario.mesa_scenario import DEFAULT_SCENARIO_FILE
from model.viz import launch

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
CHART_NAMES = ("h100e", "gpus_by_system", "largest_cluster", "frontier_days", "revenue_backlog", "rental")


def chromium_path() -> str | None:
    """The system Chromium (Debian's `chromium` package), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def app_server(scenario: str | Path, log_path: str | Path, seed: int = 0, timeout_s: float = 60.0) -> Iterator[str]:
    """Start `solara run` on the app on a free local port; yield its URL; stop it (its output goes to log_path)."""
    port = launch.free_port()
    url = f"http://127.0.0.1:{port}/"
    with open(log_path, "wb") as log:
        proc = launch.start(scenario, "127.0.0.1", port, seed, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"the app server exited with code {proc.returncode}; see {log_path}")
                try:
                    with urllib.request.urlopen(url, timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the app server did not answer at {url} in {timeout_s:.0f} s; see {log_path}")
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except Exception:  # noqa: BLE001
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def chromium_page(width: int = 1400, height: int = 1750):
    """A Playwright page in headless system Chromium."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise FileNotFoundError("chromium not found on PATH (Debian: apt-get install -y chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(30_000)
            yield page
        finally:
            browser.close()


def wait_for_charts(page, timeout_ms: int = 45_000) -> None:
    """Wait until the month heading and all six chart images are shown (decoded, non-empty)."""
    page.wait_for_selector(".airace-month", timeout=timeout_ms)
    page.wait_for_function(
        """n => { const imgs = [...document.querySelectorAll('img.airace-chart')];
                  return imgs.length === n && imgs.every(i => i.complete && i.naturalWidth > 0); }""",
        arg=len(CHART_NAMES), timeout=timeout_ms)


def chart_src(page, name: str) -> str:
    return page.locator(f"img.airace-chart-{name}").get_attribute("src") or ""


def step(page, months: int = 1) -> None:
    """Click Step `months` times, each time waiting until the page shows the new month's progress."""
    from playwright.sync_api import expect

    for _ in range(months):
        before = page.locator(".airace-progress").inner_text()
        page.get_by_role("button", name="Step").click()
        expect(page.locator(".airace-progress")).not_to_have_text(before)


def wait_for_new_chart(page, name: str, old_src: str, timeout_ms: int = 30_000) -> None:
    """Wait until chart `name` shows a new image (new src, decoded)."""
    page.wait_for_function(
        """([sel, old]) => { const i = document.querySelector(sel);
                             return i && i.src !== old && i.complete && i.naturalWidth > 0; }""",
        arg=[f"img.airace-chart-{name}", old_src], timeout=timeout_ms)


def screenshot(out: Path, scenario: str | Path, months: int, seed: int = 0, width_px: int = 1200) -> Path:
    """Run the app, step `months` months, and save a page screenshot (downscaled, palette PNG: small for git)."""
    from PIL import Image

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    raw = out.with_suffix(".raw.png")
    with app_server(scenario, out.with_suffix(".server.log"), seed) as url, chromium_page() as page:
        page.goto(url)
        wait_for_charts(page)
        old = chart_src(page, "h100e")
        step(page, months)
        wait_for_new_chart(page, "h100e", old)
        page.wait_for_timeout(500)
        page.screenshot(path=str(raw))
    with Image.open(raw) as image:
        small = image.convert("RGB")
        small = small.resize((width_px, round(small.height * width_px / small.width)), Image.LANCZOS)
        small.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(out, optimize=True)
    raw.unlink()
    out.with_suffix(".server.log").unlink(missing_ok=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Screenshot the browser app after some months (for the README).")
    parser.add_argument("out", nargs="?", default="docs/viz.png", help="PNG to write (default docs/viz.png)")
    parser.add_argument("--scenario", default=str(DEFAULT_SCENARIO_FILE), help="scenario file")
    parser.add_argument("--months", type=int, default=30, help="months to step before the screenshot")
    parser.add_argument("--seed", type=int, default=0, help="seed")
    args = parser.parse_args(argv)
    path = screenshot(Path(args.out), args.scenario, args.months, args.seed)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
