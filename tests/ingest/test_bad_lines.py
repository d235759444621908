"""A JSON-lines file with a few bad lines keeps DuckDB's reader for its good rows; only the bad rows go the
line-by-line way. The oracle: the line-by-line path alone (`load_batches` over `read_jsonl`, what every bad
file went through before) on the same file, in a warehouse of its own: the same rows land, and the same
quarantine rows (line numbers, raw text and bytes, reasons) and counts come out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from ingest.files import file_loads
from ingest.jsonl import read_jsonl
from ingest.load import Load, LoadOptions, load_batches
from tests.support.ingest import analyzer_event, jsonl_line, reaction_envelope, reaction_payload
from warehouse.connection import connect
from warehouse.contracts import ANALYZER_EVENTS, TURN_REACTIONS, Contract

LINES = 20_000
QUARANTINE = "select source_uri, line_number, record_key, raw_text, raw_bytes, reason from raw.quarantine"


@pytest.fixture
def isolations(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each `Load.land_isolating_bad_rows` call returned: True when DuckDB's reader took the good rows,
    False when the file went line by line after all (so the tests see which path they checked)."""
    seen: list[bool] = []
    original = Load.land_isolating_bad_rows

    def recording(self: Load, *args: Any, **kwargs: Any) -> bool:
        seen.append(original(self, *args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(Load, "land_isolating_bad_rows", recording)
    return seen


def _lines(bad: dict[int, bytes], total: int = LINES) -> list[bytes]:
    """`total` good analyzer events, with the lines of `bad` (0-based) replaced."""
    return [bad.get(n, jsonl_line(analyzer_event(n))) for n in range(total)]


def _write(path: Path, lines: list[bytes], *, prefix: bytes = b"", newline: bytes = b"\n") -> Path:
    path.write_bytes(prefix + b"".join(line + newline for line in lines))
    return path


def _ours_and_the_line_paths(tmp_path: Path, source: Path, contract: Contract = ANALYZER_EVENTS) -> tuple[Any, ...]:
    ours = connect(tmp_path / "ours.duckdb")
    (result,) = file_loads(ours, contract, [source], LoadOptions())
    reference = connect(tmp_path / "reference.duckdb")
    expected = load_batches(reference, contract, str(source.resolve()), read_jsonl(source.resolve()), LoadOptions())
    return ours, reference, result, expected


def _assert_same(ours: duckdb.DuckDBPyConnection, reference: duckdb.DuckDBPyConnection, contract: Contract) -> None:
    columns = ", ".join(f'"{c}"' for c in contract.columns) + ", _source_uri"
    for sql in (f"select {columns} from raw.{contract.table}", QUARANTINE):
        mine = sorted(ours.execute(sql).fetchall(), key=repr)
        theirs = sorted(reference.execute(sql).fetchall(), key=repr)
        assert mine == theirs, sql


def _counts(result: Any) -> tuple[int, int, int, int]:
    return result.rows_read, result.loaded, result.quarantined, result.duplicates


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_a_bad_line_anywhere_lands_the_rest_and_quarantines_it_exactly(
    tmp_path: Path, where: str, isolations: list[bool]
) -> None:
    line = {"start": 0, "middle": LINES // 2, "end": LINES - 1}[where]
    source = _write(tmp_path / "feedback.jsonl", _lines({line: b'{"event_id": "cut'}))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (LINES, LINES - 1, 1, 0)
    assert ours.execute("select line_number, reason from raw.quarantine").fetchall() == [(line + 1, "invalid JSON")]
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True], "the good rows did not go through DuckDB's reader"


def test_every_kind_of_bad_line_at_once(tmp_path: Path, isolations: list[bool]) -> None:
    """Malformed, not UTF-8, not an object, breaking the contract (with its key), a repeated key, blank and
    whitespace-only lines, CRLF line ends and a BOM: what lands and what is quarantined, line by line, as the
    line-by-line path has it."""
    bad = {
        3: b"{broken",
        10: b"\xff\xfe not utf-8",
        11: b"[1, 2, 3]",
        12: b'"a string"',
        40: jsonl_line(analyzer_event(40, confidence=7.5)),
        41: jsonl_line(analyzer_event(41, outcome="maybe")),
        50: jsonl_line(analyzer_event(7)),  # the key of line 8 again
        60: b"",
        61: b"   \t ",
        62: b"{}",
        LINES - 2: jsonl_line(analyzer_event(LINES - 2, drop=["skill_id"])),
    }
    source = _write(tmp_path / "feedback.jsonl", _lines(bad), prefix=b"\xef\xbb\xbf", newline=b"\r\n")
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected)
    assert result.quarantined == 8 and result.duplicates == 1
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


def test_a_line_the_readers_count_differently_falls_back_to_the_line_by_line_path(
    tmp_path: Path, isolations: list[bool]
) -> None:
    """A line of a form feed alone: whatever DuckDB's reader makes of it, the rows and the quarantine are the
    line-by-line path's (when the two readers disagree on what a line is, the file is read line by line)."""
    source = _write(tmp_path / "feedback.jsonl", _lines({5: b"\x0c", 9: b"{bad"}, total=500))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [False], "the two readers disagree on that line: the file goes line by line"


def test_a_nested_contract_keeps_its_exact_quarantine(tmp_path: Path, isolations: list[bool]) -> None:
    """Reactions (keys nested in the envelope, privacy rules on the quarantined text) with bad lines."""
    items = [jsonl_line(reaction_envelope(reaction_payload(n))) for n in range(2_000)]
    items[100] = b'{"payload": '
    items[700] = jsonl_line(reaction_envelope(reaction_payload(700, drop=["origin"])))
    source = _write(tmp_path / "reactions.jsonl", items)
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source, TURN_REACTIONS)
    assert _counts(result) == _counts(expected) and result.quarantined == 2
    _assert_same(ours, reference, TURN_REACTIONS)
    assert isolations == [True]
