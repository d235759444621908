"""The CLI's errors (one line, no traceback, exit 1; usage errors exit 2) and its progress output."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ingest.config import read_config
from tests.support.ingest import (
    analyzer_event,
    cli_env,
    count,
    ingest_ok,
    places_containing,
    quarantine,
    run_cli,
    run_on_a_terminal,
    session_record,
    write_jsonl,
)
from tests.support.postgres_tables import (
    create_pg_session_feedback,
    dsn_with_password,
)

# the first bytes of a PNG image (signature, IHDR chunk) and some binary after it
PNG_BYTES = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa"
    b"\x00\x00\x00\x19tEXtSoftware\x00Adobe ImageReady\x00\n\xffq\xc9e<\x00\x00\x00\x00IEND\xaeB`\x82"
)


def assert_one_line_error(result: subprocess.CompletedProcess[str], *names: str, exit_code: int = 1) -> str:
    """Exit code, `error: ...` as the only stderr line, naming each of `names`, no traceback."""
    assert result.returncode == exit_code, f"exit {result.returncode}: {result.stdout!r} {result.stderr!r}"
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{result.stderr}"
    (line,) = lines
    assert line.startswith("error: "), line
    for name in names:
        assert str(name) in line, f"{name!r} not named in {line!r}"
    return line


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the socket is: nobody listens


# -- paths ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["analyzer", "session-feedback", "reactions", "workspace"])
def test_missing_path(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "nowhere" / "feedback.jsonl"
    result = run_cli("ingest", command, missing, "--db", tmp_path / "w.duckdb")
    assert_one_line_error(result, missing, "does not exist")


def test_directory_where_a_file_is_expected(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    result = run_cli("ingest", "session-feedback", folder, "--db", tmp_path / "w.duckdb")
    assert_one_line_error(result, folder, "not a file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file anyway")
def test_unreadable_file(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    source.chmod(0)
    try:
        result = run_cli("ingest", "analyzer", source, "--db", tmp_path / "w.duckdb")
    finally:
        source.chmod(0o644)
    assert_one_line_error(result, source, "readable")


def test_empty_analyzer_folder(tmp_path: Path) -> None:
    store = tmp_path / "feedback-store"
    store.mkdir()
    assert_one_line_error(run_cli("ingest", "analyzer", store, "--db", tmp_path / "w.duckdb"), store)


def test_folder_without_reaction_blobs(tmp_path: Path) -> None:
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    (blobs / "notes.txt").write_text("nothing here")
    assert_one_line_error(run_cli("ingest", "reactions", blobs, "--db", tmp_path / "w.duckdb"), blobs, "json")


def test_workspace_file_of_unknown_table(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "users.jsonl", [{"id": "u"}])
    assert_one_line_error(run_cli("ingest", "workspace", source, "--db", tmp_path / "w.duckdb"), "users.jsonl")


def test_warehouse_folder_missing(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    db = tmp_path / "no-such-folder" / "w.duckdb"
    assert_one_line_error(run_cli("ingest", "analyzer", source, "--db", db), db.parent)


@pytest.mark.parametrize("name", ["raw.duckdb", "marts.duckdb", "Main.db"])
def test_warehouse_named_like_a_schema(tmp_path: Path, name: str) -> None:
    """DuckDB names the database after its file: raw.duckdb would make every raw.<table> ambiguous."""
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    db = tmp_path / name
    message = assert_one_line_error(run_cli("ingest", "analyzer", source, "--db", db), name, "feedback.duckdb")
    assert "clashes" in message
    assert not db.exists()
    assert_one_line_error(run_cli("build", "--db", db), name)


def test_session_feedback_file_of_unknown_format(tmp_path: Path) -> None:
    """A PNG is neither SQLite nor JSON lines: either a clear one-line error, or its lines are quarantined."""
    image = tmp_path / "screenshot.png"
    image.write_bytes(PNG_BYTES)
    db = tmp_path / "w.duckdb"

    result = run_cli("ingest", "session-feedback", image, "--db", db)

    assert_one_line_error(result, image, "none of its", "matched the session_feedback contract")
    bad = quarantine(db)
    assert bad, "nothing landed and nothing was quarantined"
    assert all(("json" in q["reason"].lower() or "utf-8" in q["reason"].lower()) for q in bad)
    assert count(db, "session_feedback") == 0


# -- the wrong file, an empty file ---------------------------------------------------------------------------
WRONG_FILES = {
    "export.csv": b"event_id,timestamp,skill_id\ne1,2026-05-01,cpp-expert\ne2,2026-05-02,deslop\n",
    "screenshot.png": PNG_BYTES,
    "eval_runs.jsonl": b'{"id": "r1", "run_name": "nightly", "agent_id": "a"}\n{"id": "r2", "run_name": "x"}\n',
}


@pytest.mark.parametrize("name", sorted(WRONG_FILES))
def test_a_file_of_which_nothing_lands_is_an_error(tmp_path: Path, name: str) -> None:
    """All rows quarantined (nothing read is lost), exit 1, one line: the file, N rows, the first reason."""
    source = tmp_path / name
    source.write_bytes(WRONG_FILES[name])
    db = tmp_path / "w.duckdb"
    result = run_cli("ingest", "analyzer", source, "--db", db)
    line = assert_one_line_error(result, source, "matched the analyzer contract of raw.analyzer_events", "(first: ")
    rows = len(quarantine(db))
    assert rows > 0 and f"none of its {rows} row(s)" in line
    assert count(db, "analyzer_events") == 0
    assert "`feedback-analytics quarantine --db " in line


def test_a_file_with_some_good_rows_is_no_error(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1), "not json"])
    assert run_cli("ingest", "analyzer", source, "--db", tmp_path / "w.duckdb").returncode == 0


def test_an_empty_file_says_it_is_empty(tmp_path: Path) -> None:
    source = tmp_path / "feedback.jsonl"
    source.write_bytes(b"")
    result = ingest_ok("analyzer", source, "--db", tmp_path / "w.duckdb")
    assert f"{source}: empty, nothing to load" in result.stdout


def test_a_path_and_postgres_together_are_a_usage_error(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "export.jsonl", [session_record(1)])
    result = run_cli("ingest", "session-feedback", source, "--postgres", "postgresql://x@127.0.0.1/db")
    assert result.returncode == 2 and "not both" in result.stderr
    assert "Traceback" not in result.stderr


def test_config_on_a_folder_says_it_is_a_folder(tmp_path: Path) -> None:
    result = run_cli("ingest", "--config", tmp_path, "--db", tmp_path / "w.duckdb")
    assert_one_line_error(result, tmp_path, "is a folder")


@pytest.mark.parametrize("command", [["ingest", "analyzer", "FILE"], ["purge", "--dry-run"], ["build"]])
def test_db_that_is_no_duckdb_warehouse(tmp_path: Path, command: list[str]) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    not_a_warehouse = tmp_path / "export.csv"
    not_a_warehouse.write_bytes(WRONG_FILES["export.csv"])
    args = [source if part == "FILE" else part for part in command]
    result = run_cli(*args, "--db", not_a_warehouse)
    assert_one_line_error(result, not_a_warehouse, "is not a DuckDB warehouse")
    assert not_a_warehouse.read_bytes() == WRONG_FILES["export.csv"]


def test_the_quarantine_command_lists_what_was_quarantined(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    first = write_jsonl(tmp_path / "a" / "feedback.jsonl", [analyzer_event(1), "oops", analyzer_event(2)])
    second = write_jsonl(tmp_path / "b" / "feedback.jsonl", [analyzer_event(3), analyzer_event(4, outcome="meh")])
    loaded = ingest_ok("analyzer", first, "--db", db)
    ingest_ok("analyzer", second, "--db", db)
    hint = loaded.stderr.strip()
    command = hint[hint.index("`") + 1 : hint.rindex("`")].split()
    assert command[:2] == ["feedback-analytics", "quarantine"] and "--load" in command

    listed = run_cli(*command[1:])
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.strip().splitlines()
    assert str(first) in line and "line 2: invalid JSON" in line

    everything = run_cli("quarantine", "--db", db)
    assert everything.returncode == 0 and len(everything.stdout.strip().splitlines()) == 2
    assert "outcome" in everything.stdout
    by_source = run_cli("quarantine", "--db", db, "--source", "/b/")
    assert [str(second) in line for line in by_source.stdout.strip().splitlines()] == [True]


# -- PostgreSQL -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["session-feedback", "reactions", "workspace"])
def test_postgres_unreachable(tmp_path: Path, command: str) -> None:
    dsn = f"postgresql://postgres:s3cret-pw@127.0.0.1:{closed_port()}/feedback"
    result = run_cli("ingest", command, "--postgres", dsn, "--db", tmp_path / "w.duckdb")
    assert_one_line_error(result, "PostgreSQL", "127.0.0.1")
    assert "s3cret-pw" not in result.stderr + result.stdout, "the password is never shown"


@pytest.mark.parametrize(
    ("command", "table"),
    [("session-feedback", "session_feedback"), ("reactions", "conv_messages"), ("workspace", "feedback")],
)
def test_postgres_table_missing(tmp_path: Path, pg_database: str, command: str, table: str) -> None:
    dsn = dsn_with_password(pg_database, "s3cret-pw")
    db = tmp_path / "w.duckdb"
    result = run_cli("ingest", command, "--postgres", dsn, "--db", db)
    assert_one_line_error(result, table)
    assert "s3cret-pw" not in result.stderr + result.stdout
    assert not db.exists() or count(db, "load_manifest") == 0


def test_postgres_password_is_not_stored(tmp_path: Path, pg_database: str) -> None:
    create_pg_session_feedback(pg_database, [session_record(1), session_record(2, schema_version=3)])
    db = tmp_path / "w.duckdb"
    result = ingest_ok(
        "session-feedback", "--postgres", dsn_with_password(pg_database, "s3cret-pw"), "--db", db, fresh_process=True
    )
    assert "s3cret-pw" not in result.stdout + result.stderr
    assert places_containing(db, "s3cret-pw") == []
    assert count(db, "session_feedback") == 1


# -- config files -------------------------------------------------------------------------------------------
def test_config_file_missing(tmp_path: Path) -> None:
    config = tmp_path / "sources.toml"
    assert_one_line_error(run_cli("ingest", "--config", config, "--db", tmp_path / "w.duckdb"), config)


def test_config_file_invalid_toml(tmp_path: Path) -> None:
    config = tmp_path / "sources.toml"
    config.write_text("[[analyzer]\npath = 'x'\n")
    assert_one_line_error(run_cli("ingest", "--config", config, "--db", tmp_path / "w.duckdb"), config, "TOML")


def test_config_unknown_section(tmp_path: Path) -> None:
    config = tmp_path / "sources.toml"
    config.write_text('[[analyser]]\npath = "feedback.jsonl"\n')
    result = run_cli("ingest", "--config", config, "--db", tmp_path / "w.duckdb")
    assert_one_line_error(result, config, "analyser")


def test_config_unknown_key(tmp_path: Path) -> None:
    config = tmp_path / "sources.toml"
    config.write_text('[[analyzer]]\npaths = "feedback.jsonl"\n')
    assert_one_line_error(run_cli("ingest", "--config", config, "--db", tmp_path / "w.duckdb"), "paths")


def test_config_env_var_not_set(tmp_path: Path) -> None:
    config = tmp_path / "sources.toml"
    config.write_text('[[session_feedback]]\npostgres_dsn_env = "NO_SUCH_DSN_VARIABLE_FOR_TESTS"\n')
    env = {k: v for k, v in cli_env().items() if k != "NO_SUCH_DSN_VARIABLE_FOR_TESTS"}
    result = run_cli("ingest", "--config", config, "--db", tmp_path / "w.duckdb", env=env)
    assert_one_line_error(result, "NO_SUCH_DSN_VARIABLE_FOR_TESTS")


def test_config_path_missing(tmp_path: Path) -> None:
    config = tmp_path / "sources.toml"
    config.write_text('[[analyzer]]\npath = "nowhere/feedback.jsonl"\n')
    assert_one_line_error(run_cli("ingest", "--config", config, "--db", tmp_path / "w.duckdb"), "nowhere")


# -- usage errors ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["ingest", "session-feedback"],
        ["ingest", "reactions"],
        ["ingest", "workspace"],
        ["ingest", "analyzer"],
        ["ingest"],
        ["ingest", "analyzer", "--bogus-option", "x.jsonl"],
        ["ingest", "--config", "sources.toml", "analyzer", "x.jsonl"],
        ["ingest", "no-such-source", "x"],
    ],
    ids=lambda a: " ".join(a),
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    result = run_cli(*args, "--db", tmp_path / "w.duckdb")
    assert result.returncode == 2, f"{result.stdout!r} {result.stderr!r}"
    assert "Traceback" not in result.stderr + result.stdout
    assert not (tmp_path / "w.duckdb").exists()


# -- where the warehouse is ------------------------------------------------------------------------------
def test_db_defaults_to_the_feedback_db_variable(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    db = tmp_path / "from-env.duckdb"
    result = run_cli("ingest", "analyzer", source, env=cli_env(FEEDBACK_DB=str(db)))
    assert result.returncode == 0, result.stderr
    assert count(db, "analyzer_events") == 1


def test_db_and_quiet_given_to_the_ingest_group(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    db = tmp_path / "w.duckdb"
    result = run_cli("ingest", "--db", db, "--quiet", "analyzer", source)
    assert result.returncode == 0, result.stderr
    assert count(db, "analyzer_events") == 1
    assert result.stdout.startswith("total: ") and len(result.stdout.strip().splitlines()) == 1


# -- progress ---------------------------------------------------------------------------------------------------
PROGRESS_MARKS = ("\r", "\x1b[", "rows/s", "━")


def test_no_progress_in_a_pipe(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(50)])
    result = ingest_ok("analyzer", source, "--db", tmp_path / "w.duckdb", fresh_process=True)
    assert result.stderr == ""
    assert all(mark not in result.stdout for mark in ("\r", "\x1b["))


def test_no_progress_in_a_pipe_with_quarantined_rows(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1), "oops"])
    result = ingest_ok("analyzer", source, "--db", tmp_path / "w.duckdb", fresh_process=True)
    (line,) = result.stderr.strip().splitlines()
    assert "1 row(s) quarantined" in line and "`feedback-analytics quarantine --db " in line
    assert all(mark not in result.stderr for mark in PROGRESS_MARKS)


def test_quiet_prints_only_the_totals(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(5)])
    result = ingest_ok("analyzer", source, "--quiet", "--db", tmp_path / "w.duckdb", fresh_process=True)
    assert result.stderr == ""
    (line,) = result.stdout.strip().splitlines()
    assert line.startswith("total: read 5, landed 5")


def _run_with_stderr_on_a_terminal(*args: object) -> tuple[int, str]:
    return run_on_a_terminal(args, timeout=30, stdout_too=False)


def test_quiet_shows_no_progress_even_on_a_terminal(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(50)])
    exit_code, stderr = _run_with_stderr_on_a_terminal(
        "ingest", "analyzer", source, "--quiet", "--db", tmp_path / "w.duckdb"
    )
    assert exit_code == 0
    assert stderr == ""


def test_progress_is_shown_on_a_terminal(tmp_path: Path) -> None:
    """The counterpart of the two tests above: on a terminal, without --quiet, progress is drawn."""
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(50)])
    exit_code, stderr = _run_with_stderr_on_a_terminal("ingest", "analyzer", source, "--db", tmp_path / "w.duckdb")
    assert exit_code == 0
    assert "\x1b[" in stderr


# -- lock waits ------------------------------------------------------------------------------------------------
def _hold_the_file(db: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process writing the warehouse for `seconds`; returns once it holds the lock."""
    code = (
        "import sys, time, duckdb\n"
        "con = duckdb.connect(sys.argv[1])\n"
        "print('holding', flush=True)\n"
        f"time.sleep({seconds})\n"
        "con.close()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


@pytest.mark.parametrize(("wait", "succeeds"), [("30", True), ("0.5", False)])
def test_a_lock_wait_is_said_once_with_its_bound(tmp_path: Path, wait: str, succeeds: bool) -> None:
    db = tmp_path / "w.duckdb"
    ingest_ok("analyzer", write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)]), "--db", db)
    holder = _hold_the_file(db, 3.0)
    try:
        result = run_cli("purge", "--dry-run", "--db", db, env=cli_env(FEEDBACK_LOCK_WAIT_SECONDS=wait))
    finally:
        holder.wait(timeout=30)
    waits = [line for line in result.stderr.splitlines() if line.startswith("waiting for warehouse")]
    assert waits == [
        f"waiting for warehouse {db}: another process (pid {holder.pid}) is using it; "
        f"waiting up to {float(wait):g} s (FEEDBACK_LOCK_WAIT_SECONDS)"
    ], result.stderr
    assert (result.returncode == 0) == succeeds, result.stderr
    if not succeeds:
        assert result.stderr.splitlines()[-1].startswith(f"error: cannot open warehouse {db}: ")


