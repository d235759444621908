"""Step 3 of `forget` (operations/erasure.py): no freed or stale block of the warehouse file keeps erased bytes.

DuckDB leaves a deleted row's bytes in place: in its row group (a delete only
marks it) until the table is rewritten, and in the blocks a checkpoint frees
until they are reused. `rewrite_warehouse` therefore:

1. rewrites, in one transaction, the tables that may hold erased bytes: the
   ones the erasure changed (`changed`), and every table that stores more rows
   than it holds (deleted rows still on disk, such as a model an incremental
   build trimmed); every other table is left as it is, block for block;
2. checkpoints, and computes the blocks in use: every segment's blocks
   (`pragma_storage_info` of every table) and the metadata blocks
   (`pragma_metadata_info`), which must add up to the used blocks of
   `pragma database_size`, and no block that held a rewritten table before
   may still be in use (DuckDB packs small segments of several tables into
   one block);
3. with the write lock still held, overwrites every other block of the file
   with zeros and fsyncs it (DuckDB never reads a free block: it writes one
   whole before using it again), and the free sub-blocks of every metadata
   block in use, writing the block's checksum again;
4. reopens the file and checks that it holds what it held (every object and
   every table's row count).

So it costs what the changed tables cost, not the whole file. When a check of
step 2 fails (an index, whose blocks the pragmas do not list, or a block
shared with a table that was not rewritten), it falls back to copying the
whole database into a new file renamed over it (`rewrite_whole_file`) and says
why, naming the place (block, and the table or metadata sub-block) where an
id's bytes were found.

The metadata: a segment's statistics keep a string column's smallest and
largest values (all of a short id, such as 'alice' at bench scale 100), so the
sub-blocks of the metadata a checkpoint replaces hold erased ids. Step 2's
checkpoints write all metadata afresh (`experimental_metadata_reuse` off:
with reuse, a table left as it was keeps its row groups' metadata in place,
and the sub-block it shares with a rewritten table's old metadata keeps that
behind it, in use); DuckDB zeroes the unused end of a sub-block it writes, and
step 3 zeroes the sub-blocks left free.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from warehouse.connection import connect
from warehouse.durable import fsync
from warehouse.errors import UserError
from warehouse.sql import quote, sql_literal

REWRITE_SUFFIX = ".forget-rewrite"  # the new copy of the warehouse, beside it, until it is renamed over it
HEADER_BYTES = 3 * 4096  # DuckDB's main header and its two database headers come before block 0


@dataclass
class Rewrite:
    """The physical rewrite of the warehouse file."""

    path: Path
    seconds: float
    bytes_before: int
    bytes_after: int
    tables: list[str] | None = None  # the tables rewritten; None: the whole file was copied
    bytes_zeroed: int = 0  # the free blocks overwritten with zeros
    fallback: str | None = None  # why the whole file was copied


# -- the whole-file rewrite (the fallback) ----------------------------------------------------------------------
def _inventory(con: duckdb.DuckDBPyConnection, database: str) -> dict[str, list[Any]]:
    """What a database holds: its objects by name, and every table's row count."""
    here = f"database_name = {sql_literal(database)}"
    tables = con.execute(f"select schema_name, table_name from duckdb_tables() where {here} order by all").fetchall()
    return {
        "schemas": con.execute(f"select schema_name from duckdb_schemas() where {here} order by all").fetchall(),
        "tables": [
            (
                schema,
                table,
                con.execute(f"select count(*) from {quote(database)}.{quote(schema)}.{quote(table)}").fetchone(),
            )
            for schema, table in tables
        ],
        "columns": con.execute(
            f"select schema_name, table_name, column_name, data_type from duckdb_columns() where {here} order by all"
        ).fetchall(),
        "views": con.execute(
            f"select schema_name, view_name from duckdb_views() where {here} and not internal order by all"
        ).fetchall(),
        "sequences": con.execute(
            f"select schema_name, sequence_name from duckdb_sequences() where {here} order by all"
        ).fetchall(),
        "macros": con.execute(
            f"select schema_name, function_name from duckdb_functions() where {here} and not internal "
            "and function_type in ('macro', 'table_macro') order by all"
        ).fetchall(),
        "indexes": con.execute(
            f"select schema_name, index_name from duckdb_indexes() where {here} order by all"
        ).fetchall(),
    }


