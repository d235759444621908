"""Reading JSON-lines files and JSON blob folders into Arrow batches of raw text.

Python only finds line boundaries (with `bytes.find`, i.e. memchr) and hands
whole chunks to Arrow without copying; parsing and validation happen in DuckDB.
Every batch has the columns `_line` (1-based physical line number, NULL for a
blob), `_uri`, `_raw` (the text, trailing newline included) and `_utf8_ok`.
A UTF-8 byte-order mark at the start of a file is dropped; CRLF line ends and
blank lines are left to the SQL, which tolerates them.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import xxhash

CHUNK_BYTES = 32 * 1024 * 1024
FINGERPRINT_BLOCK = 64 * 1024
BOM = b"\xef\xbb\xbf"
NEWLINE = 10
BLANK_BYTES = np.array([ord(" "), ord("\t"), ord("\r")], dtype=np.uint8)

BATCH_SCHEMA = pa.schema(
    [
        ("_line", pa.int64()),
        ("_uri", pa.string()),
        ("_raw", pa.large_string()),
        ("_utf8_ok", pa.bool_()),
        ("_raw_bytes", pa.large_binary()),  # the exact bytes, only where they are not UTF-8
    ]
)


@dataclass(frozen=True)
class FileScan:
    """One pass over bytes of a file: their checksum, and where the last complete line among them ends."""

    checksum: str
    size: int
    complete_to: int  # the byte after the last newline read (start: none): the next append read starts here
    complete_lines: int  # newlines read: the next append read numbers its first line after them


def file_checksum(path: Path) -> str:
    return scan_file(path).checksum


def scan_file(path: Path, start: int = 0, end: int | None = None) -> FileScan:
    """xxh3-128 of the file's bytes [start, end) (default: all) and where its last complete line ends, in one
    pass of CHUNK_BYTES reads (flat memory); bytes appended after `end` wait for the next read."""
    digest = xxhash.xxh3_128()
    end = path.stat().st_size if end is None else end
    lines, complete_to = 0, start
    buffer = bytearray(CHUNK_BYTES)
    with path.open("rb") as handle:
        handle.seek(start)
        position = start
        while position < end:
            view = memoryview(buffer)[: min(CHUNK_BYTES, end - position)]
            got = handle.readinto(view)
            if not got:
                break
            block = view[:got]
            digest.update(block)
            newlines = buffer.count(b"\n", 0, got)
            if newlines:
                lines += newlines
                complete_to = position + buffer.rfind(b"\n", 0, got) + 1
            position += got
    return FileScan("xxh3_128:" + digest.hexdigest(), end, complete_to, lines)


def prefix_fingerprint(path: Path, size: int) -> str:
    """A cheap fingerprint of a file's first `size` bytes: xxh3-128 of four 64 KiB blocks (the first, two
    between, the last one before `size`) and the size. Its cost does not grow with the file. It tells an
    appended file (fingerprint of the old size unchanged) from a rewritten, truncated or rotated one; an
    in-place edit that misses all four blocks and keeps the size is not seen (docs/operations.md)."""
    digest = xxhash.xxh3_128(size.to_bytes(8, "little"))
    starts = sorted(
        {
            0,
            max(size // 3 - FINGERPRINT_BLOCK, 0),
            max(2 * size // 3 - FINGERPRINT_BLOCK, 0),
            max(size - FINGERPRINT_BLOCK, 0),
        }
    )
    with path.open("rb") as handle:
        for start in starts:
            handle.seek(start)
            block = handle.read(min(FINGERPRINT_BLOCK, size - start))
            if len(block) != min(FINGERPRINT_BLOCK, size - start):
                return "blocks-xxh3_128:short-file"
            digest.update(block)
    return f"blocks-xxh3_128:{size}:{digest.hexdigest()}"


def copy_range(path: Path, start: int, end: int, target: Path) -> None:
    """Bytes [start, end) of `path` into `target` (the new part of an appended file, for DuckDB's reader)."""
    with path.open("rb") as source, target.open("wb") as out:
        source.seek(start)
        remaining = end - start
        while remaining > 0:
            block = source.read(min(CHUNK_BYTES, remaining))
            if not block:
                break
            out.write(block)
            remaining -= len(block)


def _line_ends(data: bytes) -> list[int]:
    ends = []
    find = data.find
    pos = find(b"\n")
    while pos != -1:
        ends.append(pos + 1)
        pos = find(b"\n", pos + 1)
    if not ends or ends[-1] != len(data):
        ends.append(len(data))
    return ends


def _as_text(lines: pa.LargeBinaryArray) -> list[pa.Array]:
    """Text, UTF-8 flag and raw bytes columns; invalid UTF-8 is shown with U+FFFD."""
    try:
        text = lines.cast(pa.large_string())
        return [text, pa.repeat(True, len(lines)), pa.nulls(len(lines), pa.large_binary())]
    except pa.ArrowInvalid:
        texts, flags, raw_bytes = [], [], []
        for raw in lines.to_pylist():  # only for a chunk that holds invalid bytes
            try:
                texts.append(raw.decode("utf-8"))
                flags.append(True)
                raw_bytes.append(None)
            except UnicodeDecodeError:
                texts.append(raw.decode("utf-8", errors="replace"))
                flags.append(False)
                raw_bytes.append(raw)
        return [
            pa.array(texts, pa.large_string()),
            pa.array(flags, pa.bool_()),
            pa.array(raw_bytes, pa.large_binary()),
        ]


def _batch(data: bytes, first_line: int | None, uri: str, ends: list[int]) -> pa.Table:
    offsets = np.array([0, *ends], dtype=np.int64)
    count = len(ends)
    lines = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    line_numbers = (
        pa.nulls(count, pa.int64())
        if first_line is None
        else pa.array(np.arange(first_line, first_line + count, dtype=np.int64))
    )
    return pa.Table.from_arrays(
        [line_numbers, pa.repeat(uri, count).cast(pa.string()), *_as_text(lines)], schema=BATCH_SCHEMA
    )


def read_jsonl(
    path: Path,
    on_bytes: Callable[[int], None] | None = None,
    *,
    start: int = 0,
    end: int | None = None,
    first_line: int = 1,
) -> Iterator[pa.Table]:
    """Batches of the lines of one JSON-lines file, about CHUNK_BYTES each: bytes [start, end) (default: the
    whole file), numbered from `first_line` (an append read starts after the lines read before)."""
    uri = str(path)
    next_line = first_line
    carry = b""
    first = start == 0
    remaining = None if end is None else end - start
    with path.open("rb") as handle:
        handle.seek(start)
        while True:
            want = CHUNK_BYTES if remaining is None else min(CHUNK_BYTES, remaining)
            block = handle.read(want) if want > 0 else b""
            if remaining is not None:
                remaining -= len(block)
            if first:
                block = block.removeprefix(BOM)
                first = False
            if on_bytes and block:
                on_bytes(len(block))
            data = carry + block
            if not data:
                return
            if block:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    carry = data
                    continue
                data, carry = data[:cut], data[cut:]
            else:
                carry = b""
            ends = _line_ends(data)
            yield _batch(data, next_line, uri, ends)
            next_line += len(ends)
            if not block:
                return


def rows_at(path: Path, ordinals: list[int], *, uri: str, first_line: int = 1, rows: int) -> pa.Table | None:
    """The lines of the `ordinals`-th rows (0-based; a row is a non-blank line, as DuckDB's JSON reader counts
    them) of a JSON-lines file, as one batch with physical line numbers from `first_line`: the few rows
    DuckDB's reader could not take, for the line-by-line path to quarantine exactly.

    None when the file does not hold `rows` rows by this count (the two readers disagree on a blank line):
    the caller then reads the file line by line instead."""
    if path.stat().st_size == 0:
        return None
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        view = np.frombuffer(data, dtype=np.uint8)
        try:
            starts, ends = _line_spans(view)
            lengths = ends - starts
            first = view[np.minimum(starts, max(len(view) - 1, 0))] if len(view) else np.empty(0, np.uint8)
            maybe_blank = (lengths == 0) | np.isin(first, BLANK_BYTES)
            blank = np.zeros(len(starts), dtype=bool)
            for index in np.flatnonzero(maybe_blank):  # whitespace-first lines are rare: check them one by one
                blank[index] = not bytes(view[starts[index] : ends[index]]).strip(b" \t\r")
            row_lines = np.flatnonzero(~blank)
            if len(row_lines) != rows:
                return None
            picked = row_lines[np.asarray(ordinals, dtype=np.int64)]
            raws = [bytes(view[starts[i] : min(ends[i] + 1, len(view))]) for i in picked]
        finally:
            del view  # the mmap cannot close while an array exports its buffer
    lines = pa.array(raws, pa.large_binary())
    numbers = pa.array((picked + first_line).astype(np.int64))
    uris = pa.repeat(uri, len(raws)).cast(pa.string())
    return pa.Table.from_arrays([numbers, uris, *_as_text(lines)], schema=BATCH_SCHEMA)


def _line_spans(view: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (the newline's position, or the file's end) of every line; a BOM is not part of line 1."""
    newlines = [np.flatnonzero(view[at : at + CHUNK_BYTES] == NEWLINE) + at for at in range(0, len(view), CHUNK_BYTES)]
    ends = np.concatenate(newlines) if newlines else np.empty(0, dtype=np.int64)
    if len(view) and (not len(ends) or ends[-1] != len(view) - 1):
        ends = np.append(ends, len(view))  # a last line without a newline
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64) if len(ends) else np.empty(0, dtype=np.int64)
    if len(starts) and bytes(view[:3]) == BOM:
        starts[0] = 3
    return starts, ends.astype(np.int64)


def read_blobs(paths: list[Path], batch_size: int = 5000) -> Iterator[pa.Table]:
    """Batches of whole JSON files, one record per file (a blob may span many lines)."""
    for start in range(0, len(paths), batch_size):
        group = paths[start : start + batch_size]
        contents = [p.read_bytes().removeprefix(BOM) for p in group]
        lines = pa.array(contents, pa.large_binary())
        uris = pa.array([str(p) for p in group], pa.string())
        yield pa.Table.from_arrays([pa.nulls(len(group), pa.int64()), uris, *_as_text(lines)], schema=BATCH_SCHEMA)
