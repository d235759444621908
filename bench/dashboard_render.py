"""Time every dashboard page in a real browser until it is fully rendered, side by side with a bare Streamlit page.

    .venv/bin/python -m bench.dashboard_render --db <warehouse> [--loads 10]

Starts `python -m cli dashboard` on the warehouse and drives Debian's
chromium through Playwright (the test suite's launch flags). A load ends when
the page is fully rendered: its title is drawn, the script run is over, no
element is a placeholder or stale, and Plotly has drawn every chart (the test
suite's IDLE condition, held over a 300 ms re-check so a trailing rerun
counts). Three ways to reach a page:

- first visit: a fresh browser profile (nothing cached) opens the page's URL
  just after the warehouse changed (its modification time is bumped, so
  st.cache_data misses and every query runs): the worst case, what the first
  visitor after a nightly build waits for. The browser downloads and
  compiles Streamlit's front end and its lazily loaded Plotly bundle (4.7 MB).
- reload: the same browser opens the URL again, its HTTP cache and the
  query cache warm.
- navigate: in an open dashboard, a click on the page in the sidebar just
  after the warehouse changed (queries run again; the front end is loaded).

The bare baseline (bench/render_baseline_app.py: sidebar filters, a title, a
metric, a Plotly chart and a table on three rows in memory) is timed as a
first visit in the same run: the floor that Streamlit and Plotly set here.

Prints a Markdown table of p50 / p95 per page and way (goal: fully rendered
within 3 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.dashboard_queries import p95
from tests.support.dashboard import CHROMIUM, CHROMIUM_ARGS, IDLE, PAGES, VIEWPORT, start_dashboard, start_streamlit

ROOT = Path(__file__).resolve().parents[1]

TIMEOUT_MS = 60_000
BASELINE_APP = ROOT / "bench" / "render_baseline_app.py"
BASELINE_TITLE = "Bare baseline"


def until_rendered(page, title: str, started: float) -> float:
    """Seconds from `started` until the page shows `title` and stays idle over a 300 ms re-check."""
    page.get_by_role("heading", name=title, level=1).wait_for(timeout=TIMEOUT_MS)
    while True:
        page.wait_for_function(IDLE, timeout=TIMEOUT_MS)
        rendered = time.perf_counter()
        page.wait_for_timeout(300)
        if page.evaluate(f"({IDLE})()"):
            return rendered - started


def first_visit(browser, url: str, title: str) -> float:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        started = time.perf_counter()
        page.goto(url)
        return until_rendered(page, title, started)
    finally:
        context.close()


def reload(page, url: str, title: str) -> float:
    started = time.perf_counter()
    page.goto(url)
    return until_rendered(page, title, started)


def navigate(page, title: str) -> float:
    """Click the page in the sidebar's navigation (the page is on another page of the app)."""
    started = time.perf_counter()
    page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click(timeout=TIMEOUT_MS)
    return until_rendered(page, title, started)


def touch(path: Path) -> None:
    now = time.time_ns()
    os.utime(path, ns=(now, now))


def baseline_first_visits(browser, loads: int) -> list[float]:
    log = Path(tempfile.mkdtemp(prefix="render-baseline-")) / "server.log"
    flags = ["--server.headless", "true", "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer"]
    server = start_streamlit(
        lambda port: ["-m", "streamlit", "run", str(BASELINE_APP), "--server.port", str(port), *flags],
        dict(os.environ),
        log,
    )
    try:
        first_visit(browser, server.url, BASELINE_TITLE)  # the server warms up
        return [first_visit(browser, server.url, BASELINE_TITLE) for _ in range(loads)]
    finally:
        server.stop()


def dashboard_loads(browser, db: Path, loads: int) -> list[tuple[str, dict[str, list[float]]]]:
    env = {**os.environ, "FEEDBACK_DB": str(db)}
    log = Path(tempfile.mkdtemp(prefix="dashboard-render-")) / "server.log"
    server = start_dashboard(db, env, log)
    rows = []
    try:
        first_visit(browser, f"{server.url}/{PAGES[0].address}", PAGES[0].title)  # the server warms up
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        try:
            reload(page, f"{server.url}/{PAGES[0].address}", PAGES[0].title)  # the browser caches the front end
            for number, dashboard_page in enumerate(PAGES):
                url = f"{server.url}/{dashboard_page.address}"
                elsewhere = PAGES[(number + 1) % len(PAGES)]
                times: dict[str, list[float]] = {"first visit": [], "reload": [], "navigate": []}
                for _ in range(loads):
                    touch(db)
                    times["first visit"].append(first_visit(browser, url, dashboard_page.title))
                    times["reload"].append(reload(page, url, dashboard_page.title))
                    reload(page, f"{server.url}/{elsewhere.address}", elsewhere.title)
                    touch(db)
                    times["navigate"].append(navigate(page, dashboard_page.title))
                rows.append((dashboard_page.title, times))
                summary = ", ".join(f"{way} p95 {p95(values):.2f} s" for way, values in times.items())
                print(f"{dashboard_page.title}: {summary}", flush=True)
        finally:
            context.close()
    finally:
        server.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, type=Path, help="a built warehouse")
    parser.add_argument("--loads", type=int, default=10, help="loads per page and way (default 10)")
    args = parser.parse_args()
    if not args.db.exists():
        raise SystemExit(f"error: no warehouse at {args.db}")
    if not CHROMIUM.exists():
        raise SystemExit(f"error: chromium not found at {CHROMIUM}: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    db = args.db.resolve()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            baseline = baseline_first_visits(browser, args.loads)
            print(f"bare baseline: first visit p95 {p95(baseline):.2f} s", flush=True)
            rows = dashboard_loads(browser, db, args.loads)
        finally:
            browser.close()

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} / {p95(values):.2f} s"

    print()
    print(f"warehouse {db}, {args.loads} loads per page and way, chromium headless; p50 / p95")
    print()
    print("| page | first visit | reload | navigate | goal: p95 <= 3 s |")
    print("|---|---:|---:|---:|---|")
    print(f"| *bare baseline* (no data) | {cell(baseline)} | | | |")
    for title, times in rows:
        met = [way for way, values in times.items() if p95(values) <= 3]
        verdict = "all three" if len(met) == len(times) else ("**none**" if not met else ", ".join(met))
        print(
            f"| {title} | {cell(times['first visit'])} | {cell(times['reload'])} | {cell(times['navigate'])} "
            f"| {verdict} |"
        )


if __name__ == "__main__":
    main()
