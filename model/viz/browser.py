"""Drive the app in headless Chromium (Playwright's Python package + the system `chromium`): the browser test, the
timings it reports, and the README screenshot (`python -m model.viz.browser docs/viz.png`, `make viz-screenshot`).

Playwright cannot download its own browser here, so it drives Debian's `chromium` binary (`executable_path`) with
flags that work headless as root in a container, and a fresh profile. The server is started on a free port as a
subprocess. Every wait is on a condition the page shows (a month, a progress line, a chart's `data-draws`
counter), never a fixed sleep, so a loaded machine only makes things slower, not wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from model.scenario.mesa_scenario import DEFAULT_SCENARIO_FILE
from model.viz import launch

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]
CHART_NAMES = ("compute", "shares", "gpus_by_system", "largest_cluster", "frontier_days", "revenue", "backlog",
               "rental")
TIMEOUT_MS = 60_000


def chromium_path() -> str | None:
    """The system Chromium (Debian's `chromium` package), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def app_server(scenario: str | Path, log_path: str | Path, seed: int = 0,
               timeout_s: float = 90.0) -> Iterator[tuple[str, float]]:
    """Start `solara run` on the app on a free local port; yield its URL and the time it first answered
    (`time.monotonic()`); stop it (its output goes to log_path)."""
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
                time.sleep(0.1)  # polling the server's port: it has no event to wait on
            yield url, time.monotonic()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except Exception:  # noqa: BLE001
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def chromium_page(width: int = 1280, height: int = 800):
    """A Playwright page in headless system Chromium with a fresh profile."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise FileNotFoundError("chromium not found on PATH (Debian: apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="airace-chromium-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(profile, executable_path=executable, args=CHROMIUM_ARGS,
                                                        headless=True, viewport={"width": width, "height": height})
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            yield page
        finally:
            context.close()


# -- what the page shows --------------------------------------------------------------------------------------------
def month(page) -> str:
    return page.locator(".airace-month").inner_text().strip()


def draws(page) -> dict[str, int]:
    """How many times each chart has been drawn so far."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.airace-chart')].map(
        e => [[...e.classList].find(c => c.startsWith('airace-chart-')).slice(13), Number(e.dataset.draws || 0)]))""")


def wait_for_page(page, timeout_ms: int = TIMEOUT_MS) -> None:
    """Until the month card shows, Mesa's Step button can be pressed and every chart in view has been drawn."""
    page.wait_for_selector(".airace-month", timeout=timeout_ms)
    page.get_by_role("button", name="Step").wait_for(timeout=timeout_ms)
    wait_for_charts_in_view(page, {}, timeout_ms)


def wait_for_charts_in_view(page, before: dict[str, int], timeout_ms: int = TIMEOUT_MS) -> None:
    """Until every chart in the viewport has been drawn more often than `before` says."""
    page.wait_for_function(
        """before => { const charts = [...document.querySelectorAll('.airace-chart')];
            const inView = charts.filter(e => { const r = e.getBoundingClientRect();
                return r.bottom > 0 && r.top < window.innerHeight && r.width > 0; });
            return charts.length > 0 && inView.every(e => {
                const name = [...e.classList].find(c => c.startsWith('airace-chart-')).slice(13);
                return Number(e.dataset.draws || 0) > (before[name] || 0); }); }""",
        arg=before, timeout=timeout_ms)


def text_of(page, selector: str) -> str:
    """The element's text, "" while it is not there (a part being re-created)."""
    return page.evaluate("s => (document.querySelector(s) || {}).innerText || ''", selector)


def wait_for_text(page, selector: str, text: str, how: str = "equals", timeout_ms: int = TIMEOUT_MS) -> None:
    """Until the element's text equals, contains, starts with or differs from `text` ("equals", "contains",
    "starts", "differs")."""
    page.wait_for_function(
        """([s, t, how]) => { const e = document.querySelector(s); if (!e) return false; const x = e.innerText;
            return how === 'equals' ? x === t : how === 'contains' ? x.includes(t)
                 : how === 'starts' ? x.startsWith(t) : x !== t; }""",
        arg=[selector, text, how], timeout=timeout_ms)


def text_once_it_starts(page, selector: str, prefix: str, timeout_ms: int = TIMEOUT_MS) -> str:
    """The element's text as soon as it starts with `prefix`, read in the same check (a part re-created between a
    wait and a separate read would read as "")."""
    handle = page.wait_for_function(
        """([s, t]) => { const e = document.querySelector(s); const x = e ? e.innerText : '';
            return x.startsWith(t) ? x : false; }""",
        arg=[selector, prefix], timeout=timeout_ms)
    return handle.json_value()


def wait_for_month(page, text: str, timeout_ms: int = TIMEOUT_MS) -> None:
    wait_for_text(page, ".airace-month", text, timeout_ms=timeout_ms)


