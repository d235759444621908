"""A JSON-lines file with a few bad lines: DuckDB's parallel reader lands the good lines, the line-by-line
path validates and quarantines the bad ones.

DuckDB's JSON reader gives no line numbers, so the bad lines are found first, by a pass of DuckDB over the
file's lines (`ingest.jsonl.line_chunks`: physical line numbers, every thread busy): first the lines that do
not parse as a JSON object (cheap: `json_valid` on every line, the line path's own SQL on the few it refuses),
and, if DuckDB's reader then still refuses a row (valid JSON that breaks the contract), every line the line
path refuses (its whole validation). The other lines are copied, in the kernel, to a temporary file that
DuckDB's reader lands in one pass as it does a clean file; the lines set apart go through the line path in
the same load, so their quarantine rows (line number, raw text and bytes, reason) are the line path's. The
load checks that DuckDB's reader counted as many rows in the copy as the line path counts; when it does not,
or when too many lines are bad for this to pay, the caller reads the file line by line.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ingest.jsonl import BATCH_SCHEMA, LineChunk, chunk_batch, copy_ranges, line_batch, line_chunks
from ingest.load import Load
from ingest.validation import json_batch_sql, lines_parsed_sql
from warehouse.contracts import Contract

APART_LIMIT_BYTES = 64 * 1024 * 1024  # beyond this much bad text the line-by-line path is as fast, and flat
SCAN_ROWS = 8192  # Arrow batches of this many lines: DuckDB's threads share a chunk's batches


@dataclass
class Apart:
    """The lines of bytes [begin, end) of a file set apart from DuckDB's reader, and the rows they leave."""

    begin: int  # the first line's first byte (after a BOM)
    end: int
    rows: int = 0  # non-blank lines (rows) of the whole range, as the line path counts them
    spans: list[tuple[int, int]] = field(default_factory=list)  # bytes of the lines set apart, in order
    lines: list[pa.Table] = field(default_factory=list)  # the same lines, as `ingest.jsonl` batches
    size: int = 0  # bytes set apart

    def kept_ranges(self) -> list[tuple[int, int]]:
        """The byte ranges between the lines set apart."""
        ranges, at = [], self.begin
        for start, stop in self.spans:
            if start > at:
                ranges.append((at, start))
            at = stop
        if self.end > at:
            ranges.append((at, self.end))
        return ranges

    def batch(self) -> pa.Table:
        return pa.concat_tables(self.lines) if self.lines else BATCH_SCHEMA.empty_table()


def _suspects_sql(contract: Contract) -> str:
    """Lines of `_lines` that are not obviously a JSON object (not UTF-8, not valid JSON, not starting with a
    brace: few), with what the line path makes of them: a row or a blank line, a parse error or none."""
    suspects = "(select * from _lines where not (_utf8_ok and json_valid(_raw) and starts_with(_raw, '{')))"
    return f"""
        with suspects as {suspects},
        parsed as ({lines_parsed_sql(contract, "suspects")})
        select s._line, p._line is not null as is_row, p._parse_error is not null as is_bad
        from suspects as s left join parsed as p on p._line = s._line
    """


def _refused_sql(contract: Contract) -> str:
    """Rows of `_lines` (as the line path counts them), and the lines it refuses for any reason."""
    validated = json_batch_sql(contract, lines_parsed_sql(contract, "_lines"))
    return f"select count(*), coalesce(list(_line) filter (where _reason <> ''), []) from ({validated})"


def _bad_lines(
    con: duckdb.DuckDBPyConnection, contract: Contract, chunk: LineChunk, *, exact: bool
) -> tuple[int, list[int]]:
    """The chunk's rows and its bad lines (line numbers): those that do not parse as a JSON object, or with
    `exact` those the line path refuses for any reason."""
    lines = pa.Table.from_batches(chunk_batch(chunk, "").to_batches(SCAN_ROWS))
    con.register("_lines", lines)
    try:
        if exact:
            rows, bad = con.execute(_refused_sql(contract)).fetchall()[0]
            return int(rows), sorted(bad)
        found = con.execute(_suspects_sql(contract)).fetchall()
    finally:
        con.unregister("_lines")
    blank = sum(1 for _, is_row, _ in found if not is_row)
    return len(chunk.ends) - blank, sorted(line for line, is_row, is_bad in found if is_row and is_bad)


def set_apart(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    path: Path,
    *,
    start: int,
    end: int,
    first_line: int,
    exact: bool,
) -> Apart | None:
    """The bad lines of bytes [start, end) of a JSON-lines file (lines numbered from `first_line`); None when
    they hold more than APART_LIMIT_BYTES."""
    apart: Apart | None = None
    uri = str(path)
    for chunk in line_chunks(path, start=start, end=end, first_line=first_line):
        apart = apart or Apart(chunk.offset, end)
        rows, bad = _bad_lines(con, contract, chunk, exact=exact)
        apart.rows += rows
        if not bad:
            continue
        indexes = np.asarray(bad, dtype=np.int64) - chunk.first_line
        starts = np.concatenate([np.zeros(1, dtype=np.int64), chunk.ends[:-1]])
        apart.spans += [(chunk.offset + int(starts[i]), chunk.offset + int(chunk.ends[i])) for i in indexes]
        apart.size += int((chunk.ends[indexes] - starts[indexes]).sum())
        if apart.size > APART_LIMIT_BYTES:
            return None
        apart.lines.append(line_batch(chunk, indexes, uri))
    return apart or Apart(end, end)


def land_setting_bad_lines_apart(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    path: Path,
    new_load: Callable[[], Load],
    *,
    start: int,
    end: int,
    first_line: int,
    contract_breach: bool,
) -> Load | None:
    """Land bytes [start, end) of a JSON-lines file that DuckDB's reader refused as a whole: its good lines
    with DuckDB's reader, its bad lines line by line, in one load (`Load.land_apart`). The lines that do not
    parse are set apart first, unless a row that breaks the contract was met (`contract_breach`); every line
    the line path refuses, if that is not enough. The committed load, or None: read the file line by line."""
    for exact in (True,) if contract_breach else (False, True):
        apart = set_apart(con, contract, path, start=start, end=end, first_line=first_line, exact=exact)
        if apart is None:
            return None
        if not exact and not apart.spans:
            continue  # every line parses: a row breaks the contract
        with tempfile.TemporaryDirectory(prefix="feedback-good-lines-") as folder:
            good = Path(folder) / path.name
            copy_ranges(path, apart.kept_ranges(), good)
            lines = apart.batch()
            load = new_load()
            with load.transaction() as landed:
                landed.keep = load.land_apart(str(good), str(path), apart.rows - lines.num_rows, lines)
        if landed.keep:
            return load
    return None
