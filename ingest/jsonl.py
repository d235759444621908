"""Reading JSON-lines files and JSON blob folders into Arrow batches of raw text.

Python only finds line boundaries (with numpy, a chunk at a time) and hands
whole chunks to Arrow without copying; parsing and validation happen in DuckDB.
Every batch has the columns `_line` (1-based physical line number, NULL for a
blob), `_uri`, `_raw` (the text, trailing newline included) and `_utf8_ok`.
A UTF-8 byte-order mark at the start of a file is dropped; CRLF line ends and
blank lines are left to the SQL, which tolerates them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import xxhash

from ingest.line_limits import LineLimits, OverLimits, too_deep

CHUNK_BYTES = 32 * 1024 * 1024
FINGERPRINT_BLOCK = 64 * 1024
BOM = b"\xef\xbb\xbf"
NEWLINE, CR, OPEN, CLOSE = (ord(c) for c in "\n\r{}")
UNSHAPED_LIMIT = 100_000  # lines a scan remembers; beyond them a bad file is read line by line
MARK_LINES = 256  # a scan notes where every MARK_LINES-th line starts: any line is found again by a short read

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
class Unshaped:
    """The lines of a scanned range not shaped like a JSON object (`unshaped_lines`): 0-based indexes among
    the range's lines, and their bytes [starts, ends) in the file."""

    begin: int  # the first line's first byte (after a BOM)
    lines: int  # lines in the range, the unshaped ones included
    indexes: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    marks: np.ndarray  # where lines 0, MARK_LINES, 2 * MARK_LINES, ... of the range start (`line_spans`)


@dataclass(frozen=True)
class FileScan:
    """One pass over bytes of a file: their checksum, and where the last complete line among them ends."""

    checksum: str
    size: int
    complete_to: int  # the byte after the last newline read (start: none): the next append read starts here
    complete_lines: int  # newlines read: the next append read numbers its first line after them
    unshaped: Unshaped | None = None  # of a JSON-lines scan (`scan_lines`); None: not scanned, or too many
    over_limits: bool = False  # a line is over the limits (`ingest.line_limits`): none of its lines was judged


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


def scan_lines(path: Path, start: int = 0, end: int | None = None, limits: LineLimits | None = None) -> FileScan:
    """`scan_file` of a JSON-lines file, in whole lines (`line_chunks`), that also finds the lines not shaped
    like a JSON object (`FileScan.unshaped`, unless more than UNSHAPED_LIMIT): for a file with bad lines,
    what `ingest.bad_lines` sets apart, without reading the file again. As fast as `scan_file`.

    With `limits`, a line over them ends the scan: the `scan_file` of the range, `over_limits` set."""
    end = path.stat().st_size if end is None else end
    try:
        return _scan_lines(path, start, end, limits)
    except OverLimits:
        return replace(scan_file(path, start, end), over_limits=True)


def _scan_lines(path: Path, start: int, end: int, limits: LineLimits | None) -> FileScan:
    digest = xxhash.xxh3_128()
    if start == 0 and end >= len(BOM):
        with path.open("rb") as handle:
            if handle.read(len(BOM)) == BOM:
                digest.update(BOM)  # `line_chunks` drops it from line 1
    lines, newlines, complete_to, begin, count = 0, 0, start, end, 0
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # line indexes, starts, ends
    marks: list[np.ndarray] = []
    max_line = limits.max_line_bytes if limits else None
    for number, chunk in enumerate(line_chunks(path, start=start, end=end, max_line_bytes=max_line)):
        if limits:
            starts = np.concatenate([np.zeros(1, dtype=np.int64), chunk.ends[:-1]])
            if (chunk.ends - starts).max(initial=0) > limits.max_line_bytes:
                raise OverLimits
            if too_deep(chunk.data, starts, chunk.ends, limits.max_depth):
                raise OverLimits
        digest.update(memoryview(chunk.data))
        begin = chunk.offset if number == 0 else begin
        if count <= UNSHAPED_LIMIT:
            indexes = unshaped_lines(chunk)
            count += len(indexes)
            starts = np.concatenate([np.zeros(1, dtype=np.int64), chunk.ends[:-1]])
            marks.append(starts[(-lines) % MARK_LINES :: MARK_LINES] + chunk.offset)
            parts.append((indexes + lines, starts[indexes] + chunk.offset, chunk.ends[indexes] + chunk.offset))
        complete = len(chunk.ends) - int(chunk.data[-1] != NEWLINE)  # lines that end with a newline
        if complete:
            newlines = lines + complete
            complete_to = chunk.offset + int(chunk.ends[complete - 1])
        lines += len(chunk.ends)
    unshaped = None
    if count <= UNSHAPED_LIMIT:
        columns = [np.concatenate(column) for column in zip(*parts, strict=True)] if parts else [np.empty(0)] * 3
        marked = np.concatenate(marks).astype(np.int64) if marks else np.empty(0, dtype=np.int64)
        unshaped = Unshaped(begin, lines, *(column.astype(np.int64) for column in columns), marked)
    return FileScan("xxh3_128:" + digest.hexdigest(), end, complete_to, newlines, unshaped)


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
    copy_ranges(path, [(start, end)], target)


