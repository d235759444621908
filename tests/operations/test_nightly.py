"""`nightly`: ingest every configured source, purge, build; one lock; a summary line per step; a log file.

Real processes throughout: `python -m cli nightly` in subprocesses on a small
demo data set (so the real `dbt build` runs and passes), the Streamlit dashboard
started with `python -m cli dashboard`. Four runs go through the build: two
overlapping runs (the second skipped at once, exit 75), a run with a PostgreSQL source
down, a run while the dashboard is open, and a run that starts while a
dashboard query holds the warehouse; a killed run shows the lock dies with it.
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from demo import write_analyzer_jsonl
from tests.support.dbt import REPO
from tests.support.environment import free_port
from tests.support.ingest import ingest_ok, query
from tests.support.operations import (
    AS_OF,
    DATA_TABLES,
    POLICIES,
    cli_command,
    http_get,
    ok,
    ops_env,
    purge_log,
    run_ops,
    wait_until,
)
from warehouse.location import serving_path

pytestmark = pytest.mark.slow

STEPS = ("ingest", "purge", "build", "alerts")
# "<step> <summary with counts> (<seconds> s)" at the end of a line
STEP_LINE = re.compile(
    r"\b(?P<step>ingest|purge|build|alerts)\b\s+(?P<summary>.*\d.*)\((?P<seconds>\d+(?:\.\d+)?) ?s\)\s*$"
)
SLOW_INGEST_EVENTS = 500_000


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Module folder: the demo data set and dbt's target/ and logs/ (shared: the runs are sequential)."""
    folder = tmp_path_factory.mktemp("nightly")
    command = cli_command("demo-data", folder / "demo", "--scale", "0.02", "--as-of", AS_OF, "-q")
    ok(subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False))
    return folder


def demo_entries(work: Path) -> str:
    """The demo's sources.toml with absolute paths, to be extended by each test's config."""
    demo = work / "demo"
    config = tomllib.loads((demo / "sources.toml").read_text(encoding="utf-8"))
    lines = []
    for section, entries in config.items():
        for entry in entries:
            lines.append(f'[[{section}]]\npath = "{(demo / entry["path"]).resolve()}"\n')
    return "\n".join(lines)


def write_config(path: Path, *extra: str, base: str) -> Path:
    path.write_text("\n".join([base, *extra]), encoding="utf-8")
    return path


def lock_file(db: Path) -> Path:
    return db.resolve().with_name(db.name + ".nightly.lock")


def log_file(db: Path) -> Path:
    return db.resolve().with_name(db.name + ".nightly.log")


def lock_holder(db: Path) -> str:
    path = lock_file(db)
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def lock_is_free(db: Path) -> bool:
    with lock_file(db).open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


def start_nightly(config: Path, db: Path, env: dict[str, str], out: Path) -> subprocess.Popen[bytes]:
    """A nightly run in the background; stdout and stderr to files (dbt's output is long)."""
    with out.with_suffix(".stdout").open("wb") as stdout, out.with_suffix(".stderr").open("wb") as stderr:
        return subprocess.Popen(
            cli_command("nightly", "--config", config, "--as-of", AS_OF, "--db", db),
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            env=env,
        )


def outputs(out: Path) -> tuple[str, str]:
    return tuple(out.with_suffix(s).read_text(encoding="utf-8", errors="replace") for s in (".stdout", ".stderr"))


def step_lines(text: str) -> dict[str, re.Match[str]]:
    found = {}
    for line in text.splitlines():
        if (m := STEP_LINE.search(line)) and m["step"] not in found:
            found[m["step"]] = m
    return found


def landed_total(db: Path) -> int:
    return query(db, "select coalesce(sum(rows_loaded), 0) from raw.load_manifest")[0][0]


def nightly_runs(db: Path) -> list[tuple[object, ...]]:
    """raw.nightly_runs (operations/nightly_runs.py): status, failed steps, finished, as of."""
    return query(
        db,
        "select status, failed_steps, finished_at >= started_at, cast(as_of as date) from raw.nightly_runs "
        "order by started_at",
    )


