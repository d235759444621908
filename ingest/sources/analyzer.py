"""Source 3: analyzer events, from `feedback.jsonl` files or an analyzer store folder.

A store folder is its active `feedback.jsonl` plus `archive/feedback-*.jsonl`;
Parquet files (the archive `feedback-analytics purge` writes) are read too.
Archives are read oldest first and the active file last; an event present in
both lands once (natural key `event_id`), the later copies count as duplicates.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb

from ingest.files import FolderListing, file_loads, folder_files, parquet_load
from ingest.load import LoadOptions, LoadResult
from warehouse.contracts import ANALYZER_EVENTS
from warehouse.errors import UserError


def store_files(path: Path) -> FolderListing:
    """The JSONL files of an analyzer path: a file, or a store folder (archive first); symlinks in a store
    folder are skipped, never followed (`folder_files`)."""
    if path.is_file():
        return FolderListing([path], [])
    if not path.is_dir():
        raise UserError(f"analyzer path {path} does not exist: pass a feedback.jsonl file or a feedback-store folder")
    top = folder_files(path, (".jsonl", ".parquet"))
    archive_dir = path / "archive"
    archive = (
        folder_files(archive_dir, (".jsonl",))
        if archive_dir.is_dir() and not archive_dir.is_symlink()
        else FolderListing([], [])
    )
    listing = FolderListing(archive.files + top.files, archive.symlinks + top.symlinks)
    if not listing.files:
        raise UserError(
            f"no analyzer files in {path}: expected feedback.jsonl and/or archive/feedback-YYYYMMDD.jsonl"
            + (f" ({len(listing.symlinks)} symlink(s) skipped: symlinks are not followed)" if listing.symlinks else "")
        )
    return listing


def ingest_analyzer(
    con: duckdb.DuckDBPyConnection, paths: list[Path], options: LoadOptions, progress: object = None
) -> list[LoadResult]:
    results: list[LoadResult] = []
    for path in paths:
        listing = store_files(path)
        for file in listing.files:
            if file.suffix == ".parquet":  # an archive written by `feedback-analytics purge`
                results.append(parquet_load(con, ANALYZER_EVENTS, file, options, progress))
            else:
                results.extend(file_loads(con, ANALYZER_EVENTS, [file], options, progress))
        if listing.symlinks:  # said with the store's last file
            results[-1] = replace(results[-1], symlinks_skipped=len(listing.symlinks))
    return results
