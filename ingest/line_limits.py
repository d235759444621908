"""Bounds on one JSON-lines line: a line longer than `max_line_bytes`, or nested deeper than `max_depth`, is
never parsed. It is quarantined with its reason, its length and its SHA-256 (`raw.quarantine.record_key`),
its text cut to TEXT_CAP bytes; the file's other lines load as usual.

The checksum pass (`ingest.jsonl.scan_lines`) raises `OverLimits` at the first such line, holding at most
`max_line_bytes` plus a chunk of any line; `find_over_limits` then finds them all in one streaming pass of
fixed-size blocks, and `write_without` copies the file with a blank line in place of each (blank lines are
no rows), so that every reader after it sees bounded lines only and the line numbers stay those of the file.

Defaults (docs/operations.md): 16 MiB a line (the largest upstream record, a reaction or a workspace row with
its JSON context, is a few KiB; DuckDB's reader allows 64 MiB) and 64 levels of nesting (upstream records
nest a handful of levels; a parser's memory grows with the depth: 20 million `[` exhaust 1 GB).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64
TEXT_CAP = 1024  # bytes of a line over the limits kept as its text in the quarantine
BLOCK_BYTES = 8 * 1024 * 1024
NEWLINE, CR = 10, 13
# a byte b with b | 0x20 == these is an opening ([ {) or closing (] }) bracket
OPENING, CLOSING = ord("{"), ord("}")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


@dataclass(frozen=True)
class LineLimits:
    """The bounds of a line (`[limits]` of a sources config, docs/operations.md)."""

    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH


@dataclass(frozen=True)
class OverLimitLine:
    """A line over the limits: its number, its bytes [start, end) in the file (line end included), why."""

    number: int
    start: int
    end: int
    reason: str
    sha256: str
    length: int  # bytes, line end excluded
    head: bytes  # its first TEXT_CAP bytes


class OverLimits(Exception):
    """A scan met a line over the limits: read the file with `find_over_limits`."""


def opener_counts(data: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The number of opening brackets ([ or {, in strings too) of each line of `data` (lines end at `ends`):
    an upper bound of its nesting depth, cheap to count."""
    openers = np.flatnonzero((data | 0x20) == OPENING)
    return np.diff(np.searchsorted(openers, np.concatenate([np.zeros(1, dtype=np.int64), ends])))


def nesting_depth(line: bytes) -> int:
    """The deepest nesting of brackets outside JSON strings (an unfinished string counts as no string)."""
    bare = np.frombuffer(_STRING.sub(b'""', line), dtype=np.uint8) | 0x20
    steps = (bare == OPENING).astype(np.int32) - (bare == CLOSING).astype(np.int32)
    return int(np.cumsum(steps).max(initial=0))


def too_deep(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, max_depth: int) -> bool:
    """Whether a line of `data` (lines [starts[i], ends[i])) nests deeper than `max_depth`."""
    counts = opener_counts(data, ends) if len(ends) else np.empty(0, dtype=np.int64)
    for index in np.flatnonzero(counts > max_depth):
        if nesting_depth(data[starts[index] : ends[index]].tobytes()) > max_depth:
            return True
    return False


def _content_end(handle: int, start: int, end: int) -> int:
    """The end of a line's content: before its LF or CRLF."""
    stop = end
    for line_end in (b"\n", b"\r"):
        if stop > start and os.pread(handle, 1, stop - 1) == line_end:
            stop -= 1
    return stop


def _described(handle: int, number: int, start: int, end: int, reason: str) -> OverLimitLine:
    stop = _content_end(handle, start, end)
    digest = hashlib.sha256()
    at = start
    while at < stop:
        block = os.pread(handle, min(BLOCK_BYTES, stop - at), at)
        if not block:
            break
        digest.update(block)
        at += len(block)
    head = os.pread(handle, min(TEXT_CAP, stop - start), start)
    return OverLimitLine(number, start, end, reason, digest.hexdigest(), stop - start, head)


