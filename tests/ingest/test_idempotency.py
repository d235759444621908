"""Counts add up for every load, re-ingesting adds nothing, grown inputs land only what is new, --no-snippets."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.ingest import (
    RAW_DATA_TABLES,
    analyzer_event,
    append_jsonl,
    assert_counts_add_up,
    count,
    eval_run,
    ingest_ok,
    manifest,
    parse_report,
    places_containing,
    quarantine,
    query,
    reaction_envelope,
    reaction_payload,
    session_record,
    snapshot,
    workspace_feedback,
    workspace_session,
    write_jsonl,
    write_session_sqlite,
)
from tests.support.postgres_tables import (
    conv_row,
    create_pg_conv_messages,
    create_pg_session_feedback,
    create_pg_workspace,
)

DATA_AND_QUARANTINE = (*RAW_DATA_TABLES, "quarantine")


# -- inputs with good rows, bad rows and duplicates, one per source --------------------------------------------
def _analyzer_store(root: Path) -> list[Any]:
    store = root / "feedback-store"
    write_jsonl(store / "archive" / "feedback-20260101.jsonl", [analyzer_event(n) for n in (50, 51)])
    write_jsonl(
        store / "feedback.jsonl",
        [
            analyzer_event(1),
            analyzer_event(2, outcome="approved"),
            analyzer_event(50),  # also archived
            "not json",
            "",
            analyzer_event(1),  # twice in this file
            analyzer_event(3),
        ],
    )
    return ["analyzer", store]


def _session_jsonl(root: Path) -> list[Any]:
    source = write_jsonl(
        root / "session_feedback.jsonl",
        [session_record(1), session_record(2, label="meh"), session_record(1), session_record(3), "[1]"],
    )
    return ["session-feedback", source]


def _session_sqlite(root: Path) -> list[Any]:
    records = [session_record(1), session_record(2, schema_version=2), session_record(3)]
    return ["session-feedback", write_session_sqlite(root / "store.sqlite3", records)]


def _reaction_blobs(root: Path) -> list[Any]:
    blobs = root / "blobs"
    for name, record in {
        "a/1.json": reaction_envelope(reaction_payload(1)),
        "a/1-copy.json": reaction_envelope(reaction_payload(1)),
        "b/2.json": reaction_payload(2),
        "b/c/3.json": reaction_envelope(reaction_payload(3, confidence=1.5)),
    }.items():
        (blobs / name).parent.mkdir(parents=True, exist_ok=True)
        (blobs / name).write_text(json.dumps(record, indent=2))
    (blobs / "b" / "broken.json").write_text("{")
    return ["reactions", blobs]


def _reactions_jsonl(root: Path) -> list[Any]:
    source = write_jsonl(
        root / "reactions.jsonl",
        [reaction_payload(1), reaction_payload(2, reaction="love"), reaction_payload(1), reaction_payload(3)],
    )
    return ["reactions", source]


def _workspace_folder(root: Path) -> list[Any]:
    folder = root / "workspace"
    write_jsonl(folder / "feedback.jsonl", [workspace_feedback(1), workspace_feedback(2, rating="x")])
    write_jsonl(folder / "sessions.jsonl", [workspace_session(1), workspace_session(1), workspace_session(2)])
    write_jsonl(folder / "eval_runs.jsonl", [eval_run(1), eval_run(2, passed_count=-4)])
    return ["workspace", folder]


FILE_INPUTS: dict[str, Callable[[Path], list[Any]]] = {
    "analyzer store": _analyzer_store,
    "session feedback jsonl": _session_jsonl,
    "session feedback sqlite": _session_sqlite,
    "reaction blobs": _reaction_blobs,
    "reactions jsonl": _reactions_jsonl,
    "workspace folder": _workspace_folder,
}


def _assert_report_matches_manifest(stdout: str, db: Path) -> None:
    loads, _skipped, totals = parse_report(stdout)
    by_uri = {r["uri"]: r for r in manifest(db)}
    assert len(by_uri) == len(manifest(db)), "one manifest row per input"
    for load in loads:
        row = by_uri[load["uri"]]
        assert (row["rows_read"], row["rows_loaded"], row["rows_quarantined"], row["rows_duplicate"]) == (
            load["read"],
            load["loaded"],
            load["quarantined"],
            load["duplicates"],
        ), load["uri"]
        assert load["read"] == load["loaded"] + load["quarantined"] + load["duplicates"]
    for key in ("read", "loaded", "quarantined", "duplicates"):
        assert totals[key] == sum(load[key] for load in loads), key
    assert totals["read"] == totals["loaded"] + totals["quarantined"] + totals["duplicates"]


@pytest.mark.parametrize("kind", list(FILE_INPUTS))
def test_counts_add_up_in_manifest_cli_and_tables(tmp_path: Path, kind: str) -> None:
    args = FILE_INPUTS[kind](tmp_path / "in")
    db = tmp_path / "w.duckdb"

    result = ingest_ok(*args, "--db", db, fresh_process=True)

    _assert_report_matches_manifest(result.stdout, db)
    assert_counts_add_up(db)
    _, _, totals = parse_report(result.stdout)
    assert totals["loaded"] > 0 and totals["quarantined"] > 0, "the input holds good and bad rows"
    assert totals["duplicates"] > 0 or kind.endswith("sqlite"), "and duplicates"
    assert sum(count(db, t) for t in RAW_DATA_TABLES) == totals["loaded"]
    assert count(db, "quarantine") == totals["quarantined"]
    if totals["quarantined"]:
        assert "quarantined" in result.stderr and "`feedback-analytics quarantine --db " in result.stderr


def test_counts_for_an_in_file_duplicate_in_a_clean_file(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in (1, 2, 1, 3, 2)])
    db = tmp_path / "w.duckdb"

    result = ingest_ok("analyzer", source, "--db", db)

    assert parse_report(result.stdout)[2] == {"read": 5, "loaded": 3, "quarantined": 0, "duplicates": 2}
    assert count(db, "analyzer_events") == 3
    _assert_report_matches_manifest(result.stdout, db)


# -- idempotency ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(FILE_INPUTS))
def test_ingesting_the_same_input_again_adds_nothing(tmp_path: Path, kind: str) -> None:
    args = FILE_INPUTS[kind](tmp_path / "in")
    db = tmp_path / "w.duckdb"
    ingest_ok(*args, "--db", db)
    before = snapshot(db)

    again = ingest_ok(*args, "--db", db)

    assert snapshot(db, DATA_AND_QUARANTINE) == {t: before[t] for t in DATA_AND_QUARANTINE}
    loads, skipped, totals = parse_report(again.stdout)
    assert totals["loaded"] == 0 and totals["quarantined"] == 0
    if skipped:
        assert "unchanged" in again.stdout
    assert_counts_add_up(db)


def test_unchanged_file_is_skipped(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(3)] + ["oops"])
    db = tmp_path / "w.duckdb"
    ingest_ok("analyzer", source, "--db", db)
    before = snapshot(db)

    again = ingest_ok("analyzer", source, "--db", db, fresh_process=True)

    assert "unchanged" in again.stdout
    loads, skipped, totals = parse_report(again.stdout)
    assert loads == [] and [s["uri"] for s in skipped] == [str(source.resolve())]
    assert totals == {"read": 0, "loaded": 0, "quarantined": 0, "duplicates": 0}
    assert snapshot(db) == before, "nothing changes, not even the manifest"


def test_unchanged_blob_folder_is_skipped_and_a_new_blob_lands_alone(tmp_path: Path) -> None:
    _, blobs = _reaction_blobs(tmp_path / "in")
    db = tmp_path / "w.duckdb"
    ingest_ok("reactions", blobs, "--db", db)
    before = snapshot(db)

    again = ingest_ok("reactions", blobs, "--db", db)
    assert "unchanged" in again.stdout and snapshot(db) == before

    (blobs / "b" / "c" / "4.json").write_text(json.dumps(reaction_envelope(reaction_payload(4)), indent=2))
    grown = ingest_ok("reactions", blobs, "--db", db)

    _, _, totals = parse_report(grown.stdout)
    assert totals == {"read": 6, "loaded": 1, "quarantined": 0, "duplicates": 5}
    assert count(db, "turn_reactions") == len(before["turn_reactions"]) + 1
    assert snapshot(db, ["quarantine"])["quarantine"] == before["quarantine"]
    assert_counts_add_up(db)


@pytest.mark.parametrize("dirty", [False, True], ids=["clean file", "file with bad lines"])
def test_a_file_that_grew_lands_only_its_new_rows(tmp_path: Path, dirty: bool) -> None:
    first = [analyzer_event(n) for n in range(4)] + (["{broken", analyzer_event(90, confidence=2.0)] if dirty else [])
    source = write_jsonl(tmp_path / "feedback.jsonl", first)
    db = tmp_path / "w.duckdb"
    ingest_ok("analyzer", source, "--db", db)
    before = snapshot(db)
    landed_before = {r[0]: r for r in query(db, "select event_id, _load_id from raw.analyzer_events")}

    append_jsonl(source, [analyzer_event(n) for n in range(4, 7)] + (["[]"] if dirty else []))
    result = ingest_ok("analyzer", source, "--db", db)

    old_bad = 2 if dirty else 0
    new_bad = 1 if dirty else 0
    _, _, totals = parse_report(result.stdout)
    # only the appended bytes are read (tests/ingest/test_appends.py has the rewrites, truncations and rotations)
    assert totals == {"read": 3 + new_bad, "loaded": 3, "quarantined": new_bad, "duplicates": 0}
    landed_after = {r[0]: r for r in query(db, "select event_id, _load_id from raw.analyzer_events")}
    assert len(landed_after) == 7
    assert {k: landed_after[k] for k in landed_before} == landed_before, "old rows untouched"
    after_quarantine = snapshot(db, ["quarantine"])["quarantine"]
    assert len(after_quarantine) == old_bad + new_bad, "the old bad lines are not quarantined twice"
    assert set(before["quarantine"]) <= set(after_quarantine)
    assert [q["line_number"] for q in quarantine(db)] == ([5, 6, 10] if dirty else [])
    assert len(manifest(db)) == 2
    assert_counts_add_up(db)


def test_same_data_in_another_file_adds_nothing(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "a" / "feedback.jsonl", [analyzer_event(n) for n in range(5)])
    db = tmp_path / "w.duckdb"
    ingest_ok("analyzer", source, "--db", db)
    before = snapshot(db, RAW_DATA_TABLES)
    copy = tmp_path / "b" / "feedback.jsonl"
    copy.parent.mkdir()
    shutil.copy(source, copy)
    (copy.parent / "feedback.jsonl").write_bytes(source.read_bytes() + b"\n")  # a blank line more: new checksum

    result = ingest_ok("analyzer", copy, "--db", db)

    # its first bytes are the first file's as last read: it continues from there (a blank line: no row)
    assert parse_report(result.stdout)[2] == {"read": 0, "loaded": 0, "quarantined": 0, "duplicates": 0}
    assert manifest(db)[-1]["start_offset"] == source.stat().st_size
    assert snapshot(db, RAW_DATA_TABLES) == before


def _pg_session_feedback(dsn: str) -> list[Any]:
    create_pg_session_feedback(
        dsn,
        [session_record(1), session_record(2, session_id_opaque="not-a-hash"), session_record(3, schema_version=9)],
    )
    return ["session-feedback", "--postgres", dsn]


def _pg_reactions(dsn: str) -> list[Any]:
    create_pg_conv_messages(dsn, [conv_row(reaction_payload(1)), conv_row(reaction_payload(2, confidence=3.0))])
    return ["reactions", "--postgres", dsn]


def _pg_workspace(dsn: str) -> list[Any]:
    create_pg_workspace(
        dsn,
        {
            "feedback": [workspace_feedback(1), workspace_feedback(2, rating="great")],
            "sessions": [workspace_session(1)],
            "eval_runs": [eval_run(1), eval_run(2, failed_count=-1)],
        },
    )
    return ["workspace", "--postgres", dsn]


@pytest.mark.parametrize("make", [_pg_session_feedback, _pg_reactions, _pg_workspace], ids=lambda f: f.__name__[4:])
def test_same_postgres_table_read_twice_adds_nothing(tmp_path: Path, pg_database: str, make: Callable) -> None:
    args = make(pg_database)
    db = tmp_path / "w.duckdb"
    first = ingest_ok(*args, "--db", db)
    before = snapshot(db)
    _, _, first_totals = parse_report(first.stdout)
    assert first_totals["quarantined"] > 0

    again = ingest_ok(*args, "--db", db)

    assert snapshot(db, DATA_AND_QUARANTINE) == {t: before[t] for t in DATA_AND_QUARANTINE}
    _, _, totals = parse_report(again.stdout)
    assert totals["loaded"] == 0 and totals["quarantined"] == 0
    if make is _pg_reactions:  # the index is read again only where it differs: the conversation with the bad row
        assert totals["read"] == totals["duplicates"] == 1
    else:
        assert totals["read"] == totals["duplicates"] == first_totals["read"]
    assert_counts_add_up(db)
    loads = manifest(db)
    assert len(loads) == 2 * len(before["load_manifest"]), "each table read adds one manifest row"
    for row in loads[len(before["load_manifest"]) :]:
        assert row["rows_duplicate"] == row["rows_read"] and row["rows_loaded"] == row["rows_quarantined"] == 0


# -- --no-snippets --------------------------------------------------------------------------------------------
def _snippet(n: int) -> str:
    return f"SNIPPET-{n}: no, revert that, use the other API"


def test_no_snippets_on_a_clean_file(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "feedback.jsonl", [analyzer_event(n, user_message_snippet=_snippet(n)) for n in range(5)]
    )
    db = tmp_path / "w.duckdb"

    ingest_ok("analyzer", "--no-snippets", source, "--db", db)

    assert query(db, "select count(*), count(user_message_snippet) from raw.analyzer_events") == [(5, 0)]
    assert places_containing(db, "SNIPPET-") == []


def test_no_snippets_with_quarantined_lines(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "feedback.jsonl",
        [
            analyzer_event(1, user_message_snippet=_snippet(1)),
            analyzer_event(2, user_message_snippet=_snippet(2), outcome="approved"),
            analyzer_event(3, user_message_snippet=_snippet(3), confidence="high"),
            analyzer_event(4, user_message_snippet=_snippet(4)),
        ],
    )
    db = tmp_path / "w.duckdb"

    ingest_ok("analyzer", source, "--no-snippets", "--db", db)

    assert query(db, "select count(*), count(user_message_snippet) from raw.analyzer_events") == [(2, 0)]
    bad = quarantine(db)
    assert [q["line_number"] for q in bad] == [2, 3]
    for row in bad:
        assert "user_message_snippet" not in row["raw_text"] and "SNIPPET-" not in row["raw_text"]
        assert json.loads(row["raw_text"])["event_id"] == row["record_key"], "the rest of the line is kept"
    assert places_containing(db, "SNIPPET-") == []


def test_no_snippets_with_a_line_that_is_not_json(tmp_path: Path) -> None:
    """Privacy mode: a snippet must not survive in the quarantine even when its line cannot be parsed."""
    truncated = json.dumps(analyzer_event(1, user_message_snippet=_snippet(1)))[:-20]
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(2), truncated])
    db = tmp_path / "w.duckdb"

    ingest_ok("analyzer", source, "--no-snippets", "--db", db)

    (row,) = quarantine(db)
    assert row["line_number"] == 2 and "json" in row["reason"].lower()
    assert places_containing(db, "SNIPPET-") == []


def test_without_no_snippets_the_snippet_is_kept(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(1, user_message_snippet=_snippet(1))])
    db = tmp_path / "w.duckdb"
    ingest_ok("analyzer", source, "--db", db)
    assert query(db, "select user_message_snippet from raw.analyzer_events") == [(_snippet(1),)]
