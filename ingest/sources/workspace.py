"""Source 4: the agent workspace's `feedback`, `sessions` and `eval_runs`, as JSONL exports or PostgreSQL tables.

A folder holds `feedback*.jsonl`, `sessions*.jsonl` and `eval_runs*.jsonl`; a
single file is recognised by the same name prefixes. `eval_runs` is optional
upstream, so a database without it is fine.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb

from ingest.databases import PostgresTable, load_table
from ingest.files import file_loads, folder_files
from ingest.load import LoadOptions, LoadResult
from ingest.progress import LoadProgress
from warehouse.contracts import WORKSPACE_CONTRACTS, Contract
from warehouse.errors import UserError


def _entity_of(path: Path) -> Contract:
    for prefix in ("eval_runs", "feedback", "sessions"):  # eval_runs before any shorter prefix
        if path.name.startswith(prefix):
            return WORKSPACE_CONTRACTS[prefix]
    raise UserError(
        f"cannot tell which workspace table {path.name} holds: name it feedback*.jsonl, "
        "sessions*.jsonl or eval_runs*.jsonl"
    )


def workspace_files(path: Path) -> tuple[list[tuple[Contract, Path]], int]:
    """The exports of a workspace path (a file, or a folder of them) and how many symlinks in the folder were
    skipped, never followed (`folder_files`)."""
    if path.is_file():
        return [(_entity_of(path), path)], 0
    if not path.is_dir():
        raise UserError(f"workspace path {path} does not exist: pass a folder of JSONL exports or a file")
    listing = folder_files(path, (".jsonl",))
    if not listing.files:
        raise UserError(
            f"no *.jsonl files in {path}: expected feedback.jsonl, sessions.jsonl, eval_runs.jsonl"
            + (f" ({len(listing.symlinks)} symlink(s) skipped: symlinks are not followed)" if listing.symlinks else "")
        )
    return [(_entity_of(p), p) for p in listing.files], len(listing.symlinks)


def ingest_workspace(
    con: duckdb.DuckDBPyConnection,
    path: Path | None,
    postgres_dsn: str | None,
    options: LoadOptions,
    progress: LoadProgress | None = None,
) -> list[LoadResult]:
    progress = progress or LoadProgress(enabled=False)
    results = []
    if postgres_dsn:
        for table, contract in WORKSPACE_CONTRACTS.items():
            source = PostgresTable(postgres_dsn, table)
            if table == "eval_runs" and not source.exists():
                continue
            progress.start(f"postgres {table}", None)
            opts = replace(options, on_rows=progress.rows_done)
            results.append(load_table(con, contract, source, opts))
    if path is not None:
        files, symlinks = workspace_files(path)
        for contract, file in files:
            results.extend(file_loads(con, contract, [file], options, progress))
        if symlinks:  # said with the folder's last file
            results[-1] = replace(results[-1], symlinks_skipped=symlinks)
    return results
