"""Shared helpers of the dashboard tests (no tests here): the demo warehouse, derived warehouses, the server.

The demo warehouse is built once per test session by the real command line
(`demo-data`, `ingest`, `build` as of 2026-11-01) under pytest's base
temporary folder; both dashboard test modules ask `demo_warehouse()` for it
and the second gets the first one's. dbt writes its target/ and logs/ there
too (DBT_TARGET_PATH, DBT_LOG_PATH), so a test build neither races another
engineer's dbt run in the project folder nor overwrites their run_results.json.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
from streamlit.testing.v1 import AppTest

from operations.serving import publish
from tests.support.environment import free_port, unavailable
from warehouse.location import serving_path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboards" / "app.py"
ARTIFACTS = ROOT / "tests" / "artifacts"
AS_OF = "2026-11-01"
BUILD_TIMEOUT_S = 900


# chromium as the browser tests and bench/dashboard_render.py drive it (Debian's package, never `playwright install`)
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1500, "height": 1000}
LOAD_TIMEOUT_MS = 60_000  # a page's first load on a loaded machine
# true once a page is idle: the script run is over, nothing is a placeholder or stale, every chart drawn
IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.dataset.testScriptState !== 'notRunning') return false;
    if (document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]')) return false;
    return [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'));
}"""


@contextmanager
def chromium() -> Iterator[object]:
    """Debian's chromium driven by Playwright, for a test module's browser fixture; a missing playwright or
    chromium skips the test (fails it under CI)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("browser", "the playwright package is not installed (pip install -e '.[dev]')")
    if not CHROMIUM.exists():
        unavailable("browser", f"chromium not found at {CHROMIUM}: apt-get install -y chromium (or set CHROMIUM)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass(frozen=True)
class DashboardPage:
    script: str  # for AppTest.switch_page
    url_path: str  # st.Page's url_path: the test id
    title: str
    default: bool = False  # st.navigation's default page lives at the root, whatever its url_path

    @property
    def address(self) -> str:
        """Its path in the browser: http://host:port/<address> (/overview would say "Page not found")."""
        return "" if self.default else self.url_path


PAGES = (
    DashboardPage("app_pages/overview.py", "overview", "Overview", default=True),
    DashboardPage("app_pages/alerts.py", "alerts", "Alerts"),
    DashboardPage("app_pages/session_feedback.py", "session-feedback", "Session feedback"),
    DashboardPage("app_pages/conversations.py", "conversations", "Conversations and reactions"),
    DashboardPage("app_pages/skills.py", "skills", "Skills"),
    DashboardPage("app_pages/evals.py", "evals", "Evals"),
    DashboardPage("app_pages/retention.py", "retention", "Retention"),
    DashboardPage("app_pages/warehouse.py", "warehouse", "Warehouse"),
)


def wait_until_idle(page) -> None:
    """Wait until the script run is over, no element is a placeholder or stale, and Plotly drew every chart
    (twice, a moment apart: Streamlit loads widget code lazily and a rerun can start right after a run)."""
    for _ in range(2):
        page.wait_for_function(IDLE, timeout=LOAD_TIMEOUT_MS)
        page.wait_for_timeout(300)
    page.wait_for_function(IDLE, timeout=LOAD_TIMEOUT_MS)


def open_page(page, server: DashboardServer, dashboard_page: DashboardPage) -> None:
    page.goto(f"{server.url}/{dashboard_page.address}")
    page.get_by_role("heading", name=dashboard_page.title, level=1).wait_for(timeout=LOAD_TIMEOUT_MS)
    # the sidebar's last filter: drawn by the entry point before the page itself
    page.locator('[data-testid="stSidebar"] [data-testid="stCheckbox"]').wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_until_idle(page)


@dataclass(frozen=True)
class DemoWarehouse:
    db: Path
    dbt_target: Path  # DBT_TARGET_PATH of its build: run_results.json says when it was built
    data_dir: Path

    def env(self, db: Path | None = None) -> dict[str, str]:
        return {**os.environ, "FEEDBACK_DB": str(db or self.db), "DBT_TARGET_PATH": str(self.dbt_target)}


