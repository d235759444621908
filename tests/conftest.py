"""Shared pytest fixtures.

PostgreSQL: `pg_dsn` starts one throwaway PostgreSQL 15 server for the whole
test session (initdb into a temporary folder, trust auth, 127.0.0.1 on a free
port) and `pg_database` gives each test a fresh empty database on it. Tests
that use either are marked `postgres` automatically, so `-m "not postgres"`
deselects them. Without the server binaries the tests are skipped locally (and
listed at the end of the run) and fail under CI (tests/fixtures_environment.py).
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixtures_environment import ENABLE, tag, unavailable

PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_SERVER_TOOLS = ("initdb", "pg_ctl", "postgres", "psql")
PG_SUPERUSER = "postgres"
PG_TEST_DATABASE = "feedback_test"
PG_TIMEOUT_S = 60


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if {"pg_dsn", "pg_database"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)


@dataclass(frozen=True)
class PostgresServer:
    """A running throwaway server: where it lives and how to reach it."""

    base_dir: Path
    data_dir: Path
    port: int
    run_as: str | None  # OS user for server commands (postgres refuses to run as root)

    def dsn(self, database: str) -> str:
        return f"postgresql://{PG_SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> None:
        run_pg_tool(
            [
                str(PG_BIN / "psql"),
                "--no-psqlrc",
                "--quiet",
                "--set=ON_ERROR_STOP=1",
                f"--dbname={self.dsn(database)}",
                f"--command={sql}",
            ],
            cwd=self.base_dir,
        )


def run_pg_tool(args: list[str], *, cwd: Path, run_as: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL program, as `run_as` when given; fail with its output."""
    command = ["runuser", "-u", run_as, "--", *args] if run_as else args
    try:
        return subprocess.run(
            command,
            cwd=cwd,
            check=True,
            capture_output=True,
            text=True,
            timeout=PG_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.CalledProcessError as exc:
        output = (exc.stdout or "") + (exc.stderr or "")
        raise RuntimeError(f"{shlex.join(args)} exited {exc.returncode}:\n{output}") from None


def missing_postgres_reason() -> str | None:
    missing = [tool for tool in PG_SERVER_TOOLS if not (PG_BIN / tool).exists()]
    if missing:
        return (
            f"PostgreSQL 15 server programs not found in {PG_BIN} ({', '.join(missing)}): "
            "install them with `apt-get install -y postgresql` (or set PG_BIN)"
        )
    if os.geteuid() == 0 and not _user_exists(PG_SUPERUSER):
        return "running as root but there is no `postgres` OS user to run the server as"
    return None


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_postgres(base_dir: Path) -> PostgresServer:
    """initdb into base_dir/data and start the server; base_dir must be usable by run_as."""
    run_as = PG_SUPERUSER if os.geteuid() == 0 else None
    data_dir = base_dir / "data"
    socket_dir = base_dir / "socket"
    socket_dir.mkdir(mode=0o700)
    if run_as:
        account = pwd.getpwnam(run_as)
        for path in (base_dir, socket_dir):
            os.chown(path, account.pw_uid, account.pw_gid)

    run_pg_tool(
        [
            str(PG_BIN / "initdb"),
            "--auth=trust",
            f"--username={PG_SUPERUSER}",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
            f"--pgdata={data_dir}",
        ],
        cwd=base_dir,
        run_as=run_as,
    )

    # A free port can be taken between probing and binding: try a few.
    last_error: RuntimeError | None = None
    for _attempt in range(3):
        port = free_port()
        server_options = " ".join(
            [
                f"-p {port}",
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={shlex.quote(str(socket_dir))}",
                # A throwaway server: durability only costs time here.
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
            ]
        )
        try:
            run_pg_tool(
                [
                    str(PG_BIN / "pg_ctl"),
                    f"--pgdata={data_dir}",
                    f"--log={base_dir / 'server.log'}",
                    f"--options={server_options}",
                    "--wait",
                    f"--timeout={PG_TIMEOUT_S}",
                    "start",
                ],
                cwd=base_dir,
                run_as=run_as,
            )
        except RuntimeError as exc:
            last_error = exc
            continue
        return PostgresServer(base_dir=base_dir, data_dir=data_dir, port=port, run_as=run_as)
    log = base_dir / "server.log"
    log_tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise RuntimeError(f"PostgreSQL did not start: {last_error}\nserver.log:\n{log_tail}")


def stop_postgres(server: PostgresServer) -> None:
    run_pg_tool(
        [str(PG_BIN / "pg_ctl"), f"--pgdata={server.data_dir}", "--mode=immediate", "stop"],
        cwd=server.base_dir,
        run_as=server.run_as,
    )


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
