"""Time every dashboard page in a real browser until it is fully rendered, side by side with a bare Streamlit page.

    .venv/bin/python -m bench.dashboard_render --db <warehouse> [--loads 10]

Starts `python -m cli dashboard` on the warehouse and drives Debian's
chromium through Playwright (the test suite's launch flags). A load ends when
the page is fully rendered: its title is drawn, the script run is over, no
element is a placeholder or stale, and Plotly has drawn every chart (the test
suite's IDLE condition, held over a 300 ms re-check so a trailing rerun
counts). Three ways to reach a page:

- first visit: a fresh browser profile (nothing cached) opens the page's URL
  just after the warehouse changed (the serving file's modification time is
  bumped, so st.cache_data misses and every query runs): the worst case, what the first
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
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.dashboard_queries import p95
from tests.support.dashboard import (
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE,
    PAGES,
    VIEWPORT,
    DashboardServer,
    start_dashboard,
    start_streamlit,
)
from warehouse.location import serving_path

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


def invalidate_queries(db: Path) -> None:
    """Make the dashboard's next page run query again: its st.cache_data is keyed by the serving file's inode
    and modification time (dashboards/data.py), so bump the serving file's (the warehouse file's is not read);
    without one, there is nothing cached to miss."""
    with contextlib.suppress(FileNotFoundError):
        touch(serving_path(db))


def p50_p95(values: list[float]) -> str:
    """`p50 / p95 s` of some load times (empty: `n/a`)."""
    return f"{statistics.median(values):.2f} / {p95(values):.2f} s" if values else "n/a"


def checked_arguments(description: str, loads_default: int, loads_help: str) -> argparse.Namespace:
    """`--db` (a built warehouse, resolved) and `--loads`; stops when the warehouse or chromium is missing."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--db", required=True, type=Path, help="a built warehouse")
    parser.add_argument("--loads", type=int, default=loads_default, help=loads_help)
    args = parser.parse_args()
    if not args.db.exists():
        raise SystemExit(f"error: no warehouse at {args.db}")
    if not CHROMIUM.exists():
        raise SystemExit(f"error: chromium not found at {CHROMIUM}: apt-get install -y chromium")
    args.db = args.db.resolve()
    return args


@contextmanager
def chromium() -> Iterator[object]:
    """Debian's chromium, launched by Playwright with the test suite's flags."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def open_dashboard(browser, db: Path, log_prefix: str) -> Iterator[tuple[DashboardServer, object]]:
    """`python -m cli dashboard` on `db`, warmed up, and a browser page showing its first page (the front end
    loaded and in the browser's cache); the server log goes to a temporary folder named `log_prefix`."""
    env = {**os.environ, "FEEDBACK_DB": str(db)}
    server = start_dashboard(db, env, Path(tempfile.mkdtemp(prefix=log_prefix)) / "server.log")
    try:
        first_visit(browser, f"{server.url}/{PAGES[0].address}", PAGES[0].title)  # the server warms up
        context = browser.new_context(viewport=VIEWPORT)
        try:
            page = context.new_page()
            reload(page, f"{server.url}/{PAGES[0].address}", PAGES[0].title)  # the browser caches the front end
            yield server, page
        finally:
            context.close()
    finally:
        server.stop()


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
    rows = []
    with open_dashboard(browser, db, "dashboard-render-") as (server, page):
        for number, dashboard_page in enumerate(PAGES):
            url = f"{server.url}/{dashboard_page.address}"
            elsewhere = PAGES[(number + 1) % len(PAGES)]
            times: dict[str, list[float]] = {"first visit": [], "reload": [], "navigate": []}
            for _ in range(loads):
                invalidate_queries(db)
                times["first visit"].append(first_visit(browser, url, dashboard_page.title))
                times["reload"].append(reload(page, url, dashboard_page.title))
                reload(page, f"{server.url}/{elsewhere.address}", elsewhere.title)
                invalidate_queries(db)
                times["navigate"].append(navigate(page, dashboard_page.title))
            rows.append((dashboard_page.title, times))
            summary = ", ".join(f"{way} p95 {p95(values):.2f} s" for way, values in times.items())
            print(f"{dashboard_page.title}: {summary}", flush=True)
    return rows


def main() -> None:
    args = checked_arguments(__doc__.splitlines()[0], 10, "loads per page and way (default 10)")
    db = args.db
    with chromium() as browser:
        baseline = baseline_first_visits(browser, args.loads)
        print(f"bare baseline: first visit p95 {p95(baseline):.2f} s", flush=True)
        rows = dashboard_loads(browser, db, args.loads)

    print()
    print(f"warehouse {db}, {args.loads} loads per page and way, chromium headless; p50 / p95")
    print()
    print("| page | first visit | reload | navigate | goal: p95 <= 3 s |")
    print("|---|---:|---:|---:|---|")
    print(f"| *bare baseline* (no data) | {p50_p95(baseline)} | | | |")
    for title, times in rows:
        met = [way for way, values in times.items() if p95(values) <= 3]
        verdict = "all three" if len(met) == len(times) else ("**none**" if not met else ", ".join(met))
        print(
            f"| {title} | {p50_p95(times['first visit'])} | {p50_p95(times['reload'])} | {p50_p95(times['navigate'])} "
            f"| {verdict} |"
        )


if __name__ == "__main__":
    main()
