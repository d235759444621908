"""Source 2: per-turn reactions, from a blob tree or a JSONL export (history) and the platform's index (authority).

Blobs: the conversation store's tree (`cb/tenants/<t>/projects/<p>/conversation/...`, any folder of *.json)
holds every message of a conversation; only reaction artifacts (`meta.kind = 'turn.log.reaction'`, or the
index tag in an export's envelope) are read, every other blob is counted as skipped and nothing of it is kept.
A record is an upstream blob (`conversation_store.put_message`: the reaction under `payload.reaction`), a bare
reaction artifact payload, or an envelope holding index fields and the `payload`.

Index: PostgreSQL `conv_messages` of every `kdcube_<tenant>_<project>` schema (`ingest.sources.reaction_index`):
which reactions are active.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ingest.files import blob_folder_load, file_loads
from ingest.load import LoadOptions, LoadResult
from ingest.progress import LoadProgress
from ingest.sources.reaction_index import ingest_reaction_index
from warehouse.contracts import TURN_REACTIONS
from warehouse.errors import UserError


def ingest_reactions(
    con: duckdb.DuckDBPyConnection,
    path: Path | None,
    postgres_dsn: str | None,
    options: LoadOptions,
    progress: LoadProgress | None = None,
    schemas: list[str] | None = None,
) -> list[LoadResult]:
    progress = progress or LoadProgress(enabled=False)
    results = []
    if postgres_dsn:
        results.extend(ingest_reaction_index(con, postgres_dsn, schemas, options, progress))
    if path is not None:
        if path.is_dir():
            results.append(blob_folder_load(con, TURN_REACTIONS, path, options, progress))
        elif path.exists():
            results.extend(file_loads(con, TURN_REACTIONS, [path], options, progress))
        else:
            raise UserError(f"reactions path {path} does not exist: pass a folder of JSON blobs or a JSONL export")
    return results
