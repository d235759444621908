"""Session feedback as OpenCouch really stores it lands whole, from its SQLite file and its PostgreSQL table.

The stores are written by tests/support/opencouch.py with upstream's own DDL, INSERT and `value`
serialisation (whanyu1212/OpenCouch, apps/backend/agent/feedback/sqlite_session_feedback.py @ a2e07eac
lines 28-42 and 132-158, postgres_session_feedback.py @ d9badd2c lines 24-38 and 134-159, models.py
@ ff71e632 lines 19-30). Incognito and API sessions write a NULL `user_id_or_null`
(runtime/session_feedback.py @ 1f015495 `record_session_feedback`), so a real file can begin with
thousands of NULL user ids: more than the 1,024 rows from which the ADBC SQLite driver guesses a type.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tests.support.ingest import (
    assert_counts_add_up,
    ingest_ok,
    manifest,
    parse_report,
    places_containing,
    rows,
    write_jsonl,
)
from tests.support.opencouch import (
    AnyRecord,
    SessionFeedbackRecord,
    SessionFeedbackRecordBeforeModality,
    opencouch_record,
    write_opencouch_postgres,
    write_opencouch_sqlite,
)

FREE_TEXT = "FREE-TEXT-a key of value the contract does not allow"
Store = Callable[[Sequence[AnyRecord]], list[str]]  # writes the records, returns the ingest arguments


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """An upstream store of either kind, written with upstream's statements."""
    if request.param == "sqlite":

        def write(records: Sequence[AnyRecord]) -> list[str]:
            return [str(write_opencouch_sqlite(tmp_path / "session_feedback.sqlite3", records))]

        return write
    dsn = request.getfixturevalue("pg_database")

    def write_pg(records: Sequence[AnyRecord]) -> list[str]:
        write_opencouch_postgres(dsn, records)
        return ["--postgres", dsn]

    return write_pg


def _landed(db: Path) -> dict[str, dict[str, object]]:
    return {r["id"]: r for r in rows(db, "select * from raw.session_feedback")}


def _ingest(tmp_path: Path, args: list[str]) -> tuple[Path, dict[str, int]]:
    db = tmp_path / "w.duckdb"
    result = ingest_ok("session-feedback", *args, "--db", db)
    assert_counts_add_up(db)
    return db, parse_report(result.stdout)[2]


def _assert_landed_as_written(db: Path, records: Sequence[SessionFeedbackRecord]) -> None:
    landed = _landed(db)
    assert len(landed) == len(records)
    for position, record in enumerate(records, start=1):
        row = landed[record.id]
        assert row["user_id_or_null"] == record.user_id_or_null, position
        assert row["turn_count_at_end"] == record.turn_count_at_end, position
        assert row["label"] == record.label
        assert row["insertion_order"] == position


def test_more_than_a_batch_of_null_user_ids_first(tmp_path: Path, store: Store) -> None:
    # 1,500 incognito sessions, then users: on main the SQLite read failed whole ("Type mismatch in column 2")
    records = [opencouch_record(n) for n in range(1_500)]
    records += [opencouch_record(n, user_id=f"user-{n % 7}") for n in range(1_500, 1_530)]
    records += [opencouch_record(n) for n in range(1_530, 1_540)]
    db, totals = _ingest(tmp_path, store(records))

    assert totals == {"read": 1_540, "loaded": 1_540, "quarantined": 0, "duplicates": 0}
    _assert_landed_as_written(db, records)


def test_a_column_null_in_every_row(tmp_path: Path, store: Store) -> None:
    records = [opencouch_record(n) for n in range(1_100)]
    db, totals = _ingest(tmp_path, store(records))

    assert totals["loaded"] == 1_100
    _assert_landed_as_written(db, records)
    assert rows(db, "select count(user_id_or_null) as n from raw.session_feedback") == [{"n": 0}]


