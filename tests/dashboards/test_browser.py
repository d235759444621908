"""The dashboard in a real browser: `python -m cli dashboard` in a subprocess on the demo warehouse,
driven by Playwright with the system's chromium. Every page loads without a Streamlit exception, the eval
matrix draws every cell, a click on a cell and a filter change update what is shown, a deep link works on a
fresh server, and the dashboard stays open while another process writes the warehouse.

Screenshots of every page go to tests/artifacts/ (git-ignored). Without chromium (or the playwright
package) the tests are skipped locally (listed at the end of the run) and fail under CI (tests/support/environment.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.support.dashboard import (
    ARTIFACTS,
    LOAD_TIMEOUT_MS,
    PAGES,
    ROOT,
    VIEWPORT,
    DashboardPage,
    DashboardServer,
    DemoWarehouse,
    chromium,
    copy_warehouse,
    open_page,
    start_dashboard,
    wait_until_idle,
)
from warehouse.location import serving_path

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


def _server(demo: DemoWarehouse, db: Path, log: Path) -> DashboardServer:
    try:
        return start_dashboard(db, demo.env(db), log)
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def server(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    running = _server(demo, demo.db, tmp_path_factory.mktemp("dashboard") / "server.log")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    try:
        yield opened
    finally:
        context.close()


def assert_no_streamlit_exception(page) -> None:
    """No exception box, and no dialog (Streamlit says "Page not found" in one when a URL names no page)."""
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.all_inner_texts()
    dialogs = page.get_by_role("dialog")
    assert dialogs.count() == 0, dialogs.all_inner_texts()


def screenshot(page, name: str) -> Path:
    """The whole page: Streamlit scrolls inside its main container, so grow the viewport to its height."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(max(height + 40, VIEWPORT["height"]), 12_000)})
    page.wait_for_timeout(500)  # Plotly relayouts on resize
    path = ARTIFACTS / f"dashboard-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    return path


def chart(page, title: str):
    """The Plotly chart whose title contains `title`."""
    return page.locator('[data-testid="stPlotlyChart"]').filter(has=page.locator(".gtitle", has_text=title))


@pytest.mark.parametrize("dashboard_page", PAGES, ids=[page.url_path for page in PAGES])
def test_every_page_loads_without_an_exception(page, server: DashboardServer, dashboard_page: DashboardPage) -> None:
    open_page(page, server, dashboard_page)
    assert_no_streamlit_exception(page)
    main = page.locator('[data-testid="stMain"]')
    assert "Data as of 2026-11-01" in main.inner_text()
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert "Retention-filtered data" in sidebar, sidebar
    assert screenshot(page, dashboard_page.url_path).stat().st_size > 10_000


def test_eval_matrix_draws_every_cell(page, server: DashboardServer, demo: DemoWarehouse) -> None:
    with duckdb.connect(str(demo.db), read_only=True) as con:
        cells, statuses = con.execute("select count(*), list(distinct cell_status) from marts.eval_matrix").fetchone()
    open_page(page, server, next(p for p in PAGES if p.url_path == "evals"))
    matrix = page.locator(".st-key-eval_matrix_chart .js-plotly-plot")
    assert matrix.locator(".scatterlayer path.point").count() == cells
    assert matrix.locator(".scatterlayer .textpoint").count() == cells
    legend = matrix.locator(".legend").text_content() or ""
    for status in statuses:
        assert status in legend
    assert f"{cells} cells" in page.locator('[data-testid="stMain"]').inner_text()


def test_clicking_an_eval_cell_drills_down(page, server: DashboardServer) -> None:
    open_page(page, server, next(p for p in PAGES if p.url_path == "evals"))
    detail = page.locator(".st-key-eval_cell_detail")
    before = detail.inner_text()
    assert not before.startswith("pass"), "the cell shown first is one that does not pass"
    # the first square (first golden session of the first set) passes; the cell shown first does not
    page.locator(".st-key-eval_matrix_chart .scatterlayer path.point").first.click(force=True)
    page.wait_for_function(
        "before => document.querySelector('.st-key-eval_cell_detail').innerText !== before", arg=before
    )
    wait_until_idle(page)
    after = detail.inner_text()
    assert after != before and "golden session" in after
    assert_no_streamlit_exception(page)


def test_changing_the_period_updates_a_chart(page, server: DashboardServer) -> None:
    open_page(page, server, next(p for p in PAGES if p.url_path == "session-feedback"))
    responses = chart(page, "Responses per day by surface")
    bars = responses.locator(".barlayer .point")
    thirty = bars.count()
    assert thirty >= 30, thirty  # one bar per day and surface
    page.locator('[data-testid="stSidebar"]').get_by_role("radio", name="7 days").click()
    page.wait_for_function(
        "count => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .barlayer .point').length !== count",
        arg=page.locator('[data-testid="stPlotlyChart"] .barlayer .point').count(),
        timeout=LOAD_TIMEOUT_MS,
    )
    wait_until_idle(page)
    seven = bars.count()
    assert 0 < seven < thirty
    assert "2026-10-26 to 2026-11-01 (7 days)" in page.locator('[data-testid="stMain"]').inner_text()
    assert re.search(r"[?&]period=7\b", page.url), "the filter is in the URL, so the view can be shared"
    assert_no_streamlit_exception(page)


