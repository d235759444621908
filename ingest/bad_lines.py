"""A JSON-lines file with a few bad lines: DuckDB's parallel reader lands the good lines, the line-by-line
path validates and quarantines the others.

DuckDB's JSON reader gives no line numbers, so the lines it must not see are found first; the other lines
go, as read, to a temporary file that DuckDB's reader lands in one multi-threaded pass, as it does a clean
file, and the lines set apart go through the line path in the same load: their quarantine rows (line number,
raw text and bytes, reason) are the line path's. Two ways to choose them:

* by shape (first; the checksum pass already found them, `ingest.jsonl.scan_lines`): the lines that are not
  a brace first and a brace last (before the line end, LF or CRLF). A cut-off line, garbage, a blank line,
  JSON that is no object: all the line path's parse errors but those inside an object's braces, at no cost
  of parsing. DuckDB's reader refuses those (it is as strict as the line path's `json_valid`, UTF-8
  included: tests/ingest/test_bad_lines.py), and then
* every line the line path refuses (its whole validation, in DuckDB, over the file's lines again), which
  also finds valid JSON that breaks the contract (a wrong type, a missing key); first when the reader
  refused a row for its contract.

The load checks that DuckDB's reader counted one row per line of the temporary file; when it does not (the
readers disagree on a line), or when the lines set apart are too many for this to pay, the caller reads the
file line by line.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import duckdb
import numpy as np
import pyarrow as pa

from ingest.jsonl import BATCH_SCHEMA, LineChunk, Unshaped, chunk_batch, copy_ranges, line_batch, line_chunks, lines_at
from ingest.load import Load
from ingest.validation import json_batch_sql, lines_parsed_sql
from warehouse.contracts import Contract

APART_LIMIT_BYTES = 64 * 1024 * 1024  # beyond this much set-apart text the line-by-line path is as fast, and flat
SCAN_ROWS = 8192  # Arrow batches of this many lines: DuckDB's threads share a chunk's batches


@dataclass
class Apart:
    """The lines of a file set apart from DuckDB's reader, and the rows that reader must count in the rest."""

    kept_rows: int = 0
    lines: list[pa.Table] = field(default_factory=list)  # the lines set apart, as `ingest.jsonl` batches
    size: int = 0  # their bytes

    def batch(self) -> pa.Table:
        return pa.concat_tables(self.lines) if self.lines else pa.Table.from_batches([], schema=BATCH_SCHEMA)


def _starts(chunk: LineChunk) -> np.ndarray:
    return np.concatenate([np.zeros(1, dtype=np.int64), chunk.ends[:-1]])


def _refused(con: duckdb.DuckDBPyConnection, contract: Contract, chunk: LineChunk) -> tuple[int, np.ndarray]:
    """The lines of a chunk the line path refuses for any reason (0-based indexes), and the number of the
    other rows (blank lines are none)."""
    validated = json_batch_sql(contract, lines_parsed_sql(contract, "_lines"))
    con.register("_lines", pa.Table.from_batches(chunk_batch(chunk, "").to_batches(SCAN_ROWS)))
    try:
        rows, refused = con.execute(
            f"select count(*), coalesce(list(_line) filter (where _reason <> ''), []) from ({validated})"
        ).fetchall()[0]
    finally:
        con.unregister("_lines")
    return int(rows) - len(refused), np.sort(np.asarray(refused, dtype=np.int64)) - chunk.first_line


def _write(out: BinaryIO, data: np.ndarray) -> None:
    view = memoryview(data)
    while len(view):
        view = view[out.write(view) :]


def set_apart_unshaped(
    path: Path, good: Path, unshaped: Unshaped, *, end: int, first_line: int, uri: str | None = None
) -> Apart | None:
    """Set apart the lines a scan found not shaped like a JSON object (`ingest.jsonl.scan_lines`: no second
    read of the file); the other lines of bytes [unshaped.begin, end) are copied to `good` in the kernel. `uri`
    names the file the lines come from when `path` holds a copy."""
    size = int((unshaped.ends - unshaped.starts).sum())
    if size > APART_LIMIT_BYTES:
        return None
    kept = zip([unshaped.begin, *unshaped.ends.tolist()], [*unshaped.starts.tolist(), end], strict=True)
    copy_ranges(path, [(start, stop) for start, stop in kept if stop > start], good)
    lines = lines_at(path, unshaped.starts, unshaped.ends, unshaped.indexes + first_line, uri or str(path))
    return Apart(unshaped.lines - len(unshaped.indexes), [lines], size)


def set_apart_refused(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    path: Path,
    good: Path,
    *,
    start: int,
    end: int,
    first_line: int,
    uri: str | None = None,
) -> Apart | None:
    """Set apart the lines of bytes [start, end) of a JSON-lines file (numbered from `first_line`) that the
    line path refuses; the other lines go to the file `good`, as they were. None when the lines set apart
    hold more than APART_LIMIT_BYTES."""
    apart = Apart()
    with good.open("wb", buffering=0) as out:
        for chunk in line_chunks(path, start=start, end=end, first_line=first_line):
            kept_rows, indexes = _refused(con, contract, chunk)
            apart.kept_rows += kept_rows
            starts = _starts(chunk)
            apart.size += int((chunk.ends[indexes] - starts[indexes]).sum())
            if apart.size > APART_LIMIT_BYTES:
                return None
            if len(indexes):
                apart.lines.append(line_batch(chunk, indexes, uri or str(path)))
            at = 0
            for index in indexes:  # the lines between those set apart
                _write(out, chunk.data[at : starts[index]])
                at = chunk.ends[index]
            _write(out, chunk.data[at:])
    return apart


def land_setting_bad_lines_apart(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    path: Path,
    new_load: Callable[[], Load],
    *,
    start: int,
    end: int,
    first_line: int,
    unshaped: Unshaped | None,
    contract_breach: bool,
    uri: str | None = None,
) -> Load | None:
    """Land bytes [start, end) of a JSON-lines file that DuckDB's reader refused as a whole: most lines with
    DuckDB's reader, the lines set apart line by line, in one load (`Load.land_apart`). The lines not shaped
    like an object are set apart first, unless the reader refused a row for its contract (`contract_breach`);
    every line the line path refuses, if that is not enough. The committed load, or None: read the file line
    by line. `uri` names the file the lines come from when `path` holds a copy."""
    uri = uri or str(path)
    for exact in (True,) if contract_breach else (False, True):
        if not exact and (unshaped is None or not len(unshaped.indexes)):
            continue  # every line is shaped like an object: one is malformed inside, or breaks the contract
        with tempfile.TemporaryDirectory(prefix="feedback-good-lines-") as folder:
            good = Path(folder) / path.name
            if exact:
                apart = set_apart_refused(
                    con, contract, path, good, start=start, end=end, first_line=first_line, uri=uri
                )
            else:
                apart = set_apart_unshaped(path, good, unshaped, end=end, first_line=first_line, uri=uri)
            if apart is None:
                return None
            load = new_load()
            with load.transaction() as landed:
                landed.keep = load.land_apart(str(good), uri, apart.kept_rows, apart.batch())
        if landed.keep:
            return load
    return None
