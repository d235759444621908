"""Undated analyzer events: the analyzer writes `"timestamp": ""` when a transcript entry has none; such an
event lands (NULL timestamp), stays out of every windowed metric and is counted per skill in
skill_correction_rates.undated_events, so nothing read disappears from view.

One module-scoped warehouse: an analyzer store folder written as `scripts/analyze.py` writes it
(tests/support/analyzer_store.py cites the lines), by two runs: the first archives an old event, the second
re-appends it (and archives it again) and a resumed session repeats event ids inside `feedback.jsonl`. It is
ingested and built with the CLI, as of now (an undated event counts once it is loaded, so as of after its load).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.support.analyzer_store import Invocation, analyzer_run, iso
from tests.support.ingest import ingest_ok, parse_report, query
from tests.support.operations import ok, ops_env, run_ops

pytestmark = pytest.mark.slow

NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)


def ago(days: int) -> str:
    return iso(NOW - dt.timedelta(days=days))


# invocation uuid -> what the analyzer classified; "" is the timestamp of an entry that had none
E0 = Invocation("uuid-e0", "cpp-expert", ago(100), "acceptance", "s0")
E1 = Invocation("uuid-e1", "deslop", ago(120), "correction", "s1", "accuracy")
E2 = Invocation("uuid-e2", "deslop", ago(10), "correction", "s2", "accuracy")
E3 = Invocation("uuid-e3", "deslop", ago(5), "acceptance", "s2")
E4 = Invocation("uuid-e4", "deslop", ago(3), "partial", "s3", "coverage")
E5 = Invocation("uuid-e5", "cpp-expert", ago(2), "acceptance", "s3")
U1 = Invocation("uuid-u1", "deslop", "", "correction", "s2", "accuracy")
U2 = Invocation("uuid-u2", "deslop", "", "acceptance", "s1")
U3 = Invocation("uuid-u3", "ghost-skill", "", "partial", "s1", "coverage")


def resumed(invocations: list[Invocation]) -> list[Invocation]:
    """A resumed session: a new session file repeating the first one's entries (same uuids, same event ids)."""
    return [
        Invocation(i.uuid, i.skill_id, i.timestamp, i.outcome, i.session_id + "-resumed", i.dimension_hint)
        for i in invocations
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("undated") / "feedback-store"
    # run 1, 20 days ago: sessions s1 and s2 (and s2 resumed); archives E1 (older than 90 days)
    analyzer_run(folder, [E1, U2, U3, U1, *resumed([U1])], now=NOW - dt.timedelta(days=20))
    # run 2, now: every session again, so E1 (no longer in feedback.jsonl) is appended and archived again,
    # with E0 of a session file that appeared since
    analyzer_run(folder, [E0, E1, U2, U3, U1, E2, E3, *resumed([U1, E2, E3]), E4, E5], now=NOW)
    return folder


def test_the_store_is_what_the_analyzer_writes(store: Path) -> None:
    archives = sorted(path.name for path in (store / "archive").glob("*.jsonl"))
    assert archives == [
        f"feedback-{NOW - dt.timedelta(days=110):%Y%m%d}.jsonl",
        f"feedback-{NOW - dt.timedelta(days=90):%Y%m%d}.jsonl",
    ]
    active = (store / "feedback.jsonl").read_text().splitlines()
    assert len(active) == 10 and sum('"timestamp": ""' in line for line in active) == 4


@pytest.fixture(scope="module")
def warehouse(store: Path) -> Path:
    db = store.parent / "feedback.duckdb"
    report = parse_report(ingest_ok("analyzer", store, "--db", db).stdout)[2]
    # 13 lines: E1 in each archive file (E0 in the second), 10 in feedback.jsonl (U1, E2, E3 twice): 9 events
    assert report == {"read": 13, "loaded": 9, "quarantined": 0, "duplicates": 4}
    ok(run_ops("build", "--db", db, env=ops_env(store.parent)))
    return db


@pytest.fixture(scope="module")
def con(warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        yield connection


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_undated_events_land_with_a_null_timestamp(warehouse: Path) -> None:
    landed = dict(query(warehouse, 'select invocation_uuid, "timestamp" from raw.analyzer_events'))
    assert {uuid for uuid, ts in landed.items() if ts is None} == {"uuid-u1", "uuid-u2", "uuid-u3"}
    assert len(landed) == 9
    assert query(warehouse, "select count(*) from raw.quarantine") == [(0,)]


def test_correction_rates_count_undated_events_apart(con: duckdb.DuckDBPyConnection) -> None:
    by_skill = {row["skill_id"]: row for row in rows(con, "select * from marts.skill_correction_rates")}
    assert set(by_skill) == {"deslop", "cpp-expert", "ghost-skill"}
    deslop = by_skill["deslop"]  # E2, E3, E4 in the 90 days; E1 before them; U1, U2 in none
    assert (deslop["corrections"], deslop["partials"], deslop["acceptances"], deslop["sample_size"]) == (1, 1, 1, 3)
    assert deslop["correction_rate"] == 0.5 and deslop["undated_events"] == 2
    assert (by_skill["cpp-expert"]["sample_size"], by_skill["cpp-expert"]["undated_events"]) == (1, 0)
    ghost = by_skill["ghost-skill"]  # only undated events: a row, nothing in its window
    assert (ghost["sample_size"], ghost["correction_rate"], ghost["undated_events"]) == (0, None, 1)
    assert ghost["last_invoked_at"] is None and not ghost["sufficient_data"]


def test_windowed_marts_leave_undated_events_out(con: duckdb.DuckDBPyConnection) -> None:
    trends = {row["skill_id"]: row for row in rows(con, "select * from marts.skill_correction_trends")}
    assert (trends["deslop"]["recent_sample"], trends["deslop"]["prior_sample"]) == (3, 0)
    assert (trends["ghost-skill"]["recent_sample"], trends["ghost-skill"]["prior_sample"]) == (0, 0)
    hotspots = rows(con, "select skill_id, dimension, occurrences from marts.skill_dimension_hotspots order by 2")
    assert hotspots == [  # U1 (accuracy) and U3 (coverage) are not counted
        {"skill_id": "deslop", "dimension": "accuracy", "occurrences": 1},
        {"skill_id": "deslop", "dimension": "coverage", "occurrences": 1},
    ]
    for mart, day in (
        ("skill_correction_weekly", "week_start"),
        ("skill_correction_daily_history", "invoked_date"),
    ):
        assert con.execute(
            f"select count(*) filter (where {day} is null), sum(sample_size) from marts.{mart}"
        ).fetchall() == [(0, 6)], mart
    assert con.execute(
        "select count(*) filter (where invoked_date is null), sum(invocations) from marts.skill_invocations_daily"
    ).fetchall() == [(0, 6)]
    assert con.execute("select count(*) from marts.feedback_signals where source_system = 'analyzer'").fetchall() == [
        (6,)
    ]


def test_stored_and_retained_views_keep_undated_events(con: duckdb.DuckDBPyConnection) -> None:
    undated = rows(
        con,
        "select event_id, is_retained, storage_tier from marts.stored_analyzer_events where is_undated order by 1",
    )
    assert len(undated) == 3 and all(row["is_retained"] and row["storage_tier"] == "active" for row in undated)
    assert con.execute("select count(*) from marts.retained_analyzer_events").fetchall() == [(9,)]
    windows = {
        row["policy"]: (row["rows_kept"], row["rows_outside_window"])
        for row in rows(con, "select * from marts.retention_policy_windows where raw_table = 'analyzer_events'")
    }
    assert windows == {"analyzer_events": (9, 0), "analyzer_events_archive": (7, 2)}  # E0, E1: past 90 days
