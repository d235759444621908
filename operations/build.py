"""`dbt build` on the warehouse with the project's own profile and vars."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import duckdb
import yaml

from operations.data_test_scope import ENV_VAR as TESTS_SINCE_ENV
from operations.data_test_scope import since_text
from operations.serving import Publication
from warehouse.as_of import ReportInstant
from warehouse.connection import BUILD_MEMORY_LIMIT, connect, memory_limit, spill_folder, wait_until_writable
from warehouse.errors import UserError

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


Sink = Callable[[str], None]
"""Where a build's lines go as they come (dbt's output, and what the build adds): the CLI's printer or
progress line, the nightly's logger. Each line ends with a newline."""


@dataclass(frozen=True)
class NodeResult:
    """One node of dbt's run_results.json: its id, status (`success`, `pass`, `error`, `fail`, `skipped`,
    `warn`, ...) and seconds."""

    unique_id: str
    status: str
    seconds: float


@dataclass(frozen=True)
class BuildResult:
    """What a build did: dbt's exit code, its run results (target/run_results.json, empty when dbt wrote none),
    what was published to the serving file (None: nothing, e.g. a failed build), the line saying so (or why
    not; "" when the build says nothing of it) and the output, without colour codes."""

    code: int
    nodes: tuple[NodeResult, ...]
    output: str
    published: Publication | None = None
    publish_note: str = ""

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def summary(self) -> str:
        """dbt's closing count line, e.g. 'PASS=257 WARN=0 ERROR=0 SKIP=0 TOTAL=257'."""
        return summary_of(self.output)

    @property
    def statuses(self) -> Counter[str]:
        """How many nodes ended in each status."""
        return Counter(node.status for node in self.nodes)


def dbt_target_dir(project_dir: Path = PROJECT_DIR) -> Path:
    """Where dbt writes target/ (run_results.json): DBT_TARGET_PATH, else target/, relative to the project."""
    folder = Path(os.environ.get("DBT_TARGET_PATH") or "target")
    return folder if folder.is_absolute() else project_dir / folder


def run_results(target_dir: Path, since: float) -> tuple[NodeResult, ...]:
    """The nodes of the run_results.json that dbt wrote into `target_dir` after `since` (time.time())."""
    path = target_dir / "run_results.json"
    try:
        if path.stat().st_mtime < since:
            return ()  # an earlier run's: this one wrote none (dbt failed before running anything)
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return ()
    return tuple(
        NodeResult(str(node["unique_id"]), str(node["status"]), float(node.get("execution_time") or 0))
        for node in document.get("results", [])
    )


def dbt_build(
    db: Path,
    as_of: ReportInstant | None,
    dbt_args: list[str] | None = None,
    *,
    sink: Sink | None = None,
    unit_tests: bool = False,
    target: str | None = None,
    env: dict[str, str] | None = None,
    tests_since: dt.datetime | None = None,
) -> BuildResult:
    """Run dbt build against the warehouse file `db` as of `as_of` (None: the macro's rule, macros/as_of/as_of.sql).

    Each line of dbt's output, without colour codes, goes to `sink` as dbt prints it and into the result.
    `target` names a profiles.yml target (None: DuckDB), `env` adds environment variables (a Spark target's
    folder), `tests_since` makes the large models' data tests read the loads after it (None: every row;
    operations/data_test_scope.py); what a Spark build needs before and after dbt is in operations/spark.py,
    the choice in operations/targets.py."""
    wait_until_writable(db)  # a dashboard query in flight finishes first
    spill_folder(db.resolve())
    env = {
        **os.environ,
        **(env or {}),
        "FEEDBACK_DB": str(db.resolve()),
        # profiles.yml's memory_limit, checked; DuckDB's spill folder (<db>.tmp/) made private beforehand
        "FEEDBACK_MEMORY_LIMIT": memory_limit(BUILD_MEMORY_LIMIT),
        "FEEDBACK_AS_OF": dbt_as_of(as_of),  # not --vars: a new instant each night would force a full re-parse
        TESTS_SINCE_ENV: since_text(tests_since),  # the same, for the tests on new loads
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_USE_COLORS": "false",
    }
    command = dbt_command("build", *(dbt_args or []), unit_tests=unit_tests, target=target)
    started = time.time()
    lines = []
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = ANSI_ESCAPE.sub("", line)
            lines.append(line)
            if sink is not None:
                sink(line)
    return BuildResult(proc.returncode, run_results(dbt_target_dir(), started), "".join(lines))


def dbt_as_of(as_of: ReportInstant | None) -> str:
    """The instant as dbt receives it (FEEDBACK_AS_OF): the only place it becomes text; "" for none."""
    return "" if as_of is None else as_of.dbt_var


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
    profile = yaml.safe_load((project_dir / "profiles.yml").read_text())["feedback_analytics"]
    return {
        name: Target(name, str(output.get("type")), output.get("method")) for name, output in profile["outputs"].items()
    }


def resolve_target(name: str | None, project_dir: Path = PROJECT_DIR) -> Target | None:
    """The named target to build on (None: `dev`, DuckDB); an unknown name, or the read-only `serving` target,
    is one line listing the valid ones."""
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

    def finish(self, result: BuildResult) -> None:
        if self.total:
            self.stream.write("\n")
        if not result.ok:
            lines = result.output.splitlines()
            start = next((i for i, line in enumerate(lines) if "Completed with" in line), max(len(lines) - 40, 0))
            self.stream.write("\n".join(line for line in lines[start:] if line.strip()) + "\n")
        self.stream.write(result.summary + "\n")
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


def last_build_as_of(db: Path) -> ReportInstant | None:
    """The as-of instant of the last build (marts.build_info); None when none is recorded."""
    con = connect(db, read_only=True)
    try:
        rows = con.execute("select as_of_at from marts.build_info").fetchall()
    except duckdb.CatalogException:
        return None
    finally:
        con.close()
    return ReportInstant(rows[0][0]) if rows and rows[0][0] else None