def _remove(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def rewrite_whole_file(db: Path, reason: str) -> Rewrite:
    """The fallback of step 3 (`reason`): copy the whole database into a new file and rename it over the
    original, under its write lock.

    The original stays open (locked) until the new file has replaced it, so no
    other writer slips in between; a reader that opens the path afterwards gets
    the new file. A check failed or an error leaves the original as it was.
    """
    started = time.perf_counter()
    target = db.resolve()
    partial = target.with_name(target.name + REWRITE_SUFFIX)
    partial_wal = partial.with_name(partial.name + ".wal")
    con = connect(db)  # waits out a reader or another writer, then holds the file
    try:
        _remove(partial, partial_wal)  # a killed rewrite's copy
        con.execute("checkpoint")  # the WAL into the file: closing the original later writes nothing
        bytes_before = target.stat().st_size
        (database,) = con.execute("select current_database()").fetchone()
        alias = f"forget_rewrite_{uuid.uuid4().hex[:12]}"
        con.execute(f"attach {sql_literal(str(partial))} as {quote(alias)}")
        try:
            con.execute(f"copy from database {quote(database)} to {quote(alias)}")
            original, copy = _inventory(con, database), _inventory(con, alias)
        finally:
            con.execute(f"detach {quote(alias)}")  # checkpoints the copy: no WAL left beside it
        if copy != original:
            differing = [part for part in original if original[part] != copy.get(part)]
            raise UserError(
                f"the rewritten copy of {db} differs from it ({', '.join(differing)}): the warehouse was left as it "
                "was (the rows are erased, but their bytes may remain); report this, then run forget again"
            )
        if partial_wal.exists():
            raise UserError(f"the rewritten copy of {db} left a WAL; the warehouse was left as it was")
        shutil.copymode(target, partial)
        fsync(partial)
        os.replace(partial, target)
        fsync(target.parent)
    except BaseException:
        _remove(partial, partial_wal)
        raise
    finally:
        con.close()
    return Rewrite(db, time.perf_counter() - started, bytes_before, target.stat().st_size, fallback=reason)


# -- the partial rewrite ----------------------------------------------------------------------------------------
def _tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    return [
        (schema, table)
        for schema, table in con.execute(
            "select schema_name, table_name from duckdb_tables() where database_name = current_database() "
            "and not temporary order by all"
        ).fetchall()
    ]


def _name(schema: str, table: str) -> str:
    return f"{quote(schema)}.{quote(table)}"


def _storage(con: duckdb.DuckDBPyConnection, schema: str, table: str, what: str) -> Any:
    return con.execute(f"select {what} from pragma_storage_info(?)", [f"{schema}.{table}"]).fetchall()


def _stored_rows(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> int:
    """Rows the table stores on disk, deleted ones included (each row group's rows, from its top-level columns)."""
    per_group = con.execute(
        "select row_group_id, column_path, sum(count) from pragma_storage_info(?) "
        "where regexp_matches(column_path, '^\\[\\d+(, 0)?\\]$') group by all",
        [f"{schema}.{table}"],
    ).fetchall()
    groups: dict[int, int] = {}
    for group, _path, rows in per_group:
        groups[group] = max(groups.get(group, 0), int(rows))
    return sum(groups.values())


# A block's segments: (schema, table, row group, column path, segment, offset in the block).
BlockMap = dict[int, frozenset[tuple[Any, ...]]]


def block_map(con: duckdb.DuckDBPyConnection) -> BlockMap:
    """Every block the tables' segments are in, with the segments in it (after a checkpoint)."""
    blocks: dict[int, set[tuple[Any, ...]]] = {}
    for schema, table in _tables(con):
        segments = con.execute(
            "select row_group_id, column_path, segment_id, block_id, block_offset, additional_block_ids "
            "from pragma_storage_info(?) where block_id >= 0",
            [f"{schema}.{table}"],
        ).fetchall()
        for group, path, segment, block, offset, more in segments:
            for number in (block, *(more or [])):
                blocks.setdefault(number, set()).add((schema, table, group, path, segment, offset))
    return {number: frozenset(segments) for number, segments in blocks.items()}


def snapshot(db: Path) -> BlockMap:
    """The block map of the warehouse file before an erasure (checkpointed first)."""
    con = connect(db)
    try:
        con.execute("checkpoint")
        return block_map(con)
    finally:
        con.close()


def _tables_to_rewrite(con: duckdb.DuckDBPyConnection, changed: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The tables the erasure changed, and those storing more rows than they hold (deleted rows still on disk)."""
    found = []
    for schema, table in _tables(con):
        (live,) = con.execute(f"select count(*) from {_name(schema, table)}").fetchone()
        if (schema, table) in changed or _stored_rows(con, schema, table) > live:
            found.append((schema, table))
    return found


def _rewrite_tables(con: duckdb.DuckDBPyConnection, tables: list[tuple[str, str]]) -> None:
    """Every row of `tables` written again, in order, in one transaction; then a checkpoint drops the old ones."""
    con.execute("begin transaction")
    try:
        for index, (schema, table) in enumerate(tables):
            keep = f"temp.main.forget_keep_{index}"
            con.execute(f"create temp table {keep.removeprefix('temp.main.')} as select * from {_name(schema, table)}")
            con.execute(f"delete from {_name(schema, table)}")
            con.execute(f"insert into {_name(schema, table)} select * from {keep}")
            con.execute(f"drop table {keep}")
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("checkpoint")


def _kept_in_changed_blocks(before: BlockMap, now: BlockMap, rewritten: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The tables with a segment that stayed in place in a block whose other segments changed: a segment that left
    it may have left its bytes there. (A block whose segments are all new was written whole; a rewritten
    table's segments are all new.)"""
    found = set()
    for number, segments in now.items():
        kept = {s for s in segments & before.get(number, frozenset()) if s[:2] not in rewritten}
        if kept and segments != before[number]:
            found |= {segment[:2] for segment in kept}
    return found


def _used_blocks(con: duckdb.DuckDBPyConnection, now: BlockMap) -> tuple[str | None, set[int], int]:
    """(a reason the free blocks cannot be told apart or None, the blocks in use, the block size)."""
    (block_size, total, used_count, free_count) = con.execute(
        "select block_size, total_blocks, used_blocks, free_blocks from pragma_database_size()"
    ).fetchone()
    used = set(now) | {row[0] for row in con.execute("select block_id from pragma_metadata_info()").fetchall()}
    if con.execute("select count(*) from duckdb_indexes() where database_name = current_database()").fetchone()[0]:
        return "the warehouse has an index (the pragmas do not list its blocks)", used, block_size
    if len(used) != used_count or total != used_count + free_count or any(number >= total for number in used):
        counted = f"{len(used)} blocks found in use where DuckDB counts {used_count} of {total}"
        return f"{counted} (an index's or a constraint's blocks are not listed)", used, block_size
    return None, used, block_size


def _zero_free_blocks(path: Path, used: set[int], block_size: int) -> tuple[int, int]:
    """Overwrite every block not in `used` with zeros; (the open descriptor, the bytes written). The caller holds
    DuckDB's lock and closes the descriptor only after DuckDB (closing another descriptor of the file would drop
    the lock)."""
    size = path.stat().st_size
    if (size - HEADER_BYTES) % block_size:
        raise UserError(f"{path}: {size} bytes is no whole number of blocks; the warehouse was left as it was")
    zeros, written = bytes(block_size), 0
    fd = os.open(path, os.O_RDWR)
    for number in range((size - HEADER_BYTES) // block_size):
        if number not in used:
            written += os.pwrite(fd, zeros, HEADER_BYTES + number * block_size)
    os.fsync(fd)
    return fd, written


# A metadata block: (block id, its free sub-blocks), from pragma_metadata_info.
Metadata = list[tuple[int, list[int]]]
CHECKSUM_BYTES = 8  # a block starts with the checksum of the rest of it
METADATA_SUB_BLOCKS = 64  # DuckDB's MetadataManager splits a metadata block into 64 sub-blocks
_CHECKSUM_FACTOR = np.uint64(0xBF58476D1CE4E5B9)


def _metadata(con: duckdb.DuckDBPyConnection) -> Metadata:
    rows = con.execute("select block_id, free_list from pragma_metadata_info() order by block_id").fetchall()
    return [(int(block), [int(sub) for sub in free]) for block, free in rows]


def _sub_block_bytes(block_size: int) -> int:
    """A metadata sub-block's size: the block's usable bytes / 64, down to a multiple of 8 (GetMetadataBlockSize)."""
    return (block_size - CHECKSUM_BYTES) // METADATA_SUB_BLOCKS // 8 * 8


def _checksum(body: bytes) -> int:
    """DuckDB's block checksum (Checksum in checksum.cpp): 5381 xor, over each 8-byte word, word * factor."""
    words = np.frombuffer(body, dtype="<u8")
    with np.errstate(over="ignore"):
        return int(np.bitwise_xor.reduce(words * _CHECKSUM_FACTOR) ^ np.uint64(5381))


def _zero_free_metadata(fd: int, metadata: Metadata, block_size: int) -> tuple[str | None, int]:
    """Overwrite the free sub-blocks of every metadata block in use with zeros and write the block's checksum again
    (a checkpoint frees the sub-blocks of the metadata it replaces, with the old segments' statistics, such as a
    string column's smallest value, in them); (a reason it cannot be done or None, the bytes zeroed). A block whose
    stored checksum is not the one computed is left as it was, with the reason."""
    sub = _sub_block_bytes(block_size)
    if (block_size - CHECKSUM_BYTES) % 8:
        return f"a block of {block_size} bytes does not hold whole 8-byte words", 0
    blocks = []
    for number, free in metadata:
        offset = HEADER_BYTES + number * block_size
        block = bytearray(os.pread(fd, block_size, offset))
        if len(block) != block_size or int.from_bytes(block[:CHECKSUM_BYTES], "little") != _checksum(
            bytes(block[CHECKSUM_BYTES:])
        ):
            return f"metadata block {number} does not carry the checksum DuckDB computes (another block format)", 0
        blocks.append((number, offset, block, free))
    written = 0
    for _number, offset, block, free in blocks:
        if not free:
            continue
        for index in free:
            start = CHECKSUM_BYTES + index * sub
            block[start : start + sub] = bytes(sub)
            written += sub
        block[:CHECKSUM_BYTES] = _checksum(bytes(block[CHECKSUM_BYTES:])).to_bytes(CHECKSUM_BYTES, "little")
        os.pwrite(fd, bytes(block), offset)
    os.fsync(fd)
    return None, written


def _first_hit(path: Path, needles: list[bytes]) -> int | None:
    """The offset of the first of `needles` in the file's bytes, or None: one pass with one pattern of them all, in
    pieces that overlap by the longest needle."""
    if not needles:
        return None
    pattern = re.compile(b"|".join(re.escape(needle) for needle in sorted(needles, key=len, reverse=True)))
    overlap = max(len(needle) for needle in needles)
    tail, start = b"", 0  # start: the file offset of tail's first byte
    with path.open("rb") as file:
        while piece := file.read(1 << 24):
            window = tail + piece
            if found := pattern.search(window):
                return start + found.start()
            tail = window[-overlap:]
            start += len(window) - len(tail)
    return None


def _place(offset: int, now: BlockMap, metadata: Metadata, block_size: int) -> str:
    """Where a byte of the warehouse file is: the headers, a table's segment, metadata (a sub-block in use or free),
    or a free block."""
    if offset < HEADER_BYTES:
        return f"byte {offset:,}: the file's headers"
    number, within = divmod(offset - HEADER_BYTES, block_size)
    where = f"byte {offset:,}, block {number}"
    free = dict(metadata).get(number)
    if free is not None:
        index = max(within - CHECKSUM_BYTES, 0) // _sub_block_bytes(block_size)
        state = "free" if index in free else "in use"
        return f"{where}: metadata, sub-block {index} ({state})"
    if number in now:
        tables = sorted({f"{schema}.{table} column {path}" for schema, table, _g, path, *_ in now[number]})
        return f"{where}: a segment of {', '.join(tables[:3])}"
    return f"{where}: a free block"


def rewrite_warehouse(db: Path, changed: set[tuple[str, str]], before: BlockMap, needles: list[bytes]) -> Rewrite:
    """Step 3: rewrite the tables that may hold erased bytes and zero the free blocks (the module note); `before`
    is the block map taken before the erasure, `needles` the ids' stored forms, which must be absent afterwards.
    The whole file is copied when this cannot be done safely."""
    started = time.perf_counter()
    target = db.resolve()
    bytes_before = target.stat().st_size
    descriptor, zeroed, rewritten = None, 0, []
    metadata: Metadata = []
    con = connect(db)
    try:
        # Every checkpoint of the rewrite writes all metadata afresh: with reuse, a table left as it was keeps its
        # row groups' metadata where it was, and the sub-block it shares with a rewritten table keeps that table's
        # old statistics (an erased id as a column's smallest value) behind it, in use; the data blocks stay reused.
        con.execute("set experimental_metadata_reuse = false")
        con.execute("checkpoint")
        (database,) = con.execute("select current_database()").fetchone()
        inventory = _inventory(con, database)
        tables = _tables_to_rewrite(con, changed)
        reason: str | None = None
        for _round in range(4):  # the tables sharing a changed block with a rewritten one go too: normally 1-2
            _rewrite_tables(con, tables)
            rewritten += tables
            now = block_map(con)
            tables = sorted(_kept_in_changed_blocks(before, now, set(rewritten)))
            if not tables:
                break
        else:
            reason = "the blocks shared with rewritten tables kept changing"
        if not reason:
            reason, used, block_size = _used_blocks(con, now)
        if not reason:
            metadata = _metadata(con)
            descriptor, zeroed = _zero_free_blocks(target, used, block_size)
            reason, zeroed_metadata = _zero_free_metadata(descriptor, metadata, block_size)
            zeroed += zeroed_metadata
    finally:
        try:
            con.execute("reset experimental_metadata_reuse")  # the database instance may outlive this connection
        finally:
            con.close()
        if descriptor is not None:
            os.close(descriptor)
    if not reason and (hit := _first_hit(target, needles)) is not None:
        where = _place(hit, now, metadata, block_size)
        reason = f"an id's bytes were still in the file after the partial rewrite ({where})"
    if reason:
        return rewrite_whole_file(db, reason)
    con = connect(db, read_only=True)
    try:
        after = _inventory(con, database)
    finally:
        con.close()
    if after != inventory:
        raise UserError(f"{db} differs after the rewrite of its changed tables: restore it from a backup")
    return Rewrite(
        db,
        time.perf_counter() - started,
        bytes_before,
        target.stat().st_size,
        tables=[f"{schema}.{table}" for schema, table in rewritten],
        bytes_zeroed=zeroed,
    )


def describe_rewrite(rewrite: Rewrite) -> str:
    """The line `forget` prints about step 3."""
    sizes = f"{rewrite.bytes_before:,} -> {rewrite.bytes_after:,} bytes in {rewrite.seconds:.1f} s"
    if rewrite.tables is None:
        return (
            f"rewrote {rewrite.path}: {sizes} (a fresh copy of the whole file: no freed block keeps erased bytes; "
            f"not only what held the ids, because {rewrite.fallback})"
        )
    return (
        f"rewrote {rewrite.path}: {sizes}; {len(rewrite.tables)} table(s) written again "
        f"({', '.join(rewrite.tables)}), {rewrite.bytes_zeroed:,} bytes of free blocks zeroed, the rest untouched"
    )