def copy_ranges(path: Path, ranges: Iterable[tuple[int, int]], target: Path) -> None:
    """The byte ranges [start, end) of `path`, one after the other, into `target` (in the kernel where it
    can: `copy_file_range`); a range the file no longer holds is copied as far as it goes."""
    with path.open("rb") as source, target.open("wb", buffering=0) as out:
        for start, end in ranges:
            position = start
            while position < end:
                try:
                    got = os.copy_file_range(source.fileno(), out.fileno(), end - position, position)
                except (AttributeError, OSError):  # not Linux, or a file system that cannot
                    block = os.pread(source.fileno(), min(CHUNK_BYTES, end - position), position)
                    got = out.write(block) if block else 0
                if not got:
                    break
                position += got


def _as_text(lines: pa.LargeBinaryArray) -> list[pa.Array]:
    """Text, UTF-8 flag and raw bytes columns; invalid UTF-8 is shown with U+FFFD."""
    try:
        text = lines.cast(pa.large_string())
        return [text, _trues(len(lines)), pa.nulls(len(lines), pa.large_binary())]
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


def unshaped_lines(chunk: LineChunk) -> np.ndarray:
    """The lines of a chunk (0-based indexes) not shaped like a JSON object: not a brace first and a brace
    last (before the line end, LF or CRLF). A cut-off line, garbage, a blank line, JSON that is no object."""
    data, ends = chunk.data, chunk.ends
    starts = np.concatenate([np.zeros(1, dtype=np.int64), ends[:-1]])
    stops = ends - (data[ends - 1] == NEWLINE)  # the last line may have no newline
    stops -= (stops > starts) & (data[np.maximum(stops - 1, 0)] == CR)
    shaped = (stops > starts) & (data[starts] == OPEN) & (data[np.maximum(stops - 1, 0)] == CLOSE)
    return np.flatnonzero(~shaped)