def test_a_deep_link_on_a_fresh_server_runs_through_the_entry_point(page, demo: DemoWarehouse, tmp_path: Path) -> None:
    """A page's URL opened first on a fresh server runs app.py (navigation, sidebar filters), not the page file
    alone: what Streamlit does with a folder named `pages/` beside the entry point (its legacy multipage mode),
    which is why the pages live in `app_pages/`."""
    fresh = _server(demo, demo.db, tmp_path / "server.log")
    try:
        page.goto(f"{fresh.url}/skills")
        page.get_by_role("heading", name="Skills", level=1).wait_for(timeout=LOAD_TIMEOUT_MS)
        page.locator('[data-testid="stSidebar"] [data-testid="stCheckbox"]').wait_for(timeout=LOAD_TIMEOUT_MS)
        wait_until_idle(page)
        navigation = page.locator('[data-testid="stSidebarNav"]').inner_text()
        assert "Conversations and reactions" in navigation  # the titles of app.py's st.navigation
        assert page.locator('[data-testid="stSidebar"]').get_by_text("Retention-filtered data").count() == 1
        assert_no_streamlit_exception(page)
    finally:
        fresh.stop()


def test_dashboard_reads_through_ingest_build_and_publish(page, demo: DemoWarehouse, tmp_path: Path) -> None:
    """The dashboard reads the serving file: while an ingest and then a build (ending in a publish that renames
    a new serving file in) write the same warehouse, every page load in chromium draws the old numbers without
    an error or a busy message; after the publish a reload shows the new rows."""
    db = copy_warehouse(demo.db, tmp_path / "shared.duckdb")
    running = _server(demo, db, tmp_path / "server.log")
    try:
        warehouse = next(p for p in PAGES if p.url_path == "warehouse")
        open_page(page, running, warehouse)
        before = _metric(page, "analyzer events")
        from tests.support.ingest import analyzer_event

        new_events = tmp_path / "feedback.jsonl"
        new_events.write_text(
            "".join(
                json.dumps(analyzer_event(n, session_id=f"dashboard-test-{n}", timestamp="2026-11-01T08:00:00Z")) + "\n"
                for n in range(900_000, 900_040)
            )
        )
        ingest = subprocess.run(
            [sys.executable, "-m", "cli", "ingest", "analyzer", str(new_events), "--db", str(db), "-q"],
            cwd=ROOT,
            env=demo.env(db),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert ingest.returncode == 0, ingest.stdout + ingest.stderr
        served_before = serving_path(db).stat().st_ino
        build_log = tmp_path / "build.log"
        with build_log.open("w") as output:
            build = subprocess.Popen(
                [sys.executable, "-m", "cli", "build", "--db", str(db), "--as-of", "2026-11-01"],
                cwd=ROOT,
                env={
                    **demo.env(db),
                    "DBT_TARGET_PATH": str(tmp_path / "dbt-target"),
                    "DBT_LOG_PATH": str(tmp_path / "dbt-logs"),
                },
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            loads = []
            try:
                while build.poll() is None:  # the pages, one after another, for as long as the build runs
                    shown = PAGES[len(loads) % len(PAGES)]
                    open_page(page, running, shown)
                    assert_no_streamlit_exception(page)
                    text = page.locator('[data-testid="stMain"]').inner_text()
                    assert "being written" not in text and "held for writing" not in text, text[:500]
                    if shown is warehouse and serving_path(db).stat().st_ino == served_before:
                        assert _metric(page, "analyzer events") == before, "the old numbers, until the publish"
                    loads.append(shown.url_path)
                code = build.wait(timeout=600)
            finally:
                if build.poll() is None:
                    build.kill()
                    build.wait()
        assert code == 0, build_log.read_text()[-3000:]
        assert "published " in build_log.read_text()
        assert len(loads) >= len(PAGES), f"only {len(loads)} page loads during the build: {loads}"
        assert serving_path(db).stat().st_ino != served_before, "the build did not publish a new serving file"

        open_page(page, running, warehouse)
        assert_no_streamlit_exception(page)
        assert _metric(page, "analyzer events") == before + 40
    finally:
        running.stop()


def _metric(page, label: str) -> int:
    metric = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return int(metric.locator('[data-testid="stMetricValue"]').inner_text().replace(",", ""))
