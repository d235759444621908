"""`purge` and undated analyzer events (the analyzer wrote `"timestamp": ""`, the row holds NULL).

An undated event has one instant, when it was first loaded (`_loaded_at`): the retention policies date it by
that, as stored_analyzer_events and the retained views do. So it moves to the Parquet archive 90 days after
its load, is deleted 365 days after it, and is never archived or deleted early, nor kept for ever. The
purge runs as the operator runs it (the CLI in a subprocess); the loads are moved back in time by hand, as
no real load can be dated in the past.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from tests.support.analyzer_store import Invocation, feedback_event
from tests.support.ingest import ingest_ok, query, write_jsonl
from tests.support.operations import archive_listing, archived_event_ids, ok, ops_env, parse_purge, run_ops

TODAY = dt.datetime.now(dt.UTC).date()


def undated(name: str) -> dict:
    """An undated event as analyze.py writes it (tests/support/analyzer_store.py)."""
    return feedback_event(Invocation(f"uuid-{name}", "deslop", "", "correction", "s1"))


def test_undated_events_are_archived_and_deleted_by_their_load_date(tmp_path: Path) -> None:
    names = ["loaded-today", "loaded-89-days-ago", "loaded-91-days-ago", "loaded-366-days-ago"]
    events = {name: undated(name) for name in names}
    dated = {**undated("dated-today"), "event_id": "dated-today", "timestamp": f"{TODAY}T08:00:00Z"}
    db, archive, env = tmp_path / "w.duckdb", tmp_path / "archive", ops_env(tmp_path)
    ingest_ok("analyzer", write_jsonl(tmp_path / "feedback.jsonl", [*events.values(), dated]), "--db", db)
    with duckdb.connect(str(db)) as con:
        for name, back in (("loaded-89-days-ago", 89), ("loaded-91-days-ago", 91), ("loaded-366-days-ago", 366)):
            con.execute(
                f"update raw.analyzer_events set _loaded_at = _loaded_at - interval {back} day where event_id = ?",
                [events[name]["event_id"]],
            )

    dry = parse_purge(ok(run_ops("purge", "--dry-run", "--archive-dir", archive, "--db", db, env=env)).stdout)
    assert dry["analyzer_events_archive"].archived == 2
    assert archive_listing(archive) == []

    done = parse_purge(ok(run_ops("purge", "--yes", "--archive-dir", archive, "--db", db, env=env)).stdout)
    assert done["analyzer_events_archive"].archived == 2  # 91 and 366 days after their load
    assert done["analyzer_events"].deleted_from_archive == 1  # 366 days: moved, then deleted from the archive
    by_id = {event["event_id"]: name for name, event in events.items()}
    in_table = {by_id.get(row[0], row[0]) for row in query(db, "select event_id from raw.analyzer_events")}
    assert in_table == {"loaded-today", "loaded-89-days-ago", "dated-today"}
    assert [by_id[event_id] for event_id in archived_event_ids(archive)] == ["loaded-91-days-ago"]

    again = parse_purge(ok(run_ops("purge", "--yes", "--archive-dir", archive, "--db", db, env=env)).stdout)
    assert (again["analyzer_events_archive"].archived, again["analyzer_events"].deleted_from_archive) == (0, 0)
