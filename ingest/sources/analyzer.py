"""Source 3: analyzer events, from `feedback.jsonl` files or an analyzer store folder.

A store folder is its active `feedback.jsonl` plus `archive/feedback-*.jsonl`;
Parquet files (the archive `feedback-analytics purge` writes) are read too.
Archives are read oldest first and the active file last; an event present in
both lands once (natural key `event_id`), the later copies count as duplicates.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ingest.files import file_loads, parquet_load
from ingest.load import LoadOptions, LoadResult
from warehouse.contracts import ANALYZER_EVENTS
from warehouse.errors import UserError


def store_files(path: Path) -> list[Path]:
    """The JSONL files of an analyzer path: a file, or a store folder (archive first)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UserError(f"analyzer path {path} does not exist: pass a feedback.jsonl file or a feedback-store folder")
    archive = sorted((path / "archive").glob("*.jsonl")) if (path / "archive").is_dir() else []
    active = sorted(p for p in [*path.glob("*.jsonl"), *path.glob("*.parquet")] if p.is_file())
    files = archive + active
    if not files:
        raise UserError(f"no analyzer files in {path}: expected feedback.jsonl and/or archive/feedback-YYYYMMDD.jsonl")
    return files


def ingest_analyzer(
    con: duckdb.DuckDBPyConnection, paths: list[Path], options: LoadOptions, progress: object = None
) -> list[LoadResult]:
    results = []
    for file in (f for p in paths for f in store_files(p)):
        if file.suffix == ".parquet":  # an archive written by `feedback-analytics purge`
            results.append(parquet_load(con, ANALYZER_EVENTS, file, options, progress))
        else:
            results.extend(file_loads(con, ANALYZER_EVENTS, [file], options, progress))
    return results
