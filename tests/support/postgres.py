"""A throwaway PostgreSQL 15 server for the tests and benchmarks: initdb into a folder, trust auth,
127.0.0.1 on a free port (tests/conftest.py's `pg_server` fixture; bench/run.py's PostgreSQL benchmark)."""

from __future__ import annotations

import os
import pwd
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.environment import free_port


def _installed_pg_bin() -> Path:
    """Debian's layout, /usr/lib/postgresql/<major>/bin: the newest installed major (15 on Debian 12)."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0
    )
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = Path(os.environ["PG_BIN"]) if os.environ.get("PG_BIN") else _installed_pg_bin()
PG_SERVER_TOOLS = ("initdb", "pg_ctl", "postgres", "psql")
PG_SUPERUSER = "postgres"
PG_TEST_DATABASE = "feedback_test"
PG_TIMEOUT_S = 60


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
            f"PostgreSQL server programs not found in {PG_BIN} ({', '.join(missing)}): "
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
