"""Files as input: checking them, telling their format, and landing each as one load."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import duckdb
import xxhash

from ingest.jsonl import file_checksum, read_blobs, read_jsonl
from ingest.load import Load, LoadOptions, LoadResult, already_loaded, load_batches
from ingest.progress import LoadProgress
from warehouse.contracts import Contract
from warehouse.errors import UserError
from warehouse.sql import sql_literal

SQLITE_MAGIC = b"SQLite format 3\x00"


def readable_file(path: Path, what: str) -> Path:
    if not path.exists():
        raise UserError(f"{what} {path} does not exist: check the path")
    if not path.is_file():
        raise UserError(f"{what} {path} is not a file")
    if not os.access(path, os.R_OK):
        raise UserError(f"{what} {path} is not readable: check its permissions (chmod +r)")
    return path


def is_sqlite(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def file_loads(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    files: list[Path],
    options: LoadOptions,
    progress: LoadProgress | None = None,
) -> list[LoadResult]:
    """Land each JSON-lines file as its own load; unchanged files are skipped."""
    progress = progress or LoadProgress(enabled=False)
    results = []
    for path in files:
        readable_file(path, f"{contract.source} file")
        path = path.resolve()
        size = path.stat().st_size
        checksum = file_checksum(path)
        if options.skip_unchanged and already_loaded(con, contract.table, checksum):
            results.append(LoadResult(contract.source, contract.table, str(path), skipped=True))
            continue
        progress.start(path.name, size)
        opts = replace(options, on_rows=progress.rows_done)
        load = Load(con, contract, str(path), opts, checksum=checksum, size_bytes=size)
        with load.transaction() as landed:  # the common case: a clean file, one streaming pass
            landed.keep = load.stream_clean_jsonl(str(path))
        if landed.keep:
            progress.bytes_read(size)
            results.append(load.result)
            continue
        batches = read_jsonl(path, on_bytes=progress.bytes_read)
        results.append(load_batches(con, contract, str(path), batches, opts, checksum=checksum, size_bytes=size))
    return results


def folder_checksum(files: list[Path]) -> str:
    """A cheap fingerprint of a blob folder: names, sizes and modification times."""
    digest = xxhash.xxh3_128()
    for path in files:
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return "files-xxh3_128:" + digest.hexdigest()


def blob_folder_load(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    folder: Path,
    options: LoadOptions,
    progress: LoadProgress | None = None,
) -> LoadResult:
    """Land a folder of JSON blobs (one record per *.json file, any depth) as one load."""
    files = sorted(p for p in folder.rglob("*.json") if p.is_file())
    if not files:
        raise UserError(f"no *.json blobs under {folder}: pass a folder of reaction artifacts or a JSONL export")
    progress = progress or LoadProgress(enabled=False)
    checksum = folder_checksum(files)
    if options.skip_unchanged and already_loaded(con, contract.table, checksum):
        return LoadResult(contract.source, contract.table, str(folder), skipped=True)
    progress.start(f"{folder.name}/ ({len(files)} blobs)", None)
    opts = replace(options, on_rows=progress.rows_done)
    size = sum(p.stat().st_size for p in files)
    return load_batches(con, contract, str(folder), read_blobs(files), opts, checksum=checksum, size_bytes=size)


def parquet_load(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    path: Path,
    options: LoadOptions,
    progress: LoadProgress | None = None,
) -> LoadResult:
    """Land a Parquet file (e.g. an archive written by `purge`): typed columns named as the contract's fields."""
    progress = progress or LoadProgress(enabled=False)
    readable_file(path, f"{contract.source} Parquet file")
    path = path.resolve()
    size = path.stat().st_size
    checksum = file_checksum(path)
    if options.skip_unchanged and already_loaded(con, contract.table, checksum):
        return LoadResult(contract.source, contract.table, str(path), skipped=True)
    progress.start(path.name, size)
    opts = replace(options, on_rows=progress.rows_done)
    uri = sql_literal(str(path))
    relation = f"(select *, null::bigint as _line, {uri} as _uri from read_parquet({uri}))"
    try:
        types = {row[0]: row[1] for row in con.execute(f"describe select * from read_parquet({uri})").fetchall()}
    except duckdb.Error as exc:
        raise UserError(f"{path} is not a readable Parquet file: {str(exc).splitlines()[0]}") from None
    load = Load(con, contract, str(path), opts, checksum=checksum, size_bytes=size)
    with load.transaction() as outcome:
        outcome.keep = load.stream_clean_typed(relation, types)
    if outcome.keep:
        return load.result
    table = con.sql(f"select *, row_number() over () as _line, {uri} as _uri from read_parquet({uri})").to_arrow_table()
    return load_batches(con, contract, str(path), [table], opts, typed=True, checksum=checksum, size_bytes=size)
