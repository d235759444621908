"""A JSON-lines file with a few bad lines: DuckDB's parallel reader lands the good lines, the line-by-line
path validates and quarantines the others.

DuckDB's JSON reader gives no line numbers, so the lines it must not see are found first; the other lines
go, as read, to a temporary file that DuckDB's reader lands in one multi-threaded pass, as it does a clean
file, and the lines set apart go through the line path in the same load: their quarantine rows (line number,
raw text and bytes, reason) are the line path's. Three ways to choose them:

* by shape (first; the checksum pass already found them, `ingest.jsonl.scan_lines`): the lines that are not
  a brace first and a brace last (before the line end, LF or CRLF). A cut-off line, garbage, a blank line,
  JSON that is no object: all the line path's parse errors but those inside an object's braces, at no cost
  of parsing. DuckDB's reader refuses those (it is as strict as the line path's `json_valid`, UTF-8
  included: tests/ingest/test_bad_lines.py), and then
* by DuckDB's reader (first when the reader refused a row for its contract): lines malformed inside their
  braces (`{"a": }`, a cut object closed again) and valid JSON that breaks the contract (a missing field, a
  wrong type, an unparseable timestamp, a value outside an enum). One lenient pass of DuckDB's reader over
  the shaped lines (`ignore_errors`: a malformed line is a row of absent fields) numbers its rows
  (`row_number() over ()`: the reader keeps the file's order) and checks the contract's SQL; the lines of the
  rows it refuses are found again from the marks the scan left (`ingest.jsonl.line_spans`), not by reading
  the file again, and the line path must refuse each of them too (else the readers disagree). The strict
  reader then lands the other lines as above. Then
* every line the line path refuses (its whole validation, in DuckDB, over the file's lines again): when the
  readers disagree on a line, or the scan did not remember the unshaped lines.

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

from ingest.jsonl import (
    BATCH_SCHEMA,
    LineChunk,
    Unshaped,
    chunk_batch,
    copy_ranges,
    line_batch,
    line_chunks,
    line_spans,
    lines_at,
)
from ingest.load import Load
from ingest.validation import json_batch_sql, lines_parsed_sql, read_json_parsed_sql
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


def _refuses_all(con: duckdb.DuckDBPyConnection, contract: Contract, lines: pa.Table) -> bool:
    """Whether the line path refuses every one of these lines (each a row)."""
    validated = json_batch_sql(contract, lines_parsed_sql(contract, "_lines"))
    con.register("_lines", lines)
    try:
        (refused,) = con.execute(f"select count(*) from ({validated}) where _reason <> ''").fetchall()[0]
    finally:
        con.unregister("_lines")
    return int(refused) == lines.num_rows


def set_apart_breaches(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    path: Path,
    good: Path,
    unshaped: Unshaped,
    *,
    whole: bool,
    end: int,
    first_line: int,
    uri: str | None = None,
) -> Apart | None:
    """Set apart the lines not shaped like an object and those of the rows a pass of DuckDB's reader over the
    others refuses: malformed inside the braces, or valid JSON that breaks the contract. The pass numbers its
    rows (in the file's order) and checks the contract's SQL; the lines of the rows it refuses are found
    again from the scan's marks (`ingest.jsonl.line_spans`), not by reading the file again, and the line path
    must refuse each of them (else the readers disagree). The other lines are copied to `good` in the kernel.
    None when the reader counts other than one row a line, when the line path takes a line the reader
    refused, or when the lines set apart hold more than APART_LIMIT_BYTES."""
    uri = uri or str(path)
    shaped = path  # the lines shaped like an object, for the numbered pass: the file itself when it is all
    if not whole or unshaped.begin or len(unshaped.indexes):  # (DuckDB's reader refuses a BOM)
        shaped = good.with_name("shaped-" + good.name)
        kept = zip([unshaped.begin, *unshaped.ends.tolist()], [*unshaped.starts.tolist(), end], strict=True)
        copy_ranges(path, [(start, stop) for start, stop in kept if stop > start], shaped)
    numbered = json_batch_sql(contract, read_json_parsed_sql(contract, str(shaped), uri, numbered=True))
    in_order = con.execute("select current_setting('preserve_insertion_order')").fetchall()[0][0]
    con.execute("set preserve_insertion_order = true")  # the rows numbered in the file's order
    try:
        rows, refused = con.execute(
            f"select count(*), coalesce(list(_line) filter (where _reason <> ''), []) from ({numbered})"
        ).fetchall()[0]
    except (duckdb.InvalidInputException, duckdb.ConversionException):
        return None
    finally:
        con.execute(f"set preserve_insertion_order = {'true' if in_order else 'false'}")
        if shaped != path:
            shaped.unlink()
    if rows != unshaped.lines - len(unshaped.indexes):
        return None
    places = np.sort(np.asarray(refused, dtype=np.int64)) - 1  # 0-based among the shaped lines
    found = places + np.searchsorted(unshaped.indexes - np.arange(len(unshaped.indexes)), places, side="right")
    found_starts, found_ends = line_spans(path, unshaped.marks, found, end)
    indexes = np.concatenate([unshaped.indexes, found])
    order = np.argsort(indexes, kind="stable")
    indexes = indexes[order]
    starts = np.concatenate([unshaped.starts, found_starts])[order]
    ends = np.concatenate([unshaped.ends, found_ends])[order]
    size = int((ends - starts).sum())
    if size > APART_LIMIT_BYTES:
        return None
    lines = lines_at(path, starts, ends, indexes + first_line, uri)
    if not _refuses_all(con, contract, lines.take(np.flatnonzero(np.isin(indexes, found)))):
        return None
    kept = zip([unshaped.begin, *ends.tolist()], [*starts.tolist(), end], strict=True)
    copy_ranges(path, [(start, stop) for start, stop in kept if stop > start], good)
    return Apart(unshaped.lines - len(indexes), [lines], size)


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
    DuckDB's reader, the lines set apart line by line, in one load. Three ways, each tried when the one before
    does not do: the lines not shaped like an object set apart (`Load.land_apart`; not when the reader
    refused a row for its contract, `contract_breach`); those and the lines of the rows DuckDB's reader
    refuses, malformed or breaking the contract (`set_apart_breaches`); every line the line path refuses
    (`set_apart_refused`). The committed load, or None: read the file line by line. `uri` names the file the
    lines come from when `path` holds a copy."""
    uri = uri or str(path)
    shaped = not contract_breach and unshaped is not None and len(unshaped.indexes) > 0
    for way in ("unshaped", "breaches", "exact"):
        if (way == "unshaped" and not shaped) or (way == "breaches" and unshaped is None):
            continue
        with tempfile.TemporaryDirectory(prefix="feedback-good-lines-") as folder:
            good = Path(folder) / path.name
            if way == "breaches" and unshaped is not None:
                whole = start == 0 and end == path.stat().st_size
                apart = set_apart_breaches(
                    con, contract, path, good, unshaped, whole=whole, end=end, first_line=first_line, uri=uri
                )
                if apart is None:
                    continue  # the readers disagree on a line: every line the line path refuses
            elif way == "unshaped" and unshaped is not None:
                apart = set_apart_unshaped(path, good, unshaped, end=end, first_line=first_line, uri=uri)
            else:
                apart = set_apart_refused(
                    con, contract, path, good, start=start, end=end, first_line=first_line, uri=uri
                )
            if apart is None:
                return None  # too much set apart
            load = new_load()
            with load.transaction() as landed:
                landed.keep = load.land_apart(str(good), uri, apart.kept_rows, apart.batch())
        if landed.keep:
            return load
    return None
