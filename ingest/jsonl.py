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
from pathlib import Path

import numpy as np
import pyarrow as pa
import xxhash

CHUNK_BYTES = 32 * 1024 * 1024
CHECKSUM_WINDOW_BYTES = 64 * 1024 * 1024  # a multiple of the page size
BOM = b"\xef\xbb\xbf"

BATCH_SCHEMA = pa.schema(
    [
        ("_line", pa.int64()),
        ("_uri", pa.string()),
        ("_raw", pa.large_string()),
        ("_utf8_ok", pa.bool_()),
        ("_raw_bytes", pa.large_binary()),  # the exact bytes, only where they are not UTF-8
    ]
)


def file_checksum(path: Path) -> str:
    """xxh3-128 of the file's bytes, hashed through 64 MiB memory-mapped windows (no copy, flat memory)."""
    digest = xxhash.xxh3_128()
    size = path.stat().st_size
    with path.open("rb") as handle:
        for offset in range(0, size, CHECKSUM_WINDOW_BYTES):
            length = min(CHECKSUM_WINDOW_BYTES, size - offset)
            with mmap.mmap(handle.fileno(), length, offset=offset, access=mmap.ACCESS_READ) as window:
                digest.update(window)
    return "xxh3_128:" + digest.hexdigest()


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


def read_jsonl(path: Path, on_bytes: Callable[[int], None] | None = None) -> Iterator[pa.Table]:
    """Batches of the lines of one JSON-lines file, about CHUNK_BYTES each."""
    uri = str(path)
    next_line = 1
    carry = b""
    first = True
    with path.open("rb") as handle:
        while True:
            block = handle.read(CHUNK_BYTES)
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


def read_blobs(paths: list[Path], batch_size: int = 5000) -> Iterator[pa.Table]:
    """Batches of whole JSON files, one record per file (a blob may span many lines)."""
    for start in range(0, len(paths), batch_size):
        group = paths[start : start + batch_size]
        contents = [p.read_bytes().removeprefix(BOM) for p in group]
        lines = pa.array(contents, pa.large_binary())
        uris = pa.array([str(p) for p in group], pa.string())
        yield pa.Table.from_arrays([pa.nulls(len(group), pa.int64()), uris, *_as_text(lines)], schema=BATCH_SCHEMA)