def nightly_check(db: Path) -> list[tuple[object, ...]]:
    """What the run's own build made of the run (int_alerts__operational_checks, rule nightly_failed)."""
    return query(
        db,
        "select subject, value, evaluation from intermediate.int_alerts__operational_checks "
        "where rule_id = 'nightly_failed' and evaluated_on = ?",
        [AS_OF],
    )


# -- two runs at once -------------------------------------------------------------------------------------------
def test_overlapping_nightly_runs(work: Path, tmp_path: Path) -> None:
    big = tmp_path / "big-analyzer" / "feedback.jsonl"
    write_analyzer_jsonl(big, SLOW_INGEST_EVENTS, seed=7, as_of=AS_OF, days=200)
    config = write_config(tmp_path / "sources.toml", f'[[analyzer]]\npath = "{big}"\n', base=demo_entries(work))
    db, env = tmp_path / "warehouse.duckdb", ops_env(work)

    first = start_nightly(config, db, env, tmp_path / "first")
    try:
        wait_until(lambda: lock_holder(db).startswith(f"pid {first.pid} "), timeout=60, what="the first run's lock")
        began = time.monotonic()
        second = run_ops("nightly", "--config", config, "--as-of", AS_OF, "--db", db, env=env, timeout=120)
        refused_in = time.monotonic() - began
        assert first.poll() is None, "the first run finished before the second was refused: no overlap tested"
        first_code = first.wait(timeout=600)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    total = time.monotonic() - began
    stdout, stderr = outputs(tmp_path / "first")

    # the second run: skipped at once (EX_TEMPFAIL, not a failure), with a message naming the lock and its holder
    assert second.returncode == 75, f"exit {second.returncode}\n{second.stdout}\n{second.stderr}"
    assert refused_in < 10 and refused_in < total / 2, f"refused after {refused_in:.1f} s (first took {total:.1f} s)"
    assert "Traceback" not in second.stderr + second.stdout
    message = second.stderr + second.stdout
    assert "another nightly run is in progress" in message, message
    assert str(lock_file(db)) in message, message
    assert f"pid {first.pid}" in message, message

    # the first run: completed, every step with a summary line on stdout and in the log file
    assert first_code == 0, f"first run exited {first_code}\nstdout:\n{stdout[-3000:]}\nstderr:\n{stderr[-3000:]}"
    log = log_file(db).read_text(encoding="utf-8")
    summaries = step_lines(log)
    assert sorted(summaries) == sorted(STEPS), f"step summary lines missing from the log file: {sorted(summaries)}"
    assert f"{landed_total(db):,}" in summaries["ingest"]["summary"], summaries["ingest"].group(0)
    run_log = [row for row in purge_log(db) if not row["is_dry_run"]]
    assert len({row["purge_id"] for row in run_log}) == 1, "more than one purge ran"
    assert sorted(row["policy"] for row in run_log) == sorted(POLICIES)
    archived = sum(row["rows_archived"] for row in run_log)
    assert archived > 100_000 and f"{archived:,}" in summaries["purge"]["summary"], summaries["purge"].group(0)
    assert "PASS=" in summaries["build"]["summary"] and "ERROR=0" in summaries["build"]["summary"]
    assert re.search(r"; published \d+ marts \([\d,]+ rows\)", summaries["build"]["summary"]), summaries["build"][0]
    assert serving_path(db).exists(), "a successful nightly publishes the serving file"
    # every input loaded once: the refused run ingested nothing
    (loads, uris) = query(db, "select count(*), count(distinct uri) from raw.load_manifest")[0]
    assert loads == uris
    assert lock_is_free(db), "the lock is still held after the run"
    # the summary lines go to stdout as well as to the log file (docs/operations.md)
    on_stdout = step_lines(stdout)
    assert sorted(on_stdout) == sorted(STEPS), (
        f"step summary lines missing from stdout: {sorted(on_stdout)}; on stderr: {sorted(step_lines(stderr))}"
    )
    # a quiet nightly: stdout is the four step lines and the final status line, nothing of dbt's output;
    # dbt's full output is in the log file, without colour codes
    lines = stdout.strip().splitlines()
    assert len(lines) == 5 and re.search(r" INFO nightly ok in \d+\.\d s$", lines[-1]), stdout
    assert stderr.strip() == "", stderr
    assert "dbt output:" in log and "Finished running" in log and "\x1b[" not in log
    # raw.nightly_runs: the run that did the work finished `ok`; the skipped one recorded nothing. Its build saw
    # it running with no failed step: nightly_failed clear
    assert nightly_runs(db) == [("ok", "", True, AS_OF)]
    assert nightly_check(db) == [("nightly", 0.0, "clear")]


