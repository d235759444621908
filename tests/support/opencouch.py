"""The session-feedback store written exactly as OpenCouch writes it (`whanyu1212/OpenCouch`,
`apps/backend/agent/feedback/`), for the ingest tests: the record model, the SQLite and PostgreSQL tables
created with upstream's own DDL, rows appended with upstream's own INSERT and `value` serialisation.

Every statement and rule below is copied from the upstream file and line cited beside it; where a line had
to change (the driver's placeholder style), the comment says so.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

# models.py @ ff71e632 lines 14-16
FeedbackLabel = Literal["positive", "negative", "skip"]
FeedbackSource = Literal["cli_end", "cli_exit", "api_end"]
FeedbackModality = Literal["text", "voice"]


class SessionFeedbackRecord(BaseModel):
    """models.py @ ff71e632 lines 19-30: the current record; `modality` has no column, it lives in `value`."""

    id: str
    session_id_opaque: str
    user_id_or_null: str | None = None
    recorded_at: str
    label: FeedbackLabel
    turn_count_at_end: int
    source: FeedbackSource
    modality: FeedbackModality = "text"
    schema_version: int = 1


class SessionFeedbackRecordBeforeModality(BaseModel):
    """models.py @ d9badd2c lines 18-28: the record before `modality` existed (older rows of a real store)."""

    id: str
    session_id_opaque: str
    user_id_or_null: str | None = None
    recorded_at: str
    label: FeedbackLabel
    turn_count_at_end: int
    source: FeedbackSource
    schema_version: int = 1


AnyRecord = SessionFeedbackRecord | SessionFeedbackRecordBeforeModality

# sqlite_session_feedback.py @ a2e07eac lines 28-42 (unchanged @ 95139df2 lines 30-44)
SQLITE_SESSION_FEEDBACK_DDL = """
CREATE TABLE IF NOT EXISTS session_feedback (
    insertion_order INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    session_id_opaque TEXT NOT NULL,
    user_id_or_null TEXT,
    recorded_at TEXT NOT NULL,
    recorded_date TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('positive', 'negative', 'skip')),
    turn_count_at_end INTEGER NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('cli_end', 'cli_exit', 'api_end')),
    schema_version INTEGER NOT NULL DEFAULT 1,
    value TEXT NOT NULL
);
"""

# sqlite_session_feedback.py @ a2e07eac lines 138-144 (aappend's statement)
SQLITE_SESSION_FEEDBACK_INSERT = """
            INSERT INTO session_feedback
                (id, session_id_opaque, user_id_or_null, recorded_at,
                 recorded_date, label, turn_count_at_end, source,
                 schema_version, value)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """

# postgres_session_feedback.py @ d9badd2c lines 24-38 (unchanged @ 476860b5)
POSTGRES_SESSION_FEEDBACK_DDL = """
CREATE TABLE IF NOT EXISTS session_feedback (
    insertion_order BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL,
    session_id_opaque TEXT NOT NULL,
    user_id_or_null TEXT,
    recorded_at TEXT NOT NULL,
    recorded_date TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('positive', 'negative', 'skip')),
    turn_count_at_end INTEGER NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('cli_end', 'cli_exit', 'api_end')),
    schema_version INTEGER NOT NULL DEFAULT 1,
    value JSONB NOT NULL
);
"""

# postgres_session_feedback.py @ d9badd2c lines 140-146; psycopg's `%s` placeholders written as ADBC's `$n`,
# and `Jsonb(serialized)` (line 157: psycopg sends json.dumps of the dict as jsonb) as its text cast to jsonb
POSTGRES_SESSION_FEEDBACK_INSERT = """
                INSERT INTO session_feedback
                    (id, session_id_opaque, user_id_or_null, recorded_at,
                     recorded_date, label, turn_count_at_end, source,
                     schema_version, value)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)
                """


def extract_date_prefix(recorded_at: str) -> str:
    """sqlite_session_feedback.py @ a2e07eac `_extract_date_prefix` (the `recorded_date` column)."""
    date_prefix = recorded_at.split("T", 1)[0]
    date.fromisoformat(date_prefix)
    return date_prefix


def insert_parameters(record: AnyRecord) -> tuple[object, ...]:
    """sqlite_session_feedback.py @ a2e07eac lines 132-155: the bound parameters; `value` is the whole record,
    `record.model_dump(mode="json")` then `json.dumps(serialized, default=str)` (lines 134-135; the shared
    store since: session_feedback_store.py @ 95139df2 `_serialize`, sqldialect.py `_sqlite_encode_value`)."""
    recorded_date = extract_date_prefix(record.recorded_at)
    serialized = record.model_dump(mode="json")
    value_json = json.dumps(serialized, default=str)
    return (
        record.id,
        record.session_id_opaque,
        record.user_id_or_null,
        record.recorded_at,
        recorded_date,
        record.label,
        record.turn_count_at_end,
        record.source,
        record.schema_version,
        value_json,
    )


def write_opencouch_sqlite(path: Path, records: Iterable[AnyRecord]) -> Path:
    """A legacy store file as `SqliteSessionFeedbackBackend` leaves it: the schema (lines 118-120), then one
    `aappend` per record (lines 137-158)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute(SQLITE_SESSION_FEEDBACK_DDL)
        conn.commit()
        for record in records:
            conn.execute(SQLITE_SESSION_FEEDBACK_INSERT, insert_parameters(record))
        conn.commit()
    finally:
        conn.close()
    return path


def write_opencouch_postgres(dsn: str, records: Sequence[AnyRecord]) -> None:
    """The production table as `PostgresSessionFeedbackBackend` leaves it: the schema (`_ensure_schema`),
    then one `aappend` per record (postgres_session_feedback.py @ d9badd2c lines 134-159; `value` is
    `Jsonb(record.model_dump(mode="json"))`, the same JSON as SQLite's)."""
    import adbc_driver_postgresql.dbapi as pg

    with pg.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute(POSTGRES_SESSION_FEEDBACK_DDL)
        if records:
            cur.executemany(POSTGRES_SESSION_FEEDBACK_INSERT, [insert_parameters(r) for r in records])
        conn.commit()


def opencouch_record(n: int, *, user_id: str | None = None, **fields: object) -> SessionFeedbackRecord:
    """Record number `n` as the runtime builds it (runtime/session_feedback.py @ 1f015495
    `record_session_feedback`): a uuid4-shaped id, `hash_session_id(thread_id)` (the thread id's SHA-256
    hex) and `iso_now()` (`isoformat()` with `Z`; memory/hashing.py @ 2a3c6a3c). `user_id` None is what an
    incognito or API session without a user writes; `fields` override the rest (`modality=...`)."""
    recorded = datetime(2026, 5, 1 + n % 28, 10, 0, 0, n % 1_000_000, tzinfo=UTC)
    values: dict[str, object] = {
        "id": f"00000000-0000-4000-8000-{n:012d}",
        "session_id_opaque": hashlib.sha256(f"thread-{n}".encode()).hexdigest(),
        "user_id_or_null": user_id,
        "recorded_at": recorded.isoformat().replace("+00:00", "Z"),
        "label": ("positive", "negative", "skip")[n % 3],
        "turn_count_at_end": n % 11,
        "source": ("cli_end", "cli_exit", "api_end")[n % 3],
    }
    values.update(fields)
    return SessionFeedbackRecord(**values)  # type: ignore[arg-type]