def step(page, months: int = 1) -> None:
    """Click Step `months` times, each time waiting until the page shows the next month's progress line."""
    for _ in range(months):
        before = text_of(page, ".airace-progress")
        page.get_by_role("button", name="Step", exact=True).click()
        wait_for_text(page, ".airace-progress", before, "differs")


def chart_at(page, name: str, month: str, timeout_ms: int = TIMEOUT_MS) -> list[dict]:
    """Scroll chart `name` into view (charts out of view are not drawn), wait until it shows `month`, and return
    its traces (`chart_data`)."""
    page.locator(f".airace-chart-{name}").scroll_into_view_if_needed()
    page.wait_for_function("([n, m]) => (document.querySelector('.airace-chart-' + n) || {dataset: {}})"
                           ".dataset.month === m", arg=[name, month], timeout=timeout_ms)
    return chart_data(page, name)


def chart_data(page, name: str) -> list[dict]:
    """The traces chart `name` draws (plotly.js keeps them on its element): uid, name, visible, x, y."""
    return page.evaluate("""n => ((document.querySelector('.airace-chart-' + n + ' .airace-plot') || {}).data || [])
        .map(t => ({uid: t.uid, name: t.name, visible: t.visible === undefined ? true : t.visible,
                    x: Array.from(t.x || []), y: Array.from(t.y || [])}))""", name)


# -- timings --------------------------------------------------------------------------------------------------------
_RECORDER = """() => {
    window.airaceLog = {months: [], charts: {}};
    const card = document.querySelector('.airace-status');
    new MutationObserver(() => window.airaceLog.months.push(
            [performance.now(), (card.querySelector('.airace-month') || {}).innerText]))
        .observe(card, {childList: true, subtree: true, characterData: true});
    for (const el of document.querySelectorAll('.airace-chart')) {
        const name = [...el.classList].find(c => c.startsWith('airace-chart-')).slice(13);
        window.airaceLog.charts[name] = [];
        new MutationObserver(() => window.airaceLog.charts[name].push(el.dataset.month))
            .observe(el, {attributes: true, attributeFilter: ['data-month']});
    }
}"""


@dataclass(frozen=True)
class PlayTiming:
    months: int  # months the page showed during play
    seconds: float  # from the first to the last month shown
    last_month: str
    chart_months: dict[str, int]  # per chart: distinct months it drew during play

    @property
    def months_per_s(self) -> float:
        return (self.months - 1) / self.seconds if self.seconds > 0 else float("nan")


def play_to_end(page, timeout_ms: int = 180_000) -> PlayTiming:
    """Press play and wait until the run finishes (the progress line says so and play is disabled); returns how
    fast months went by and how many distinct months each chart drew."""
    page.evaluate(_RECORDER)
    page.get_by_role("button", name="\u25b6").click()
    wait_for_text(page, ".airace-progress", "finished", "starts", timeout_ms)
    log = page.evaluate("() => window.airaceLog")
    shown = [(t, m) for t, m in log["months"] if m]
    distinct = list(dict.fromkeys(m for _, m in shown))
    first_t = next(t for t, m in shown if m == distinct[0])
    last_t = next(t for t, m in shown if m == distinct[-1])
    return PlayTiming(len(distinct), (last_t - first_t) / 1000, distinct[-1],
                      {name: len({m for m in months if m}) for name, months in log["charts"].items()})


def timed(action) -> float:
    start = time.monotonic()
    action()
    return time.monotonic() - start


def screenshot(out: Path, scenario: str | Path, months: int, seed: int = 0, width: int = 1600, height: int = 1000,
               width_px: int = 1200) -> Path:
    """Run the app, step `months` months, and save a screenshot of the window (downscaled, palette PNG: small for
    git)."""
    from PIL import Image

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    raw = out.with_suffix(".raw.png")
    log = out.with_suffix(".server.log")
    with app_server(scenario, log, seed) as (url, _), chromium_page(width, height) as page:
        page.goto(url)
        wait_for_page(page)
        before = draws(page)
        step(page, months)
        wait_for_charts_in_view(page, before)
        page.screenshot(path=str(raw))
    with Image.open(raw) as image:
        small = image.convert("RGB")
        small = small.resize((width_px, round(small.height * width_px / small.width)), Image.LANCZOS)
        small.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(out, optimize=True)
    raw.unlink()
    log.unlink(missing_ok=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Screenshot the browser app after some months (for the README).")
    parser.add_argument("out", nargs="?", default="docs/viz.png", help="PNG to write (default docs/viz.png)")
    parser.add_argument("--scenario", default=str(DEFAULT_SCENARIO_FILE), help="scenario file")
    parser.add_argument("--months", type=int, default=40, help="months to step before the screenshot")
    parser.add_argument("--seed", type=int, default=0, help="seed")
    args = parser.parse_args(argv)
    path = screenshot(Path(args.out), args.scenario, args.months, args.seed)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
