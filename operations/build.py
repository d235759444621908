"""`dbt build` on the warehouse with the project's own profile and vars."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

PROJECT_DIR = Path(__file__).resolve().parents[1]
DEFAULT_TARGET = "dev"
# targets of profiles.yml that only read (the serving file, for MetricFlow's `mf`): nothing builds on them
READ_ONLY_TARGETS = frozenset({"serving"})


def dbt_executable() -> str:
    """The dbt installed beside this Python (the venv's), else the one on PATH."""
    beside_python = Path(sys.executable).with_name("dbt")
    return str(beside_python) if beside_python.exists() else "dbt"


def dbt_command(
    verb: str = "build",
    *dbt_args: str,
    as_of: str | None = None,
    unit_tests: bool = True,
    project_dir: Path = PROJECT_DIR,
    work_dir: Path | None = None,
    target: str | None = None,
) -> list[str]:
    """Every dbt command line of the project (builds, the tests' compiles and docs, the benchmarks): `verb` as
    dbt spells it (`build`, `docs generate`, `source freshness`), this
    project and its profiles.yml, `as_of` as the one dbt var, `work_dir` holding target/ and logs/,
    `target` a profiles.yml target other than `dev` (DuckDB); the target is always named, so a
    FEEDBACK_DBT_TARGET left in the environment for MetricFlow (profiles.yml) never redirects a build.

    `unit_tests=False` leaves the unit tests out of a build: they check the SQL on fixed rows, not the
    warehouse's data, so a build of the warehouse skips them (dbt's advice for production runs); the test
    suite runs them."""
    command = [dbt_executable(), *verb.split(), "--project-dir", str(project_dir), "--profiles-dir", str(project_dir)]
    command += ["--target", target or DEFAULT_TARGET]
    if as_of:
        command += ["--vars", json.dumps({"as_of": as_of})]
    if not unit_tests:
        command += ["--exclude-resource-type", "unit_test"]
    if work_dir is not None:
        command += ["--target-path", str(work_dir / "target"), "--log-path", str(work_dir / "logs")]
    return command + list(dbt_args)


def dbt_build(
    db: Path,
    as_of: str | None,
    dbt_args: list[str] | None = None,
    *,
    capture: bool = False,
    unit_tests: bool = False,
    on_line: Callable[[str], None] | None = None,
    target: str | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Run dbt build against `db`; returns its exit code and (when captured) its output.

    Captured output has no colour codes; `on_line` sees each line of it as dbt prints it. `target` names a
    profiles.yml target (None: DuckDB), `env` adds environment variables (a Spark target's folder); what a
    Spark build needs before and after dbt is in operations/spark.py, the choice in operations/targets.py."""
    from warehouse.connection import wait_until_writable

    wait_until_writable(db)  # a dashboard query in flight finishes first
    env = {
        **os.environ,
        **(env or {}),
        "FEEDBACK_DB": str(db.resolve()),
        "FEEDBACK_AS_OF": as_of or "",  # not --vars: a new instant each night would force a full re-parse
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    command = dbt_command("build", *(dbt_args or []), unit_tests=unit_tests, target=target)
    if not capture and on_line is None:
        return subprocess.run(command, env=env, check=False, stdin=subprocess.DEVNULL).returncode, ""
    env["DBT_USE_COLORS"] = "false"
    lines = []
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = ANSI_ESCAPE.sub("", line)
            lines.append(line)
            if on_line is not None:
                on_line(line)
    return proc.returncode, "".join(lines)


@dataclass(frozen=True)
class Target:
    """A target of profiles.yml: its name, adapter type and connection method, as written there."""

    name: str
    type: str
    method: str | None

    @property
    def is_spark(self) -> bool:
        return self.type == "spark"


def profile_targets(project_dir: Path = PROJECT_DIR) -> dict[str, Target]:
    """The targets profiles.yml declares."""
    import yaml

    profile = yaml.safe_load((project_dir / "profiles.yml").read_text())["feedback_analytics"]
    return {
        name: Target(name, str(output.get("type")), output.get("method")) for name, output in profile["outputs"].items()
    }


def resolve_target(name: str | None, project_dir: Path = PROJECT_DIR) -> Target | None:
    """The named target to build on (None: `dev`, DuckDB); an unknown name, or the read-only `serving` target,
    is one line listing the valid ones."""
    from warehouse.errors import UserError

    if name is None:
        return None
    targets = {key: value for key, value in profile_targets(project_dir).items() if key not in READ_ONLY_TARGETS}
    if name in READ_ONLY_TARGETS:
        raise UserError(
            f"target {name!r} only reads the serving file (for MetricFlow's `mf`): build on "
            f"{', '.join(sorted(targets))}",
            exit_code=2,
        )
    if name not in targets:
        raise UserError(
            f"unknown target {name!r}: profiles.yml declares {', '.join(sorted(targets))} "
            "(`--target spark` reaches a Spark Thrift Server, `--target spark_local` runs Spark in-process)",
            exit_code=2,
        )
    return targets[name]


ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
NODE_DONE = re.compile(r"^\S+\s+(\d+) of (\d+) (?!START)")


class BuildProgress:
    """dbt's progress on a terminal as one line, `dbt build: 12 of 483 nodes done`, instead of its raw output;
    on a failure the lines after dbt's error summary are shown."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.done = 0
        self.total = 0

    def __call__(self, line: str) -> None:
        if (match := NODE_DONE.match(line.strip())) and " hook" not in line:  # on-run-start hooks count apart
            self.done, self.total = self.done + 1, int(match[2])
            self.stream.write(f"\rdbt build: {self.done:,} of {self.total:,} nodes done")
            self.stream.flush()

    def finish(self, code: int, output: str) -> None:
        if self.total:
            self.stream.write("\n")
        if code != 0:
            lines = output.splitlines()
            start = next((i for i, line in enumerate(lines) if "Completed with" in line), max(len(lines) - 40, 0))
            self.stream.write("\n".join(line for line in lines[start:] if line.strip()) + "\n")
        self.stream.write(summary_of(output) + "\n")
        self.stream.flush()


def summary_of(output: str) -> str:
    """dbt's closing count line, e.g. 'PASS=257 WARN=0 ERROR=0 SKIP=0 TOTAL=257'."""
    for line in reversed(output.splitlines()):
        if "PASS=" in line and "TOTAL=" in line:
            return line[line.index("PASS=") :].strip()
    return "no summary line from dbt"


SELECTION_FLAGS = ("-s", "--select", "-m", "--models", "--exclude", "--selector")


def selects(dbt_args: tuple[str, ...] | list[str]) -> bool:
    """Whether dbt arguments build a selection rather than everything (the as-of rule of macros/as_of/as_of.sql)."""
    return any(
        arg in SELECTION_FLAGS or arg.startswith(tuple(f"{flag}=" for flag in SELECTION_FLAGS)) for arg in dbt_args
    )


def last_build_as_of(db: Path) -> str | None:
    """The as-of instant of the last build (marts.build_info), for dbt's `as_of` var; None when none is recorded."""
    import duckdb

    from warehouse.connection import connect

    con = connect(db, read_only=True)
    try:
        rows = con.execute("select as_of_at from marts.build_info").fetchall()
    except duckdb.CatalogException:
        return None
    finally:
        con.close()
    return rows[0][0].isoformat(timespec="microseconds") + "Z" if rows and rows[0][0] else None
