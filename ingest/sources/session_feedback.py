"""Source 1: end-of-session thumbs, from the legacy SQLite file, a JSONL export or PostgreSQL.

Only the contract's fields are read: the `value` column (the record again, as
JSON) is never selected, so no free text beyond the contract is ever stored.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb

from ingest.contracts import SESSION_FEEDBACK
from ingest.databases import PostgresTable, read_sqlite_table, with_lineage
from ingest.files import file_loads, is_sqlite, readable_file
from ingest.load import LoadOptions, LoadResult, load_batches
from ingest.progress import LoadProgress

TABLE = "session_feedback"
COLUMNS = [f.name for f in SESSION_FEEDBACK.fields]


def ingest_session_feedback(
    con: duckdb.DuckDBPyConnection,
    path: Path | None,
    postgres_dsn: str | None,
    options: LoadOptions,
    progress: LoadProgress | None = None,
) -> list[LoadResult]:
    progress = progress or LoadProgress(enabled=False)
    results = []
    if postgres_dsn:
        source = PostgresTable(postgres_dsn, TABLE)
        progress.start(f"postgres {TABLE}", None)
        table = with_lineage(source.fetch({c: c for c in COLUMNS}), source.uri, "insertion_order")
        opts = replace(options, on_rows=progress.rows_done)
        results.append(load_batches(con, SESSION_FEEDBACK, source.uri, [table], opts, typed=True))
    if path is not None:
        readable_file(path, "session feedback file")
        if is_sqlite(path):
            progress.start(path.name, None)
            table = with_lineage(read_sqlite_table(path, TABLE, COLUMNS), str(path), "insertion_order")
            opts = replace(options, on_rows=progress.rows_done)
            results.append(load_batches(con, SESSION_FEEDBACK, str(path), [table], opts, typed=True))
        else:
            results.extend(file_loads(con, SESSION_FEEDBACK, [path], options, progress))
    return results
