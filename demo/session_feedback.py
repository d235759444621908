"""Source 1, session feedback: end-of-session thumbs, in the legacy SQLite file and the JSON-lines export.

Writes, under OUT/session-feedback (upstream: the assistant's feedback store, which moved from a
SQLite file to a JSON-lines export):

    session_feedback.sqlite3         the legacy table `session_feedback` (older records), as
                                     upstream created it: an AUTOINCREMENT `insertion_order`, the
                                     record's fields, `recorded_date`, and the record again as
                                     JSON in `value`
    session_feedback_export.jsonl    the JSON-lines export (newer records), one record a line

A record has the session feedback contract's fields (`warehouse.contracts.SESSION_FEEDBACK`)
but the two only the SQLite table has (`insertion_order`, `recorded_date`). Its `modality`
(`text` or `voice`: voice sessions end through the API) is, as upstream writes it, a key of the
record, so of the export's lines and of the SQLite `value`, and no column of the SQLite table. The export starts
45 days before as_of; 300 records sit in both files (same `id`): valid data, to deduplicate.
One line of the export has the raw thread id "alice-s1" as its `session_id_opaque` instead of
its SHA-256: the bad record to quarantine.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from demo.common import (
    NAMED_USERS,
    Progress,
    TimeFrame,
    base36_chars,
    categorical_by_row,
    copy_jsonl,
    hex_ids,
    label_column,
    prefixed_chars,
    sample_times,
    strings_from_chars,
    timestamp_column,
    user_pool,
    uuid4s,
)
from warehouse.contracts import SESSION_FEEDBACK, SESSION_LABELS, SESSION_MODALITIES, SESSION_SOURCES
from warehouse.sql import sql_literal

SQLITE_EXPORT_OVERLAP = 300
SQLITE_MIGRATION_DAYS_AGO = 45
# Label weights (in SESSION_LABELS order) for each source (in SESSION_SOURCES order).
LABEL_WEIGHTS_BY_SOURCE = ((0.70, 0.18, 0.12), (0.55, 0.15, 0.30), (0.78, 0.17, 0.05))
RAW_THREAD_ID = "alice-s1"
VOICE_SHARE_OF_API_THREADS = 0.4  # the web UI's voice sessions; the CLI is text only


def _sql_values(values: tuple[str, ...]) -> str:
    return ",".join(sql_literal(value) for value in values)


SESSION_FEEDBACK_DDL = f"""
CREATE TABLE session_feedback (
    insertion_order INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    session_id_opaque TEXT NOT NULL,
    user_id_or_null TEXT,
    recorded_at TEXT NOT NULL,
    recorded_date TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ({_sql_values(SESSION_LABELS)})),
    turn_count_at_end INTEGER NOT NULL,
    source TEXT NOT NULL CHECK (source IN ({_sql_values(SESSION_SOURCES)})),
    schema_version INTEGER NOT NULL DEFAULT 1,
    value TEXT NOT NULL
)
"""

SESSION_FEEDBACK_VIEW = f"""
create or replace view session_feedback_records as
select
    seq,
    in_sqlite,
    in_export,
    id,
    case when is_bad then '{RAW_THREAD_ID}' else sha256(thread_id) end as session_id_opaque,
    case when is_bad then 'alice' else user_id::varchar end as user_id_or_null,
    strftime(ts, '%Y-%m-%dT%H:%M:%S.%fZ') as recorded_at,
    label::varchar as label,
    turn_count_at_end,
    source::varchar as source,
    modality::varchar as modality,
    1 as schema_version