def test_null_and_non_null_mixed_across_batches(tmp_path: Path, store: Store) -> None:
    # NULL runs longer than a batch between users, and users scattered inside NULL runs
    records = [
        opencouch_record(n, user_id=None if (n // 1_100) % 2 == 0 and n % 97 else f"user-{n % 5}") for n in range(3_000)
    ]
    db, totals = _ingest(tmp_path, store(records))

    assert totals["loaded"] == 3_000
    _assert_landed_as_written(db, records)


def test_the_same_record_appended_twice_lands_once_and_one_duplicate(tmp_path: Path, store: Store) -> None:
    # upstream's test_duplicate_id_appends_produce_two_rows (tests/integration/feedback/
    # test_session_feedback_backend.py @ a2e07eac): two aappend calls of one record are two rows with one id
    record = opencouch_record(1, user_id="alice")
    db, totals = _ingest(tmp_path, store([record, record, opencouch_record(2)]))

    assert totals == {"read": 3, "loaded": 2, "quarantined": 0, "duplicates": 1}
    assert set(_landed(db)) == {record.id, opencouch_record(2).id}
    assert [(m["rows_loaded"], m["rows_duplicate"]) for m in manifest(db)] == [(2, 1)]


# -- modality: the one key of `value` that is read ---------------------------------------------------------
class RecordWithALaterFreeTextKey(SessionFeedbackRecord):
    """A later record version with a key the contract does not allow (`value` is the whole record)."""

    note: str = FREE_TEXT


def _modalities(db: Path) -> dict[str, str]:
    return {r["id"]: r["modality"] for r in rows(db, "select id, modality from raw.session_feedback")}


def test_modality_is_read_from_value_and_nothing_else_of_it(tmp_path: Path, store: Store) -> None:
    voice = opencouch_record(1, modality="voice")
    text = opencouch_record(2, user_id="bob", modality="text")
    # a record written before models.py had `modality` (@ d9badd2c): upstream's default, text
    older = SessionFeedbackRecordBeforeModality(**opencouch_record(3).model_dump(exclude={"modality"}))
    later = RecordWithALaterFreeTextKey(**opencouch_record(4, modality="voice").model_dump())
    db, totals = _ingest(tmp_path, store([voice, text, older, later]))

    assert totals["loaded"] == 4
    assert _modalities(db) == {voice.id: "voice", text.id: "text", older.id: "text", later.id: "voice"}
    assert places_containing(db, "FREE-TEXT") == []
    assert "value" not in {r["column_name"] for r in rows(db, "describe raw.session_feedback")}


def test_an_unknown_modality_is_kept(tmp_path: Path, store: Store) -> None:
    # not checked at ingest (warehouse/contracts.py): the answer still counts; dbt warns about the value
    video = SessionFeedbackRecord.model_construct(**{**opencouch_record(1).model_dump(), "modality": "video"})
    db, totals = _ingest(tmp_path, store([video, opencouch_record(2, modality="voice")]))

    assert totals == {"read": 2, "loaded": 2, "quarantined": 0, "duplicates": 0}
    assert sorted(_modalities(db).values()) == ["video", "voice"]


def test_modality_from_a_jsonl_export(tmp_path: Path) -> None:
    # one record a line, as model_dump gives it (modality at top level), and rows of the store exported
    # with their `value` column: a JSON object (PostgreSQL's jsonb) or a JSON string (SQLite's text)
    records = [opencouch_record(n, modality=("voice", "text")[n % 2]) for n in range(6)]
    top_level = [json.loads(r.model_dump_json()) for r in records[:2]]
    value_object = [
        {**r.model_dump(exclude={"modality"}), "value": {**r.model_dump(mode="json"), "note": FREE_TEXT}}
        for r in records[2:4]
    ]
    value_string = [
        {**r.model_dump(exclude={"modality"}), "value": json.dumps({**r.model_dump(mode="json"), "note": FREE_TEXT})}
        for r in records[4:]
    ]
    without = {**opencouch_record(6).model_dump(exclude={"modality"}), "value": {"note": FREE_TEXT}}
    source = write_jsonl(tmp_path / "export.jsonl", [*top_level, *value_object, *value_string, without])
    db, totals = _ingest(tmp_path, [str(source)])

    assert totals["loaded"] == 7
    assert _modalities(db) == {**{r.id: r.modality for r in records}, without["id"]: "text"}
    assert places_containing(db, "FREE-TEXT") == []
