"""`dbt build` on the warehouse with the project's own profile and vars."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]


def dbt_command(as_of: str | None, dbt_args: list[str], *, unit_tests: bool = False) -> list[str]:
    """The dbt build command line. Unit tests check the SQL on fixed rows, not the warehouse's data, so a
    build of the warehouse leaves them out (dbt's advice for production runs); the test suite runs them."""
    dbt = Path(sys.executable).with_name("dbt")
    command = [str(dbt) if dbt.exists() else "dbt", "build", "--project-dir", str(PROJECT_DIR)]
    command += ["--profiles-dir", str(PROJECT_DIR)]
    if as_of:
        command += ["--vars", json.dumps({"as_of": as_of})]
    if not unit_tests:
        command += ["--exclude-resource-type", "unit_test"]
    return command + dbt_args


def dbt_build(
    db: Path,
    as_of: str | None,
    dbt_args: list[str] | None = None,
    *,
    capture: bool = False,
    unit_tests: bool = False,
) -> tuple[int, str]:
    """Run dbt build against `db`; returns its exit code and (when captured) its output."""
    from ingest.warehouse import wait_until_writable

    wait_until_writable(db)  # a dashboard query in flight finishes first
    env = {**os.environ, "FEEDBACK_DB": str(db.resolve()), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    completed = subprocess.run(
        dbt_command(as_of, dbt_args or [], unit_tests=unit_tests),
        env=env,
        check=False,
        capture_output=capture,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    return completed.returncode, (completed.stdout or "") + (completed.stderr or "")


def summary_of(output: str) -> str:
    """dbt's closing count line, e.g. 'PASS=257 WARN=0 ERROR=0 SKIP=0 TOTAL=257'."""
    for line in reversed(output.splitlines()):
        if "PASS=" in line and "TOTAL=" in line:
            return line[line.index("PASS=") :].strip()
    return "no summary line from dbt"
