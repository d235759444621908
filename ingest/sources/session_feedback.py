"""Source 1: end-of-session thumbs, from the legacy SQLite file, a JSONL export or PostgreSQL.

Only the contract's fields are read. Of the `value` column (the record again,
as JSON) one key is read, `modality` (upstream keeps it nowhere else), and the
database extracts it (SQLite `json_extract`, PostgreSQL `->>`), so nothing else
of `value` leaves it and no free text beyond the contract is ever stored.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb

from ingest.databases import PostgresTable, SqliteTable, load_table
from ingest.files import file_loads, is_sqlite, readable_file
from ingest.jsonl import file_checksum
from ingest.load import LoadOptions, LoadResult
from ingest.progress import LoadProgress
from warehouse.contracts import SESSION_FEEDBACK

TABLE = "session_feedback"


def ingest_session_feedback(
    con: duckdb.DuckDBPyConnection,
    path: Path | None,
    postgres_dsn: str | None,
    options: LoadOptions,
    progress: LoadProgress | None = None,
) -> list[LoadResult]:
    progress = progress or LoadProgress(enabled=False)
    results = []
    opts = replace(options, on_rows=progress.rows_done)
    if postgres_dsn:
        progress.start(f"postgres {TABLE}", None)
        source = PostgresTable(postgres_dsn, TABLE)
        results.append(load_table(con, SESSION_FEEDBACK, source, opts, line_column="insertion_order"))
    if path is not None:
        readable_file(path, "session feedback file")
        if is_sqlite(path):
            progress.start(path.name, None)
            source = SqliteTable(path, TABLE)
            checksum = file_checksum(path)
            results.append(
                load_table(con, SESSION_FEEDBACK, source, opts, line_column="insertion_order", checksum=checksum)
            )
        else:
            results.extend(file_loads(con, SESSION_FEEDBACK, [path], options, progress))
    return results
