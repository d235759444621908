"""Shared pytest fixtures.

PostgreSQL: `pg_dsn` starts one throwaway PostgreSQL 15 server for the whole
test session (initdb into a temporary folder, trust auth, 127.0.0.1 on a free
port) and `pg_database` gives each test a fresh empty database on it. Tests
that use either are marked `postgres` automatically, so `-m "not postgres"`
deselects them. Without the server binaries the tests are skipped locally (and
listed at the end of the run) and fail under CI (tests/support/environment.py).

Spark: `spark_server` starts one Spark Thrift Server for the whole session
from the pip pyspark (127.0.0.1, a free port, its own Derby metastore and
folders), the way a cluster is reached; tests that use it are marked `spark`.
Without Java or pyspark they are skipped locally and fail under CI.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.environment import ENABLE, tag, unavailable
from tests.support.postgres import (
    PG_TEST_DATABASE,
    PostgresServer,
    missing_postgres_reason,
    start_postgres,
    stop_postgres,
)
from tests.support.spark import SparkServer, missing_spark_reason, start_thrift_server, stop_thrift_server


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """List the suites skipped for a missing dependency, with the command that enables each."""

    def message(report: pytest.TestReport) -> str:  # a skip's longrepr is (file, line, "Skipped: ...")
        return report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)

    lines = []
    for suite, command in ENABLE.items():
        skipped = [m for m in map(message, terminalreporter.stats.get("skipped", [])) if tag(suite) in m]
        if skipped:
            reason = skipped[0].split(tag(suite), 1)[1].strip()
            lines.append(f"{suite}: {len(skipped)} test(s) skipped: {reason}\n    enable with: {command}")
    if lines:
        terminalreporter.section("suites skipped for a missing dependency (under CI they fail)", yellow=True)
        for line in lines:
            terminalreporter.line(line)


# The longest test files, started first: `make test` hands whole files to two workers (pytest-xdist, --dist
# loadfile) in collection order, so a long file collected late would leave one worker alone at the end. Only the
# order changes; each file's tests keep theirs.
LONGEST_FIRST = (
    "tests/operations/test_spark_build.py",
    "tests/dashboards/test_hostile_content.py",
    "tests/operations/test_dbt_publish.py",
    "tests/operations/test_forget.py",
    "tests/operations/test_nightly.py",
    "tests/dashboards/test_browser.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: place for place, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest in order
    for item in items:
        if {"pg_dsn", "pg_database"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)
        if "spark_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    reason = missing_postgres_reason()
    if reason:
        unavailable("postgres", reason)

    # Our own folder, not pytest's tmp_path: /tmp/pytest-of-root is not
    # traversable by the postgres user. mkdtemp makes it 0700; start_postgres
    # hands it to the server's user.
    base_dir = Path(tempfile.mkdtemp(prefix="feedback-analytics-pg-"))
    server: PostgresServer | None = None
    try:
        try:
            server = start_postgres(base_dir)
            server.psql(f"create database {PG_TEST_DATABASE}")
        except RuntimeError as exc:
            pytest.fail(str(exc))
        yield server
    finally:
        try:
            if server is not None:
                stop_postgres(server)
        finally:
            shutil.rmtree(base_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_dsn(pg_server: PostgresServer) -> str:
    """libpq DSN of the session's test database, e.g. postgresql://postgres@127.0.0.1:PORT/feedback_test."""
    return pg_server.dsn(PG_TEST_DATABASE)


@pytest.fixture
def pg_database(pg_server: PostgresServer) -> Iterator[str]:
    """DSN of a fresh, empty database for one test; dropped afterwards."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    pg_server.psql(f"create database {name}")
    try:
        yield pg_server.dsn(name)
    finally:
        pg_server.psql(f"drop database if exists {name} with (force)")


@pytest.fixture(scope="session")
def spark_server() -> Iterator[SparkServer]:
    reason = missing_spark_reason()
    if reason:
        unavailable("spark", reason)
    base_dir = Path(tempfile.mkdtemp(prefix="feedback-analytics-spark-"))
    server: SparkServer | None = None
    try:
        try:
            server = start_thrift_server(base_dir)
        except RuntimeError as exc:
            pytest.fail(str(exc))
        yield server
    finally:
        try:
            if server is not None:
                stop_thrift_server(server)
        finally:
            shutil.rmtree(base_dir, ignore_errors=True)
