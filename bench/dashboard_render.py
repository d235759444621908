"""Time every dashboard page in a real browser until it is fully rendered: cold and warm loads.

    .venv/bin/python bench/dashboard_render.py --db <warehouse> [--loads 10]

Starts `python -m ingest dashboard` on the warehouse and drives Debian's
chromium through Playwright (the test suite's launch flags). A load opens the
page's URL in a fresh browser context and ends when the page is fully
rendered: its title is drawn, the script run is over, no element is a
placeholder or stale, and Plotly has drawn every chart (the test suite's
IDLE condition, held over a 300 ms re-check so a trailing rerun counts).

- cold: the warehouse file's modification time is bumped before the load, so
  st.cache_data misses (its key holds that time) and every query of the page
  opens DuckDB and runs: what the first visitor after a nightly build waits
  for.
- warm: the same page again, its queries answered from the cache: what
  everybody after the first visitor waits for.

Prints a Markdown table of p50 / p95 / max per page (goal: fully rendered
within 3 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS, IDLE, VIEWPORT  # noqa: E402
from test_dashboard_support import PAGES, start_dashboard  # noqa: E402

from bench.dashboard_queries import p95  # noqa: E402

TIMEOUT_MS = 60_000


def render_seconds(browser, url: str, title: str) -> float:
    """Seconds from navigation to a fully rendered page, in a fresh context (no browser cache, new session)."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        started = time.perf_counter()
        page.goto(url)
        page.get_by_role("heading", name=title, level=1).wait_for(timeout=TIMEOUT_MS)
        while True:
            page.wait_for_function(IDLE, timeout=TIMEOUT_MS)
            rendered = time.perf_counter()
            page.wait_for_timeout(300)
            if page.evaluate(f"({IDLE})()"):
                return rendered - started
    finally:
        context.close()


def touch(path: Path) -> None:
    now = time.time_ns()
    os.utime(path, ns=(now, now))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, type=Path, help="a built warehouse")
    parser.add_argument("--loads", type=int, default=10, help="cold and warm loads per page (default 10)")
    args = parser.parse_args()
    if not args.db.exists():
        raise SystemExit(f"error: no warehouse at {args.db}")
    if not CHROMIUM.exists():
        raise SystemExit(f"error: chromium not found at {CHROMIUM}: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    db = args.db.resolve()
    env = {**os.environ, "FEEDBACK_DB": str(db)}
    log = Path(tempfile.mkdtemp(prefix="dashboard-render-")) / "server.log"
    server = start_dashboard(db, env, log)
    rows = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                render_seconds(browser, f"{server.url}/{PAGES[0].url_path}", PAGES[0].title)  # the server warms up
                for dashboard_page in PAGES:
                    url = f"{server.url}/{dashboard_page.url_path}"
                    cold, warm = [], []
                    for _ in range(args.loads):
                        touch(db)
                        cold.append(render_seconds(browser, url, dashboard_page.title))
                        warm.append(render_seconds(browser, url, dashboard_page.title))
                    rows.append((dashboard_page.title, cold, warm))
                    print(f"{dashboard_page.title}: cold p95 {p95(cold):.2f} s, warm p95 {p95(warm):.2f} s", flush=True)
            finally:
                browser.close()
    finally:
        server.stop()
    print()
    print(f"warehouse {db}, {args.loads} cold and {args.loads} warm loads per page, chromium headless")
    print()
    print("| page | cold p50 | cold p95 | cold max | warm p50 | warm p95 | goal <= 3 s |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for title, cold, warm in rows:
        met = "yes" if p95(cold) <= 3 else "**no**"
        print(
            f"| {title} | {statistics.median(cold):.2f} s | {p95(cold):.2f} s | {max(cold):.2f} s "
            f"| {statistics.median(warm):.2f} s | {p95(warm):.2f} s | {met} |"
        )


if __name__ == "__main__":
    main()