def test_a_killed_run_leaves_no_stale_lock(work: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path / "sources.toml", base=demo_entries(work))
    db, env = tmp_path / "warehouse.duckdb", ops_env(work)
    victim = start_nightly(config, db, env, tmp_path / "victim")
    wait_until(lambda: lock_holder(db).startswith(f"pid {victim.pid} "), timeout=60, what="the run's lock")
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert lock_is_free(db)
    # a new run takes the lock at once (it is stopped there: its build is tested elsewhere)
    successor = start_nightly(config, db, env, tmp_path / "successor")
    try:
        wait_until(
            lambda: lock_holder(db).startswith(f"pid {successor.pid} ") or successor.poll() is not None,
            timeout=60,
            what="the new run's lock",
        )
        assert successor.poll() is None, outputs(tmp_path / "successor")
    finally:
        successor.kill()
        successor.wait()


# -- a failing step -----------------------------------------------------------------------------------------------
def test_a_failing_source_fails_the_run_after_the_rest_is_done(work: Path, tmp_path: Path) -> None:
    port = free_port()  # nobody listens there: the PostgreSQL source is down
    secret = "s3cret-pw-do-not-print"
    env = ops_env(work, FA_TEST_DOWN_PG_DSN=f"postgresql://postgres:{secret}@127.0.0.1:{port}/feedback")
    config = write_config(
        tmp_path / "sources.toml",
        '[[session_feedback]]\npostgres_dsn_env = "FA_TEST_DOWN_PG_DSN"\n',
        base=demo_entries(work),
    )
    db = tmp_path / "warehouse.duckdb"
    result = run_ops("nightly", "--config", config, "--as-of", AS_OF, "--db", db, env=env, timeout=600)
    output = result.stdout + result.stderr
    log = log_file(db).read_text(encoding="utf-8")

    assert result.returncode == 1, f"exit {result.returncode}\n{output[-3000:]}"
    assert "Traceback" not in output
    assert re.search(r"failed.*\bingest\b", result.stderr), result.stderr[-2000:]
    # the other sources, the purge and the build still ran
    for table in DATA_TABLES:
        if table == "reaction_index":  # the demo has no index of the platform (PostgreSQL only)
            continue
        assert query(db, f"select count(*) from raw.{table}")[0][0] > 0, f"raw.{table} was not loaded"
    run_log = [row for row in purge_log(db) if not row["is_dry_run"]]
    assert sorted(row["policy"] for row in run_log) == sorted(POLICIES), "the purge did not run"
    found = step_lines(log)
    assert sorted(found) == sorted(STEPS), sorted(found)
    assert "PASS=" in found["build"]["summary"] and "ERROR=0" in found["build"]["summary"], "the build did not run"
    assert query(db, "select count(*) from marts.feedback_signals")[0][0] > 0
    assert secret not in output + log, "the DSN's password was printed"
    # raw.nightly_runs: `failed`, naming the step; the same night's build already saw the failed ingest
    assert nightly_runs(db) == [("failed", "ingest", True, AS_OF)]
    assert nightly_check(db) == [("nightly", 1.0, "breach")]