from session_feedback_arrow
"""

# The fields of a record in the export and in the SQLite `value`: the contract's, but the SQLite-only two.
SESSION_FEEDBACK_FIELDS = ", ".join(
    name for name in SESSION_FEEDBACK.columns if name not in ("insertion_order", "recorded_date")
)
SESSION_FEEDBACK_VALUE = "to_json({" + ", ".join(f"'{f}': {f}" for f in SESSION_FEEDBACK_FIELDS.split(", ")) + "})"


def _session_feedback_table(rng: np.random.Generator, n: int, frame: TimeFrame) -> pa.Table:
    ts = sample_times(rng, n, frame, hour_mean=16.0, hour_sd=4.0)
    n_threads = max(1, int(n * 0.75))
    is_cli = rng.random(n_threads) < 0.68
    cli_ids = strings_from_chars(hex_ids(rng, n_threads, "local-", 12))
    web_ids = strings_from_chars(prefixed_chars("web-", base36_chars(rng.integers(0, 36**8, n_threads), 8)))
    users = user_pool(rng, max(len(NAMED_USERS), n // 25))
    thread_user = rng.integers(0, len(users), n_threads)
    incognito = rng.random(n_threads) < 0.15
    voice = ~is_cli & (rng.random(n_threads) < VOICE_SHARE_OF_API_THREADS)

    thread = rng.integers(0, n_threads, n)
    thread_ids = pc.if_else(pa.array(is_cli), cli_ids, web_ids).take(pa.array(thread))
    source = np.where(is_cli[thread], (rng.random(n) >= 0.62).astype(np.int64), 2)
    turns = np.clip(1 + rng.lognormal(np.log(8.0), 0.8, n).astype(np.int64), 1, 60)
    label_weights = np.array(LABEL_WEIGHTS_BY_SOURCE)[source]
    short = turns <= 3  # very short sessions skip more often
    label_weights[short] += np.array([-0.12, 0.0, 0.12])
    label = categorical_by_row(rng, label_weights)
    return pa.table(
        {
            "seq": np.arange(n, dtype=np.int64),
            "ts": timestamp_column(ts),
            "id": uuid4s(rng, n),
            "thread_id": thread_ids,
            "user_id": label_column(thread_user[thread], users, null=incognito[thread]),
            "label": label_column(label, SESSION_LABELS),
            "turn_count_at_end": turns,
            "source": label_column(source, SESSION_SOURCES),
            "modality": label_column(voice[thread].astype(np.int64), SESSION_MODALITIES),
        }
    )


def write_session_feedback(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    n: int,
    rng: np.random.Generator,
    frame: TimeFrame,
    report: Progress,
) -> int:
    """Older records in the legacy SQLite file, newer ones in the JSON-lines export."""
    table = _session_feedback_table(rng, n + 1, frame)  # one extra becomes the bad line
    ts = table.column("ts").to_numpy().view(np.int64)
    split = int(np.searchsorted(ts, frame.days_ago_us(SQLITE_MIGRATION_DAYS_AGO)))
    split = min(split, max(n + 1 - SQLITE_EXPORT_OVERLAP - 2, 0))
    sqlite_end = min(split + SQLITE_EXPORT_OVERLAP, n + 1)
    bad = (sqlite_end + n + 1) // 2 if sqlite_end < n + 1 else n
    seq = np.arange(n + 1)
    table = (
        table.append_column("is_bad", pa.array(seq == bad))
        .append_column("in_sqlite", pa.array(seq < sqlite_end))
        .append_column("in_export", pa.array(seq >= split))
    )
    con.register("session_feedback_arrow", table)
    con.execute(SESSION_FEEDBACK_VIEW)
    folder.mkdir(parents=True, exist_ok=True)
    _write_session_feedback_sqlite(con, folder / "session_feedback.sqlite3")
    copy_jsonl(
        con,
        f"select {SESSION_FEEDBACK_FIELDS} from session_feedback_records where in_export order by seq",
        folder / "session_feedback_export.jsonl",
    )
    report(
        f"session feedback: {n:,} records ({sqlite_end:,} in SQLite, {n + 1 - split:,} in the "
        f"export, {sqlite_end - split} in both)"
    )
    return n


def _write_session_feedback_sqlite(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    path.unlink(missing_ok=True)
    rows = con.execute(
        f"""
        select id, session_id_opaque, user_id_or_null, recorded_at, left(recorded_at, 10),
               label, turn_count_at_end, source, schema_version, {SESSION_FEEDBACK_VALUE}::varchar
        from session_feedback_records where in_sqlite order by seq
        """
    )
    db = sqlite3.connect(path)
    try:
        db.execute("pragma journal_mode = delete")
        db.execute("pragma synchronous = off")
        db.execute(SESSION_FEEDBACK_DDL)
        insert = (
            "insert into session_feedback (id, session_id_opaque, user_id_or_null, recorded_at, "
            "recorded_date, label, turn_count_at_end, source, schema_version, value) "
            "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        while batch := rows.fetchmany(50_000):
            db.executemany(insert, batch)
        db.commit()
    finally:
        db.close()
