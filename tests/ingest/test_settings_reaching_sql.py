"""Settings from the environment that reach SQL or a wait are checked first: a bad value is one line naming
the variable, never a traceback, and never runs as SQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.ingest import analyzer_event, cli_env, count, query, run_cli, write_jsonl

INJECTION = "1GB'; create table main.injected as select 42 as answer; set memory_limit = '1GB"


@pytest.mark.parametrize("value", [INJECTION, "lots", "1000", "2KB", "0%", "150%"])
def test_a_bad_memory_limit_is_one_line_and_runs_no_sql(tmp_path: Path, value: str) -> None:
    events = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", "analyzer", events, "--db", db).returncode == 0

    result = run_cli("ingest", "analyzer", events, "--db", db, env=cli_env(FEEDBACK_MEMORY_LIMIT=value))

    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: FEEDBACK_MEMORY_LIMIT=") and "is not a memory limit" in line, line
    assert query(db, "select count(*) from information_schema.tables where table_name = 'injected'") == [(0,)]


@pytest.mark.parametrize("value", ["2GB", "1.5 GiB", "512MiB", "50%"])
def test_a_good_memory_limit_is_used(tmp_path: Path, value: str) -> None:
    events = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    db = tmp_path / "w.duckdb"
    result = run_cli("ingest", "analyzer", events, "--db", db, env=cli_env(FEEDBACK_MEMORY_LIMIT=value))
    assert result.returncode == 0, result.stderr
    assert count(db, "analyzer_events") == 1


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_lock_wait_is_one_line(tmp_path: Path, value: str) -> None:
    events = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1)])
    result = run_cli(
        "ingest", "analyzer", events, "--db", tmp_path / "w.duckdb", env=cli_env(FEEDBACK_LOCK_WAIT_SECONDS=value)
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: FEEDBACK_LOCK_WAIT_SECONDS={value!r} is not a number of seconds"), line