def find_over_limits(path: Path, start: int, end: int, first_line: int, limits: LineLimits) -> list[OverLimitLine]:
    """The lines of bytes [start, end) of a file (numbered from `first_line`) over the limits, in one pass of
    BLOCK_BYTES reads: flat memory, whatever the lines. A line longer than max_line_bytes is never held; a
    shorter one with more opening brackets than max_depth is read once more to measure its depth."""
    found: list[OverLimitLine] = []
    suspects: list[tuple[int, int, int]] = []  # number, start, end: maybe too deep
    buffer = np.empty(BLOCK_BYTES, dtype=np.uint8)
    line_start, line_number, carried_openers = start, first_line, 0
    with path.open("rb") as handle:
        fd = handle.fileno()

        def judge(number: int, begin: int, stop: int, openers: int) -> None:
            if stop - begin > limits.max_line_bytes:
                reason = f"line over {limits.max_line_bytes:,} bytes: not parsed"
                found.append(_described(fd, number, begin, stop, reason))
            elif openers > limits.max_depth:
                suspects.append((number, begin, stop))

        position = start
        handle.seek(start)
        while position < end:
            got = handle.readinto(memoryview(buffer)[: min(BLOCK_BYTES, end - position)])
            if not got:
                break
            data = buffer[:got]
            ends = np.flatnonzero(data == NEWLINE) + 1
            counts = opener_counts(data, np.append(ends, got))
            if len(ends):
                lengths = np.diff(np.concatenate([np.zeros(1, dtype=np.int64), ends]))
                openers = counts[:-1].copy()
                openers[0] += carried_openers
                lengths[0] += position - line_start
                starts = np.concatenate([[line_start], position + ends[:-1]]).astype(np.int64)
                flagged = np.flatnonzero((lengths > limits.max_line_bytes) | (openers > limits.max_depth))
                for index in flagged:
                    begin = int(starts[index])
                    judge(line_number + int(index), begin, begin + int(lengths[index]), int(openers[index]))
                line_number += len(ends)
                line_start = position + int(ends[-1])
                carried_openers = int(counts[-1])
            else:
                carried_openers += int(counts[-1])
            position += got
        if position > line_start:  # a last line without a newline
            judge(line_number, line_start, position, carried_openers)
        for number, begin, stop in suspects:
            if nesting_depth(os.pread(fd, stop - begin, begin)) > limits.max_depth:
                found.append(_described(fd, number, begin, stop, f"nested deeper than {limits.max_depth} levels"))
    return sorted(found, key=lambda line: line.number)


def write_without(path: Path, start: int, end: int, lines: list[OverLimitLine], target: Path) -> None:
    """Bytes [start, end) of `path` into `target`, each of `lines` (in order) replaced by a blank line."""
    with path.open("rb") as source, target.open("wb") as out:
        at = start
        for begin, stop in [*((line.start, line.end) for line in lines), (end, end)]:
            source.seek(at)
            remaining = begin - at
            while remaining > 0:
                block = source.read(min(BLOCK_BYTES, remaining))
                if not block:
                    break
                out.write(block)
                remaining -= len(block)
            if stop > begin and os.pread(source.fileno(), 1, stop - 1) == b"\n":
                out.write(b"\n")  # the line's place, for the numbers of the lines after it
            at = stop


def blob_over_limits(path: Path, name: str, limits: LineLimits) -> OverLimitLine | None:
    """A JSON blob (one record per file) larger than max_line_bytes, described like a long line: never read
    whole, its SHA-256 taken in BLOCK_BYTES reads. None when the file is within the limit."""
    size = path.stat().st_size
    if size <= limits.max_line_bytes:
        return None
    with path.open("rb") as handle:
        reason = f"blob {name} over {limits.max_line_bytes:,} bytes: not parsed"
        return _described(handle.fileno(), 1, 0, size, reason)
