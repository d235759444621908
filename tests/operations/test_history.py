"""Daily rollups outlive the raw rows behind them: a rebuild after a purge keeps every past day's counts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

AS_OF = "2026-11-01"


def cli(*args: str | Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cli", *map(str, args)], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def totals(db: Path, sql: str) -> tuple:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()[0]


@pytest.mark.slow
def test_history_rollups_keep_purged_days(tmp_path: Path) -> None:
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    db, demo, target = tmp_path / "w.duckdb", tmp_path / "demo", tmp_path / "target"
    build = ("build", "--as-of", AS_OF, "--db", db, "--", "--target-path", target, "-q")
    cli("demo-data", demo, "--as-of", AS_OF, "--quiet", env=env)
    cli("ingest", "--config", demo / "sources.toml", "--db", db, "-q", env=env)
    cli(*build, env=env)
    sessions = "select min(feedback_date), sum(responses), count(*) from marts.session_feedback_daily_history"
    skills = "select min(invoked_date), sum(sample_size), count(*) from marts.skill_correction_daily_history"
    evals = "select min(run_date), sum(replays), count(*) from marts.eval_pass_rate_daily_history"
    before = {name: totals(db, sql) for name, sql in (("sessions", sessions), ("skills", skills), ("evals", evals))}
    assert before["sessions"][1] == totals(db, "select count(*) from raw.session_feedback")[0]

    cli("purge", "--as-of", AS_OF, "--db", db, "--archive-dir", tmp_path / "archive", env=env)
    purged_day = totals(db, "select min(recorded_date) from raw.session_feedback")[0]
    assert purged_day > before["sessions"][0], "the demo's oldest session feedback is past the 180-day policy"
    assert totals(db, "select min(cast(timestamp as date)) from raw.analyzer_events")[0] > before["skills"][0]

    cli(*build, env=env)  # the rebuild after the purge
    after = {name: totals(db, sql) for name, sql in (("sessions", sessions), ("skills", skills), ("evals", evals))}
    assert after == before, "every day keeps the counts it had before its raw rows were purged"
    # the plain daily mart, rebuilt from raw data only, has lost those days: the history is what keeps them
    assert totals(db, "select min(feedback_date) from marts.session_feedback_daily")[0] == purged_day
    # counts only, no identifiers
    with duckdb.connect(str(db), read_only=True) as con:
        columns = {
            row[0]
            for row in con.execute(
                "select column_name from information_schema.columns where table_schema = 'marts' "
                "and table_name like '%_daily_history'"
            ).fetchall()
        }
    assert not {c for c in columns if "user" in c or c.endswith("session_id") or c == "conversation_id"}