# -- the dashboard stays open -------------------------------------------------------------------------------------
@pytest.fixture
def dashboard(work: Path, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """The demo warehouse, ingested, with the Streamlit dashboard serving it; (db, base URL)."""
    db = tmp_path / "warehouse.duckdb"
    ingest_ok("--config", write_config(tmp_path / "demo.toml", base=demo_entries(work)), "--db", db, "-q")
    port = free_port()
    log = (tmp_path / "dashboard.log").open("wb")
    server = subprocess.Popen(
        cli_command("dashboard", "--port", port, "--db", db),
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=ops_env(work),
        start_new_session=True,  # streamlit runs as a child: stop the whole group this test started
    )
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert server.poll() is None, (tmp_path / "dashboard.log").read_text(errors="replace")
        try:
            return http_get(f"{url}/_stcore/health", timeout=2) == (200, "ok")
        except OSError:
            return False

    try:
        wait_until(healthy, timeout=90, interval=0.25, what="the dashboard's health check")
        yield db, url
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        log.close()


def test_nightly_while_the_dashboard_is_open(work: Path, tmp_path: Path, dashboard: tuple[Path, str]) -> None:
    db, url = dashboard
    assert http_get(url + "/")[0] == 200
    fresh = tmp_path / "new-analyzer" / "feedback.jsonl"
    write_analyzer_jsonl(fresh, 20_000, seed=11, as_of=AS_OF, days=30)
    config = write_config(tmp_path / "sources.toml", f'[[analyzer]]\npath = "{fresh}"\n', base=demo_entries(work))
    before = landed_total(db)

    run = start_nightly(config, db, ops_env(work), tmp_path / "nightly")
    answers = []
    try:
        while run.poll() is None:
            answers.append(("page", http_get(url + "/")[0]))
            answers.append(("health", http_get(url + "/_stcore/health")))
            time.sleep(0.5)
        code = run.wait(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    stdout, stderr = outputs(tmp_path / "nightly")

    assert code == 0, f"nightly exited {code} with the dashboard open\n{stdout[-3000:]}\n{stderr[-3000:]}"
    assert len(answers) >= 6, "the dashboard was asked too few times during the run"
    assert all(answer == ("page", 200) or answer == ("health", (200, "ok")) for answer in answers), answers
    assert landed_total(db) == before + 20_000, "the nightly's new events did not land"
    assert http_get(url + "/")[0] == 200


def test_nightly_waits_out_a_reader_in_flight(work: Path, tmp_path: Path) -> None:
    """The dashboard reads the serving file, but an analyst may read the warehouse itself: a read-only query
    running when the nightly starts (2 s, a big warehouse) must not fail it; the writer waits it out."""
    db = tmp_path / "warehouse.duckdb"
    ingest_ok("--config", write_config(tmp_path / "demo.toml", base=demo_entries(work)), "--db", db, "-q")
    fresh = tmp_path / "new-analyzer" / "feedback.jsonl"
    write_analyzer_jsonl(fresh, 1_000, seed=13, as_of=AS_OF, days=30)
    config = write_config(tmp_path / "sources.toml", f'[[analyzer]]\npath = "{fresh}"\n', base=demo_entries(work))
    # the ground floor's read-only connection (what read-only commands use), held for 2 s as a slow query would
    reader_code = (
        "import time\n"
        "from warehouse.connection import connect\n"
        "from warehouse.location import Warehouse\n"
        "con = connect(Warehouse.at().path, read_only=True)\n"
        "assert len(con.execute('select count(*) from raw.analyzer_events').fetchall()) == 1\n"
        "print('open', flush=True)\n"
        "time.sleep(2.0)\n"
        "con.close()\n"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", reader_code],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
        env={**os.environ, "FEEDBACK_DB": str(db)},
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "open"
        result = run_ops("nightly", "--config", config, "--as-of", AS_OF, "--db", db, env=ops_env(work), timeout=600)
    finally:
        reader.wait(timeout=30)
    failures = [line for line in result.stderr.splitlines() if re.search(r" ERROR (ingest|purge|build) |^error:", line)]
    assert result.returncode == 0, "nightly failed while a read-only query ran:\n" + "\n".join(failures)
    assert query(db, "select count(*) from raw.load_manifest where uri = ?", [str(fresh)])[0][0] == 1


def test_verbose_shows_dbt_live(work: Path, tmp_path: Path) -> None:
    """--verbose: dbt's output on stdout as it runs, besides the summary lines."""
    db, config = tmp_path / "warehouse.duckdb", write_config(tmp_path / "demo.toml", base=demo_entries(work))
    ingest_ok("--config", config, "--db", db, "-q")
    result = run_ops(
        "nightly", "--config", config, "--as-of", AS_OF, "--db", db, "--verbose", env=ops_env(work), timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Finished running" in result.stdout and " of " in result.stdout and "\x1b[" not in result.stdout
    assert sorted(step_lines(result.stdout)) == sorted(STEPS)
