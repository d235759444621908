"""Source 2: per-turn reactions, from a folder of JSON blobs, a JSONL export or PostgreSQL `conv_messages`.

A record is either a bare reaction artifact payload or an envelope holding the
index row's fields (tenant, project, user_id, tags) and the `payload`. Rows
indexed under the historical tag `kind:turn.log.reaction` are reactions too.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb
import pyarrow as pa

from ingest.databases import PostgresTable
from ingest.files import blob_folder_load, file_loads
from ingest.jsonl import BATCH_SCHEMA
from ingest.load import LoadOptions, LoadResult, load_batches
from ingest.progress import LoadProgress
from warehouse.contracts import TURN_REACTIONS
from warehouse.errors import UserError
from warehouse.sql import sql_literal

TABLE = "conv_messages"
REACTION_TAGS = ("artifact:turn.log.reaction", "kind:turn.log.reaction")
# envelope field -> candidate conv_messages columns
ENVELOPE_COLUMNS = {
    "id": ("id",),
    "tenant": ("tenant", "tenant_id"),
    "project": ("project", "project_id"),
    "user_id": ("user_id",),
    "conversation_id": ("conversation_id",),
    "turn_id": ("turn_id",),
    "ts": ("ts",),
    "tags": ("tags",),
    "payload": ("payload",),
}


def _postgres_envelopes(con: duckdb.DuckDBPyConnection, source: PostgresTable) -> pa.Table:
    """conv_messages reaction rows as envelope JSON text, one batch for the JSON load."""
    available = source.columns()
    if "payload" not in available:
        raise UserError(f"{TABLE} has no payload column: the reaction artifacts' JSON must be in `payload`")
    wanted = {}
    for field, candidates in ENVELOPE_COLUMNS.items():
        column = next((c for c in candidates if c in available), None)
        if column:
            wanted[field] = column
    tag_filter = ", ".join(f"'{t}'" for t in REACTION_TAGS)
    conditions = []
    if "role" in available:
        conditions.append("role = 'artifact'")
    if "tags" in available:  # the legacy tag counts too
        conditions.append(f"tags && array[{tag_filter}]::text[]")
    where = ("where " + " and ".join(conditions)) if conditions else ""
    rows = source.fetch(wanted, where)
    con.register("_pg_rows", rows)
    try:
        pairs = ", ".join(f"'{f}', " + ("json(payload)" if f == "payload" else f'"{f}"') for f in wanted if f != "id")
        order = "id" if "id" in wanted else "1"
        envelopes = con.sql(
            f"""
            select row_number() over (order by {order})::bigint as _line, {sql_literal(source.uri)} as _uri,
                   json_object({pairs})::varchar as _raw, true as _utf8_ok, null::blob as _raw_bytes
            from _pg_rows
            """
        ).to_arrow_table()
    finally:
        con.unregister("_pg_rows")
    return envelopes.cast(BATCH_SCHEMA)


def ingest_reactions(
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
        batch = _postgres_envelopes(con, source)
        opts = replace(options, on_rows=progress.rows_done)
        results.append(load_batches(con, TURN_REACTIONS, source.uri, [batch], opts))
    if path is not None:
        if path.is_dir():
            results.append(blob_folder_load(con, TURN_REACTIONS, path, options, progress))
        elif path.exists():
            results.extend(file_loads(con, TURN_REACTIONS, [path], options, progress))
        else:
            raise UserError(f"reactions path {path} does not exist: pass a folder of JSON blobs or a JSONL export")
    return results