@pytest.mark.parametrize(
    "command", [["quarantine"], ["purge", "--dry-run"], ["forget", "--user-id", "x", "--dry-run"]], ids=" ".join
)
def test_read_only_commands_on_a_duckdb_file_without_raw_tables(tmp_path: Path, command: list[str]) -> None:
    """Dry runs and listings open the file read-only and cannot create the raw schema: one line, no traceback."""
    bare = tmp_path / "bare.duckdb"
    duckdb.connect(str(bare)).close()
    before = bare.read_bytes()
    assert_one_line_error(run_cli(*command, "--db", bare), bare, "has no raw.", "feedback-analytics ingest")
    assert bare.read_bytes() == before


def test_python_m_ingest_still_runs_the_command_line(tmp_path: Path) -> None:
    """The command line moved to cli/; `python -m ingest ...`, as scripts and cron lines wrote it, still runs it."""
    events = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(3)])
    db = tmp_path / "compat.duckdb"
    loaded = subprocess.run(
        [sys.executable, "-m", "ingest", "ingest", "analyzer", str(events), "--db", str(db), "-q"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
        check=False,
    )
    assert loaded.returncode == 0, loaded.stderr
    assert "landed 3" in loaded.stdout
    assert count(db, "analyzer_events") == 3
    refused = subprocess.run(
        [sys.executable, "-m", "ingest", "purge", "--db", str(tmp_path / "raw.duckdb")],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
        check=False,
    )
    assert refused.returncode == 1 and refused.stderr.startswith("error: warehouse file name 'raw.duckdb' clashes")


def test_config_with_an_alerts_section_still_loads_its_sources(tmp_path: Path) -> None:
    """The nightly's config file carries `[alerts]` (operations/alerts) beside the sources: ingest skips it."""
    (tmp_path / "feedback.jsonl").write_text("")
    config = tmp_path / "sources.toml"
    config.write_text('[alerts]\nwebhook_url_env = "ALERTS_WEBHOOK_URL"\n\n[[analyzer]]\npath = "feedback.jsonl"\n')
    assert [entry.section for entry in read_config(config)] == ["analyzer"]