def all_members_key(db: Path) -> str:
    """The key of the rollup over every tenant or project that `db`'s marts were built with (marts.build_info)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select all_members_key from marts.build_info").fetchone()[0]


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = BUILD_TIMEOUT_S) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _check(result: subprocess.CompletedProcess, what: str) -> None:
    if result.returncode != 0:
        output = (result.stdout + result.stderr)[-4000:]
        raise RuntimeError(f"{what} exited {result.returncode}:\n{output}")


def demo_warehouse(base: Path) -> DemoWarehouse:
    """The demo warehouse under `base` (pytest's base temp folder), built on first use."""
    root = base / "dashboard-demo"
    warehouse = DemoWarehouse(root / "demo.duckdb", root / "dbt-target", root / "demo-data")
    done = root / "BUILT"
    if done.exists():
        return warehouse
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    env = {
        **os.environ,
        "FEEDBACK_DB": str(warehouse.db),
        "DBT_TARGET_PATH": str(warehouse.dbt_target),
        "DBT_LOG_PATH": str(root / "dbt-logs"),
    }
    _check(cli("demo-data", str(warehouse.data_dir), "--as-of", AS_OF, "-q", env=env), "demo-data")
    _check(
        cli("ingest", "--config", str(warehouse.data_dir / "sources.toml"), "--db", str(warehouse.db), "-q", env=env),
        "ingest",
    )
    _check(cli("build", "--as-of", AS_OF, "--db", str(warehouse.db), env=env), "build")
    done.write_text("ok\n")
    return warehouse


def demo_or_fail(base: Path) -> DemoWarehouse:
    """The demo warehouse for a test module's fixture: a build that fails fails the tests that need it."""
    import pytest

    try:
        return demo_warehouse(base)
    except RuntimeError as exc:
        pytest.fail(f"could not build the demo warehouse: {exc}")


def marts_relations(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, str]:
    """The relations of catalog `catalog`'s marts schema: name -> table_type (BASE TABLE or VIEW)."""
    rows = con.execute(
        "select table_name, table_type from information_schema.tables "
        "where table_catalog = ? and table_schema = 'marts'",
        [catalog],
    ).fetchall()
    return dict(rows)


def copy_warehouse(source: Path, target: Path) -> Path:
    """A copy of the warehouse file and its serving file (what a build published)."""
    shutil.copyfile(source, target)
    if serving_path(source).exists():
        shutil.copyfile(serving_path(source), serving_path(target))
    return target


def republish(db: Path) -> Path:
    """Publish the warehouse's marts again (after a test changed them in the warehouse), as a build does."""
    publish(db)
    return db


def derived_warehouse(source: Path, target: Path, *, schemas: tuple[str, ...], with_rows: tuple[str, ...]) -> Path:
    """A warehouse with the tables of `schemas` copied from source: with their rows for the schemas in
    `with_rows`, empty otherwise (views become tables of the same columns)."""
    with duckdb.connect(str(target)) as con:
        con.execute(f"attach '{source}' as source (read_only)")
        relations = con.execute(
            """
            select table_schema, table_name from information_schema.tables
            where table_catalog = 'source' and table_schema in (select unnest($schemas))
            """,
            {"schemas": list(schemas)},
        ).fetchall()
        for schema in schemas:
            con.execute(f'create schema if not exists "{schema}"')
        for schema, table in relations:
            limit = "" if schema in with_rows else " limit 0"
            con.execute(f'create table "{schema}"."{table}" as select * from source."{schema}"."{table}"{limit}')
        con.execute("detach source")
    if "marts" in schemas:
        publish(target)
    return target


def empty_warehouse(source: Path, target: Path) -> Path:
    """Built, but on no data: every raw, staging, intermediate and marts relation exists and is empty."""
    return derived_warehouse(
        source, target, schemas=("raw", "staging", "intermediate", "marts", "seeds"), with_rows=("seeds",)
    )


def never_built_warehouse(source: Path, target: Path) -> Path:
    """Loaded (the raw schema with its rows) but never built: no marts."""
    return derived_warehouse(source, target, schemas=("raw",), with_rows=("raw",))


@dataclass
class DashboardServer:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop `feedback-analytics dashboard` and its `streamlit run` child: both are in the session it leads."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)


def start_dashboard(db: Path, env: dict[str, str], log: Path, timeout: float = 60) -> DashboardServer:
    """`python -m cli dashboard --port <free port> --db DB` in its own session; waits for /_stcore/health."""
    return start_streamlit(
        lambda port: ["-m", "cli", "dashboard", "--port", str(port), "--db", str(db)], env, log, timeout
    )


def start_streamlit(arguments, env: dict[str, str], log: Path, timeout: float = 60) -> DashboardServer:
    """`python <arguments(port)>` (a Streamlit server on a free port) in its own session; waits for
    /_stcore/health."""
    port = free_port()
    handle = log.open("w")
    process = subprocess.Popen(
        [sys.executable, *arguments(port)],
        cwd=ROOT,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    handle.close()
    server = DashboardServer(process, port, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the dashboard exited {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"the dashboard did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


APPTEST_TIMEOUT_S = 120


def run_page(page: DashboardPage, **state: object) -> AppTest:
    """Run the entry point, then the page (the entry point registers the pages), with widget state set."""
    app = AppTest.from_file(str(APP), default_timeout=APPTEST_TIMEOUT_S)
    for key, value in state.items():
        app.session_state[key] = value
    app.run()
    app.switch_page(page.script).run()
    return app


def assert_no_exception(app: AppTest) -> None:
    assert not app.exception, "\n".join(str(exc.value) + "\n" + "\n".join(exc.stack_trace) for exc in app.exception)


def metrics(app: AppTest) -> dict[str, str]:
    return {metric.label: metric.value for metric in app.metric}
