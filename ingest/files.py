"""Files as input: checking them, telling their format, and landing each as one load."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb
import xxhash

from ingest.bad_lines import land_setting_bad_lines_apart
from ingest.jsonl import (
    FileScan,
    Unshaped,
    copy_range,
    file_checksum,
    prefix_fingerprint,
    read_blobs,
    read_jsonl,
    scan_lines,
)
from ingest.line_limits import OverLimitLine, blob_over_limits, find_over_limits, write_without
from ingest.load import Load, LoadOptions, LoadResult, ReadRange, already_loaded, last_reads, load_batches
from ingest.progress import LoadProgress
from warehouse.contracts import Contract
from warehouse.errors import UserError
from warehouse.pause_points import pause_point
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


@dataclass(frozen=True)
class FolderListing:
    """The files of a source folder, and the symlinks in it that were not followed."""

    files: list[Path]
    symlinks: list[Path]


def folder_files(folder: Path, suffixes: tuple[str, ...], *, recursive: bool = False) -> FolderListing:
    """The regular files of `folder` whose names end with one of `suffixes` (with `recursive`, in every
    subfolder too), sorted. A symlink, to a file or a folder, inside the folder or out of it, is never
    followed: it is listed in `symlinks` for the summary and nothing of its target is read. (The folder given
    itself may be a symlink: the user named it.)"""
    files: list[Path] = []
    symlinks: list[Path] = []
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                path = Path(entry.path)
                if entry.is_symlink():
                    symlinks.append(path)
                elif entry.is_dir(follow_symlinks=False):
                    if recursive:
                        pending.append(path)
                elif entry.is_file(follow_symlinks=False) and entry.name.endswith(suffixes):
                    files.append(path)
    return FolderListing(sorted(files), sorted(symlinks))


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
    """Land each JSON-lines file as its own load: unchanged files are skipped, grown ones read from where the
    last load stopped (`ReadRange`; a renamed or copied file from where its original stopped), others read
    whole."""
    progress = progress or LoadProgress(enabled=False)
    results = []
    for path in files:
        readable_file(path, f"{contract.source} file")
        path = path.resolve()
        size = path.stat().st_size  # what this load reads: bytes appended meanwhile wait for the next one
        before = _read_before(con, contract, path, size) if options.skip_unchanged else None
        if before:
            if size == before.size_bytes:
                results.append(LoadResult(contract.source, contract.table, str(path), skipped=True))
            else:
                results.append(_appended_load(con, contract, path, before, size, options, progress))
            continue
        scan = scan_lines(path, end=size, limits=options.limits)
        if options.skip_unchanged and already_loaded(con, contract.table, scan.checksum):
            results.append(LoadResult(contract.source, contract.table, str(path), skipped=True))
            continue
        span = ReadRange(0, size, scan.complete_to, scan.complete_lines, prefix_fingerprint(path, size))
        results.append(_read(con, contract, path, scan, span, options, progress))
    return results


def _read_before(con: duckdb.DuckDBPyConnection, contract: Contract, path: Path, size: int) -> ReadRange | None:
    """The last read of this file whose fingerprint still matches its first bytes (an append since, or no
    change), else one of another file (a rotation or copy of it); None: read it whole."""
    for before in last_reads(con, contract.table, str(path), size):
        if prefix_fingerprint(path, before.size_bytes) == before.prefix_fingerprint:
            return before
    return None


def _appended_load(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    path: Path,
    before: ReadRange,
    size: int,
    options: LoadOptions,
    progress: LoadProgress,
) -> LoadResult:
    """Read only what was appended since the last load: from the end of its last complete line (a line it
    read unfinished is read again) to the current size, lines numbered on from there."""
    scan = scan_lines(path, start=before.end_offset, end=size, limits=options.limits)
    span = ReadRange(
        before.end_offset,
        size,
        scan.complete_to,
        before.end_line + scan.complete_lines,
        prefix_fingerprint(path, size),
    )
    return _read(con, contract, path, scan, span, options, progress, first_line=before.end_line + 1)


def _read(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    path: Path,
    scan: FileScan,
    span: ReadRange,
    options: LoadOptions,
    progress: LoadProgress,
    first_line: int = 1,
) -> LoadResult:
    """Land bytes [span.start_offset, span.size_bytes) of a JSON-lines file as one load (`_read_bounded`);
    when a line is over the limits (`ingest.line_limits`), from a copy with a blank line in its place, the
    line quarantined in the same load."""
    if not scan.over_limits:
        return _read_bounded(
            con, contract, path, path, scan.unshaped, scan.checksum, span, options, progress, [], first_line
        )
    over = find_over_limits(path, span.start_offset, span.size_bytes, first_line, options.limits)
    with tempfile.TemporaryDirectory(prefix="feedback-bounded-") as folder:
        copy = Path(folder) / path.name
        write_without(path, span.start_offset, span.size_bytes, over, copy)
        unshaped = scan_lines(copy).unshaped
        return _read_bounded(
            con, contract, copy, path, unshaped, scan.checksum, span, options, progress, over, first_line
        )


def _read_bounded(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    source: Path,
    path: Path,
    unshaped: Unshaped | None,
    checksum: str,
    span: ReadRange,
    options: LoadOptions,
    progress: LoadProgress,
    over: list[OverLimitLine],
    first_line: int,
) -> LoadResult:
    """Land the lines of `path` read from `source` (the file itself, bytes [span.start_offset,
    span.size_bytes); or a copy of them, all of it) as one load: in one streaming pass of DuckDB's reader when
    clean; with a few bad lines, DuckDB's reader for the good ones and the line-by-line path for the bad ones
    (`ingest.bad_lines`); batch by batch, line by line, only when the two readers disagree on what a line is
    or most lines are bad."""
    length = span.size_bytes - span.start_offset
    progress.start(path.name, length)
    opts = replace(options, on_rows=progress.rows_done)
    read_span = span if source == path else replace(span, start_offset=0, size_bytes=source.stat().st_size)

    def new_load() -> Load:
        load = Load(con, contract, str(path), opts, checksum=checksum, size_bytes=span.size_bytes, read_range=span)
        load.over_limits = over
        return load

    def unchanged(part: Path) -> None:
        """DuckDB reads a whole file as it is then: if it grew since `stat`, the rows beyond the bytes this load
        records would be read twice (here and by the next load); read a copy of the bytes instead."""
        if part == path and path.stat().st_size != span.size_bytes:
            raise _GrewMeanwhile

    pause_point("file-read-starts")  # the file's size is taken: a test appends here
    for copy in (False, True):
        try:
            with _part_of(source, read_span, copy=copy) as part:
                load = new_load()
                with load.transaction() as landed:  # the common case: clean, one streaming pass
                    landed.keep = load.stream_clean_jsonl(str(part), uri=str(path))
                    unchanged(part)
            break
        except _GrewMeanwhile:
            continue
    if not landed.keep:  # bad lines: set apart, DuckDB's reader for the rest (only bytes up to the size taken)
        apart = land_setting_bad_lines_apart(
            con,
            contract,
            source,
            new_load,
            start=read_span.start_offset,
            end=read_span.size_bytes,
            first_line=first_line,
            unshaped=unshaped,
            contract_breach=load.contract_breach,
            uri=str(path),
        )
        load, landed.keep = apart or load, apart is not None
    if landed.keep:
        progress.bytes_read(length)
        return load.result
    batches = read_jsonl(
        source,
        on_bytes=progress.bytes_read,
        start=read_span.start_offset,
        end=read_span.size_bytes,
        first_line=first_line,
        uri=str(path),
    )
    return load_batches(
        con,
        contract,
        str(path),
        batches,
        opts,
        checksum=checksum,
        size_bytes=span.size_bytes,
        read_range=span,
        over_limits=over,
    )


class _GrewMeanwhile(Exception):
    """The file grew while DuckDB read it whole (its transaction rolls back; the bytes are copied instead)."""


@contextmanager
def _part_of(path: Path, span: ReadRange, *, copy: bool = False) -> Iterator[Path]:
    """The file itself when the whole of it is read (as it was at `stat`), else (or with `copy`) its bytes
    [start_offset, size_bytes) copied to a temporary file (the appended part: small next to the file)."""
    if not copy and span.start_offset == 0 and span.size_bytes == path.stat().st_size:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="feedback-append-") as folder:
        part = Path(folder) / path.name
        copy_range(path, span.start_offset, span.size_bytes, part)
        yield part


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
    """Land a folder of JSON blobs (one record per *.json file, any depth) as one load (symlinks in it are
    skipped: `folder_files`)."""
    listing = folder_files(folder, (".json",), recursive=True)
    files = listing.files
    if not files:
        raise UserError(
            f"no *.json blobs under {folder}: pass a folder of reaction artifacts or a JSONL export"
            + (f" ({len(listing.symlinks)} symlink(s) skipped: symlinks are not followed)" if listing.symlinks else "")
        )
    progress = progress or LoadProgress(enabled=False)
    checksum = folder_checksum(files)
    if options.skip_unchanged and already_loaded(con, contract.table, checksum):
        return LoadResult(
            contract.source, contract.table, str(folder), skipped=True, symlinks_skipped=len(listing.symlinks)
        )
    progress.start(f"{folder.name}/ ({len(files)} blobs)", None)
    opts = replace(options, on_rows=progress.rows_done)
    size = sum(p.stat().st_size for p in files)
    # a blob over max_line_bytes is quarantined unparsed (reason, length, sha256), like a long line
    over = {p: blob_over_limits(p, str(p.relative_to(folder)), options.limits) for p in files}
    readable = [p for p in files if over[p] is None]
    found = [line for line in over.values() if line is not None]
    result = load_batches(
        con, contract, str(folder), read_blobs(readable), opts, checksum=checksum, size_bytes=size, over_limits=found
    )
    return replace(result, symlinks_skipped=len(listing.symlinks))


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