def line_spans(path: Path, marks: np.ndarray, indexes: np.ndarray, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Where lines of a scanned range (bytes up to `end`) are in the file, [starts, ends) with the line end,
    found from the scan's marks (`Unshaped.marks`) by reading at most MARK_LINES lines before each: not the
    file again. `indexes`: 0-based among the range's lines."""
    starts, ends = np.empty(len(indexes), dtype=np.int64), np.empty(len(indexes), dtype=np.int64)
    with path.open("rb") as handle:
        for at, index in enumerate(np.asarray(indexes, dtype=np.int64).tolist()):
            position, skip = int(marks[index // MARK_LINES]), index % MARK_LINES
            block = bytearray()
            while block.count(b"\n") <= skip and position + len(block) < end:
                want = min(max(FINGERPRINT_BLOCK, len(block)), end - position - len(block))
                got = os.pread(handle.fileno(), want, position + len(block))
                if not got:
                    break
                block += got
            begin = 0
            for _ in range(skip):
                begin = block.index(b"\n", begin) + 1
            stop = block.find(b"\n", begin)
            starts[at], ends[at] = position + begin, position + (len(block) if stop < 0 else stop + 1)
    return starts, ends


def lines_at(path: Path, starts: np.ndarray, ends: np.ndarray, numbers: np.ndarray, uri: str) -> pa.Table:
    """The bytes [starts[i], ends[i]) of a file, a few lines, as one batch with line numbers `numbers`."""
    with path.open("rb") as handle:
        raws = [
            os.pread(handle.fileno(), int(stop - start), int(start)) for start, stop in zip(starts, ends, strict=True)
        ]
    joined = np.frombuffer(b"".join(raws), dtype=np.uint8)
    lengths = np.asarray([len(raw) for raw in raws], dtype=np.int64)
    offsets = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(lengths)])
    lines = _binaries(joined, offsets[:-1], offsets[1:])
    return pa.Table.from_arrays([_int64s(numbers), _repeated(uri, len(raws)), *_as_text(lines)], schema=BATCH_SCHEMA)


def _int64s(values: np.ndarray) -> pa.Array:
    """Arrow arrays built from buffers, never by `pa.array` or `pa.repeat`: their first call imports pandas
    (0.2 s, more than a bad line costs)."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _trues(count: int) -> pa.Array:
    return pa.Array.from_buffers(pa.bool_(), count, [None, pa.py_buffer(b"\xff" * ((count + 7) // 8))])


def _repeated(text: str, count: int) -> pa.Array:
    raw = text.encode()
    if len(raw) * count >= 2**31:  # beyond a string array's offsets
        return pa.repeat(text, count).cast(pa.string())
    offsets = np.arange(count + 1, dtype=np.int32) * np.int32(len(raw))
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(raw * count))


def _binaries(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> pa.LargeBinaryArray:
    """The byte ranges [starts[i], ends[i]) of `data` as one array (copied together)."""
    lengths = (ends - starts).astype(np.int64)
    offsets = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(lengths)])
    pieces = [data[start:end] for start, end in zip(starts, ends, strict=True)]
    joined = np.concatenate(pieces) if pieces else np.empty(0, dtype=np.uint8)
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(lengths), [None, pa.py_buffer(offsets), pa.py_buffer(joined)]
    )


def _batch(data: np.ndarray, first_line: int | None, uri: str, ends: np.ndarray) -> pa.Table:
    offsets = np.concatenate([np.zeros(1, dtype=np.int64), ends])
    count = len(ends)
    lines = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    line_numbers = (
        pa.nulls(count, pa.int64())
        if first_line is None
        else _int64s(np.arange(first_line, first_line + count, dtype=np.int64))
    )
    return pa.Table.from_arrays([line_numbers, _repeated(uri, count), *_as_text(lines)], schema=BATCH_SCHEMA)


def _newlines(data: np.ndarray, step: int = 1 << 20) -> np.ndarray:
    """Where the newlines of `data` are, found a MiB at a time (a MiB of flags stays in the cache: a third
    faster than flagging the whole chunk)."""
    found = [np.flatnonzero(data[at : at + step] == NEWLINE) + at for at in range(0, len(data), step)]
    return np.concatenate(found).astype(np.int64) if found else np.empty(0, dtype=np.int64)


@dataclass(frozen=True)
class LineChunk:
    """Whole lines of a file: `data` starts at byte `offset` of the file and holds lines `first_line`,
    `first_line + 1`, ...; line i (0-based) of the chunk is data[ends[i - 1]:ends[i]] (from 0 for i = 0)."""

    offset: int
    first_line: int
    data: np.ndarray  # of uint8
    ends: np.ndarray


def line_chunks(
    path: Path,
    on_bytes: Callable[[int], None] | None = None,
    *,
    start: int = 0,
    end: int | None = None,
    first_line: int = 1,
    max_line_bytes: int | None = None,
) -> Iterator[LineChunk]:
    """The lines of bytes [start, end) of a file (default: all of it), about CHUNK_BYTES at a time, numbered
    from `first_line`; a BOM at the start of the file is no part of line 1. A line longer than
    `max_line_bytes` raises `OverLimits` before more of it is held."""
    next_line = first_line
    carry = b""
    offset = start  # of the next chunk's first byte in the file
    remaining = None if end is None else end - start
    with path.open("rb") as handle:
        handle.seek(start)
        while True:
            want = CHUNK_BYTES if remaining is None else min(CHUNK_BYTES, remaining)
            buffer = np.empty(len(carry) + want, dtype=np.uint8)  # read into, never copied: one per chunk
            buffer[: len(carry)] = np.frombuffer(carry, dtype=np.uint8)
            got = handle.readinto(memoryview(buffer)[len(carry) :]) if want > 0 else 0
            if remaining is not None:
                remaining -= got
            data = buffer[: len(carry) + got]
            if offset == 0 and data[: len(BOM)].tobytes() == BOM:
                data, offset, got = data[len(BOM) :], len(BOM), got - len(BOM)
            if on_bytes and got:
                on_bytes(got)
            if not len(data):
                return
            ends = _newlines(data) + 1
            if got:
                if not len(ends):
                    if max_line_bytes is not None and len(data) > max_line_bytes:
                        raise OverLimits
                    carry = data.tobytes()
                    continue
                data, carry = data[: ends[-1]], data[ends[-1] :].tobytes()
            else:
                carry = b""
                if not len(ends) or ends[-1] != len(data):
                    ends = np.append(ends, len(data))  # a last line without a newline
            yield LineChunk(offset, next_line, data, ends)
            offset += len(data)
            next_line += len(ends)
            if not got:
                return


def read_jsonl(
    path: Path,
    on_bytes: Callable[[int], None] | None = None,
    *,
    start: int = 0,
    end: int | None = None,
    first_line: int = 1,
    uri: str | None = None,
) -> Iterator[pa.Table]:
    """Batches of the lines of one JSON-lines file, about CHUNK_BYTES each: bytes [start, end) (default: the
    whole file), numbered from `first_line` (an append read starts after the lines read before); `uri` names
    the file they come from when `path` holds a copy."""
    for chunk in line_chunks(path, on_bytes, start=start, end=end, first_line=first_line):
        yield _batch(chunk.data, chunk.first_line, uri or str(path), chunk.ends)


def chunk_batch(chunk: LineChunk, uri: str) -> pa.Table:
    """All the lines of a chunk as one batch."""
    return _batch(chunk.data, chunk.first_line, uri, chunk.ends)


def line_batch(chunk: LineChunk, indexes: np.ndarray, uri: str) -> pa.Table:
    """Lines of a chunk (0-based `indexes` into it) as one batch with their physical line numbers."""
    indexes = np.asarray(indexes, dtype=np.int64)
    starts = np.concatenate([np.zeros(1, dtype=np.int64), chunk.ends[:-1]])[indexes]
    lines = _binaries(chunk.data, starts, chunk.ends[indexes])
    columns = [_int64s(indexes + chunk.first_line), _repeated(uri, len(indexes)), *_as_text(lines)]
    return pa.Table.from_arrays(columns, schema=BATCH_SCHEMA)


def _read_no_symlink(path: Path) -> bytes:
    """A blob's bytes; a symlink put in its place since the folder was listed is refused, not followed."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def read_blobs(paths: list[Path], batch_size: int = 5000, batch_bytes: int = 64 * 1024 * 1024) -> Iterator[pa.Table]:
    """Batches of whole JSON files, one record per file (a blob may span many lines): at most `batch_size`
    files and, past the first file, `batch_bytes` bytes a batch (the caller leaves out blobs over its limit)."""
    group: list[Path] = []
    contents: list[bytes] = []
    held = 0

    def batch() -> pa.Table:
        lines = pa.array(contents, pa.large_binary())
        uris = pa.array([str(p) for p in group], pa.string())
        return pa.Table.from_arrays([pa.nulls(len(group), pa.int64()), uris, *_as_text(lines)], schema=BATCH_SCHEMA)

    for path in paths:
        content = _read_no_symlink(path).removeprefix(BOM)
        if group and (len(group) >= batch_size or held + len(content) > batch_bytes):
            yield batch()
            group, contents, held = [], [], 0
        group.append(path)
        contents.append(content)
        held += len(content)
    if group:
        yield batch()
