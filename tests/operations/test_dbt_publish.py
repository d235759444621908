"""A plain dbt build reaches every reader (issue 27, item 2).

The README's analyst commands, parsed from README.md itself and run in the order written on a copy of the demo
warehouse (real dbt, real files): every one succeeds, each successful build publishes the serving file from
inside dbt (on-run-end + operations/dbt_plugin.py), a build of a selection keeps the warehouse's as-of, and
`export` reads what the last build made. A failed plain build publishes nothing; a build killed between its
commit and its publish leaves readers saying that a newer build exists, until `feedback-analytics publish`.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from tests.support.dashboard import PAGES, ROOT, DemoWarehouse, copy_warehouse, demo_or_fail, run_page
from warehouse.location import serving_path

pytestmark = pytest.mark.slow
README = ROOT / "README.md"
DBT_TIMEOUT_S = 900
OVERVIEW = next(page for page in PAGES if page.default)
# the last day of the README test's data: after the as-of 2026-11-15 the README's block builds at
DATA_UNTIL = "2026-11-25"


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoWarehouse:
    return demo_or_fail(tmp_path_factory.getbasetemp())


def analyst_commands() -> list[str]:
    """The command lines of the README's "Analysts: dbt directly" block, comments dropped, in order."""
    section = README.read_text(encoding="utf-8").split("## Analysts: dbt directly", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S)
    assert block, "the README's analyst section has no ```sh block"
    lines = [re.sub(r"\s+#\s.*$", "", line).strip() for line in block[1].splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def environment(db: Path, work: Path) -> dict[str, str]:
    venv_bin = ROOT / ".venv" / "bin"
    path = str(venv_bin if venv_bin.is_dir() else Path(sys.executable).parent)
    inherited = {
        key: value for key, value in os.environ.items() if key not in ("FEEDBACK_DBT_TARGET", "FEEDBACK_AS_OF")
    }
    return {
        **inherited,
        "PATH": path + os.pathsep + os.environ.get("PATH", ""),
        "FEEDBACK_DB": str(db),
        "DBT_TARGET_PATH": str(work / "target"),
        "DBT_LOG_PATH": str(work / "logs"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }


@dataclass(frozen=True)
class Served:
    """What the serving file shows after a command: its marts' as-of, the build it names; the recorded build."""

    as_of: dt.datetime | None
    build_id: str | None
    recorded: str | None


def record_path(db: Path) -> Path:
    """The build record beside the warehouse (`<stem>.build.json`, warehouse/build_record.py), read as a file."""
    return db.with_name(db.name.removesuffix(".duckdb") + ".build.json")


def recorded_build(db: Path) -> str | None:
    return json.loads(record_path(db).read_text())["build_id"] if record_path(db).exists() else None


def served(db: Path) -> Served:
    if not serving_path(db).exists():
        return Served(None, None, recorded_build(db))
    with duckdb.connect(str(serving_path(db)), read_only=True) as con:
        (as_of,) = con.execute("select as_of_at from marts.build_info").fetchall()[0]
        columns = [row[0] for row in con.execute("describe serving.publish_info").fetchall()]
        build_id = (
            con.execute("select build_id from serving.publish_info").fetchall()[0][0] if "build_id" in columns else None
        )
    return Served(as_of, build_id, recorded_build(db))


def serve_docs(line: str, env: dict[str, str]) -> str:
    """`dbt docs serve` is a server: start it on a free port, wait for its page, stop it; what it answered."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = re.sub(r"--port \d+", f"--port {port}", line) + " --no-browser"
    server = subprocess.Popen(
        ["bash", "-c", f"exec {command}"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert server.poll() is None, f"`{command}` exited {server.returncode}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as answer:  # noqa: S310
                    return answer.read().decode("utf-8", "replace")
            except OSError:
                time.sleep(0.5)
        raise AssertionError(f"`{command}` answered nothing within 60 s")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


@dataclass(frozen=True)
class Step:
    line: str
    code: int
    output: str
    served: Served | None


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Step]]:
    """The README's analyst block, run line by line on a small demo warehouse, loaded not built, whose data
    runs to DATA_UNTIL: the block's as-of 2026-11-15 cuts it, so models built at two as-ofs disagree.
    `FEEDBACK_DB` is that warehouse, not the checkout's file the block's export names."""
    work = tmp_path_factory.mktemp("readme-analyst")
    db = work / "analyst.duckdb"
    loaded = [
        ["demo-data", str(work / "data"), "--as-of", DATA_UNTIL, "--scale", "0.2", "--days", "120", "-q"],
        ["ingest", "--config", str(work / "data" / "sources.toml"), "--db", str(db), "-q"],
    ]
    for args in loaded:
        done = subprocess.run(
            [sys.executable, "-m", "cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=DBT_TIMEOUT_S
        )
        assert done.returncode == 0, done.stderr
    env = environment(db, work)
    steps: list[Step] = []
    for line in analyst_commands():
        if line.startswith("source "):
            assert (ROOT / line.split()[1]).exists() or (ROOT / ".venv").exists(), line
            continue
        if line.startswith("export FEEDBACK_DB="):
            continue  # the copy is FEEDBACK_DB already
        for part in (part.strip() for part in line.split("&&")):
            if " docs serve" in part:
                page = serve_docs(part, env)
                steps.append(Step(part, 0 if "dbt" in page.lower() else 1, page[:500], None))
                continue
            done = subprocess.run(
                ["bash", "-c", part], cwd=ROOT, env=env, capture_output=True, text=True, timeout=DBT_TIMEOUT_S
            )
            steps.append(Step(part, done.returncode, done.stdout[-6000:] + done.stderr[-3000:], served(db)))
            if done.returncode != 0:
                return db, steps
    return db, steps


def step(steps: list[Step], contains: str) -> Step:
    return next(s for s in steps if contains in s.line)


def test_the_readme_analyst_commands_run_in_order(readme_run: tuple[Path, list[Step]]) -> None:
    """Every command of the block exits 0, in the order written, including the build of one mart and what it
    needs after a build at an as-of (it used to fail assert_feedback_signals_one_per_source_row: models of two
    as-ofs), the unit tests and the docs site (served, then stopped)."""
    _, steps = readme_run
    failed = [(s.line, s.output) for s in steps if s.code != 0]
    assert not failed, failed[0][0] + "\n" + failed[0][1]
    lines = [s.line for s in steps]
    assert len(lines) == len([p for line in analyst_commands()[2:] for p in line.split("&&")]), lines
    assert any("+skill_correction_trends" in line for line in lines) and any("docs serve" in line for line in lines)


def test_every_plain_dbt_build_is_published_and_a_selection_keeps_the_as_of(
    readme_run: tuple[Path, list[Step]],
) -> None:
    """After each build of the block the serving file holds its marts (as-of, and the build it names is the one
    recorded beside the warehouse); a build of a selection publishes too, at the warehouse's as-of."""
    _, steps = readme_run
    at_instant = step(steps, 'as_of: "2026-11-15T12:00:00Z"')
    assert at_instant.served == Served(
        dt.datetime(2026, 11, 15, 12), at_instant.served.recorded, at_instant.served.recorded
    )
    assert at_instant.served.build_id and "published " in at_instant.output
    end_of_day = dt.datetime(2026, 11, 15, 23, 59, 59, 999999)
    by_env = step(steps, "FEEDBACK_AS_OF=2026-11-15")
    assert by_env.served is not None and by_env.served.as_of == end_of_day
    assert by_env.served.build_id == by_env.served.recorded != at_instant.served.build_id
    selection = step(steps, "--select +skill_correction_trends")
    assert selection.served is not None and selection.served.as_of == end_of_day  # build_info was not rebuilt
    assert selection.served.build_id == selection.served.recorded != by_env.served.build_id
    assert "published " in selection.output
    unit = step(steps, "test_type:unit")
    assert unit.served == step(steps, "--select marts.analyzer").served  # a `dbt test` publishes nothing


def test_export_reads_what_the_last_plain_build_published(readme_run: tuple[Path, list[Step]], tmp_path: Path) -> None:
    db, _ = readme_run
    out = tmp_path / "export"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "export",
            "build_info",
            "skill_correction_trends",
            "--format",
            "csv",
            "--db",
            str(db),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "newer build" not in done.stderr
    with (out / "build_info.csv").open(newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["as_of_at"].startswith("2026-11-15T23:59:59.999999")
    assert row["invocation_id"] != "" and row["invocation_id"] in {s.served.build_id for s in readme_run[1] if s.served}


def plain_dbt(db: Path, work: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["dbt", *args, "--profiles-dir", "."],
        cwd=ROOT,
        env={**environment(db, work), **extra},
        capture_output=True,
        text=True,
        timeout=DBT_TIMEOUT_S,
    )


def test_a_failed_plain_dbt_build_publishes_nothing(demo: DemoWarehouse, tmp_path: Path) -> None:
    """Seeds and staging build, one mart fails: the serving file and the build record stay as they were."""
    db = copy_warehouse(demo.db, tmp_path / "failing.duckdb")
    serving = serving_path(db)
    before = (serving.stat().st_ino, serving.stat().st_mtime_ns, serving.read_bytes())
    recorded = record_path(db).read_bytes() if record_path(db).exists() else None
    done = plain_dbt(
        db,
        tmp_path,
        "build",
        "--select",
        "+skill_correction_trends",
        "--exclude-resource-type",
        "unit_test",
        "--vars",
        "{min_invocations: 'not a number'}",
    )
    assert done.returncode == 1, done.stdout[-3000:]
    assert re.search(r"OK (created|loaded)", done.stdout), "nothing built before the failure"
    assert "no publish: the run failed" in done.stdout
    assert (serving.stat().st_ino, serving.stat().st_mtime_ns, serving.read_bytes()) == before
    assert (record_path(db).read_bytes() if record_path(db).exists() else None) == recorded


def test_a_build_killed_before_its_publish_is_named_by_every_reader(
    demo: DemoWarehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dbt is killed after its marts are committed and the new serving file is written, before the rename: the
    report (its page and its command line), export and the dashboard's pages say a newer build exists and
    the command that publishes it; `feedback-analytics publish` publishes it and the note goes."""
    db = copy_warehouse(demo.db, tmp_path / "killed.duckdb")
    env = environment(db, tmp_path)
    build = subprocess.Popen(
        ["dbt", "build", "--profiles-dir", ".", "--select", "build_info"],
        cwd=ROOT,
        env={**env, "FEEDBACK_PAUSE_AT": "publish-before-rename"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _, status = os.waitpid(build.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), "dbt ended before its publish"
    finally:
        if build.poll() is None:
            os.kill(build.pid, signal.SIGKILL)
        build.wait()
    record = recorded_build(db)
    assert record is not None and served(db).build_id != record

    report = subprocess.run(
        [sys.executable, "-m", "cli", "report", "--db", str(db), "--out", str(tmp_path / "report.html")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert report.returncode == 0, report.stderr
    assert "newer build of the warehouse exists" in report.stderr
    assert f"feedback-analytics publish --db {db}" in report.stderr
    assert "A newer build of the warehouse exists" in (tmp_path / "report.html").read_text(encoding="utf-8")
    export = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "export",
            "build_info",
            "--format",
            "csv",
            "--db",
            str(db),
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert export.returncode == 0 and f"feedback-analytics publish --db {db}" in export.stderr, export.stderr

    from dashboards import data  # noqa: PLC0415 - imports Streamlit

    monkeypatch.setenv("FEEDBACK_DB", str(db))
    data.clear_caches()
    try:
        app = run_page(OVERVIEW)
        warnings = [w.value for w in app.warning]
        assert any(
            "A newer build of the warehouse exists" in w and "feedback-analytics publish" in w for w in warnings
        ), warnings

        published = subprocess.run(
            [sys.executable, "-m", "cli", "publish", "--db", str(db)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert published.returncode == 0 and published.stdout.startswith("published "), published.stderr
        assert served(db).build_id == record
        data.clear_caches()
        app = run_page(OVERVIEW)
        assert not [w.value for w in app.warning if "newer build" in w.value]
    finally:
        data.clear_caches()
