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
from ingest.files import file_loads
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


def workspace_files(path: Path) -> list[tuple[Contract, Path]]:
    if path.is_file():
        return [(_entity_of(path), path)]
    if not path.is_dir():
        raise UserError(f"workspace path {path} does not exist: pass a folder of JSONL exports or a file")
    files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
    if not files:
        raise UserError(f"no *.jsonl files in {path}: expected feedback.jsonl, sessions.jsonl, eval_runs.jsonl")
    return [(_entity_of(p), p) for p in files]


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
        for contract, file in workspace_files(path):
            results.extend(file_loads(con, contract, [file], options, progress))
    return results
