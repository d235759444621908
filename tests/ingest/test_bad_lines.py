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

import ingest.bad_lines
import ingest.files
import ingest.jsonl
from ingest.files import file_loads
from ingest.jsonl import read_jsonl
from ingest.load import Load, LoadOptions, load_batches
from tests.support.ingest import analyzer_event, jsonl_line, reaction_envelope, reaction_payload, session_record
from warehouse.connection import connect
from warehouse.contracts import ANALYZER_EVENTS, SESSION_FEEDBACK, TURN_REACTIONS, Contract

LINES = 20_000
QUARANTINE = "select source_uri, line_number, record_key, raw_text, raw_bytes, reason from raw.quarantine"


@pytest.fixture
def isolations(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each `land_setting_bad_lines_apart` call came to: True when DuckDB's reader took the good rows,
    False when the file went line by line after all (so the tests see which path they checked)."""
    seen: list[bool] = []
    original = ingest.files.land_setting_bad_lines_apart

    def recording(*args: Any, **kwargs: Any) -> Load | None:
        load = original(*args, **kwargs)
        seen.append(load is not None)
        return load

    monkeypatch.setattr(ingest.files, "land_setting_bad_lines_apart", recording)
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


def test_a_line_the_readers_count_differently_is_set_apart(tmp_path: Path, isolations: list[bool]) -> None:
    """A line of a form feed alone: a row to the line path (invalid JSON), none to DuckDB's reader. It is set
    apart with the bad lines, so the readers never meet it: the rows and the quarantine are the line path's."""
    source = _write(tmp_path / "feedback.jsonl", _lines({5: b"\x0c", 9: b"{bad"}, total=500))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (500, 498, 2, 0)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


def _miscounting(set_apart: Any) -> Any:
    def miscounting(*args: Any, **kwargs: Any) -> Any:
        apart = set_apart(*args, **kwargs)
        apart.kept_rows += 1
        return apart

    return miscounting


def test_when_the_readers_count_differently_the_file_goes_line_by_line(
    tmp_path: Path, isolations: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's reader must count, in the good lines, the rows the line path counts there; when it does not
    (simulated: the line path is told of one row more), the load rolls back and the file goes line by line."""
    for name in ("set_apart_unshaped", "set_apart_breaches", "set_apart_refused"):
        monkeypatch.setattr(ingest.bad_lines, name, _miscounting(getattr(ingest.bad_lines, name)))
    source = _write(tmp_path / "feedback.jsonl", _lines({9: b"{bad", 20: b"[]"}, total=500))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (500, 498, 2, 0)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [False]


def _event(n: int, **overrides: Any) -> bytes:
    return jsonl_line(analyzer_event(n, **overrides))


ODD_FILES: dict[str, tuple[dict[int, bytes], bytes, bytes]] = {
    # name: (bad lines by 0-based index, prefix, line end); small chunks put lines across chunk boundaries
    "valid JSON that is no object": (
        {3: b"null", 4: b"123", 5: b"true", 6: b"  [1]", 7: b'"x"', 8: b" 1.5 "},
        b"",
        b"\n",
    ),
    "objects with leading or trailing blanks are rows": (
        {3: b"  " + _event(3), 4: b"\t" + _event(4) + b"  \t", 10: b"{bad"},
        b"",
        b"\n",
    ),
    "a carriage return inside a line": (
        {
            3: _event(3).replace(b'", "', b'",\r"', 1),  # valid JSON: \r is whitespace between tokens
            4: b'{"event_id": "cut\rhere"}',  # a raw \r inside a string: invalid JSON
            5: _event(5) + b"\r" + _event(6),  # two objects split by a lone \r: one line, invalid JSON
            6: b"\r",  # a blank line
        },
        b"",
        b"\n",
    ),
    "CRLF, a BOM and a bad first line": ({0: b"{bad", 1: b"", 2: b"[]"}, b"\xef\xbb\xbf", b"\r\n"),
    "many bad lines in a row, blank lines among them": (
        {n: (b"" if n % 7 == 0 else b"{bad %d" % n) for n in range(100, 420)},
        b"",
        b"\n",
    ),
    "malformed inside the braces (DuckDB's reader refuses them too)": (
        {
            3: b'{"event_id": "x", "s": "\xff\xfe"}',  # not UTF-8
            4: b'{"event_id": "x", "s": "a\x01b"}',  # a raw control character in a string
            5: _event(5) + _event(6),  # two objects on one line
            6: b'{"event_id": "x" /* a comment */}',
            7: b'{"event_id": "\\q"}',  # a bad escape
            8: b'{"event_id": "\\ud800"}',  # a lone surrogate
            9: b'{"event_id": "a\x00b"}',
            10: b'{"event_id": {"nested": 1}',  # cut off after an inner object
            11: b"{event_id: 1}",
            12: b"{'event_id': 'x'}",
        },
        b"",
        b"\n",
    ),
    "not UTF-8 in a string of an object": (
        {3: b'{"event_id": "\xff\xfe"}', 4: _event(4).replace(b"no, use", b"\xc3(")},
        b"",
        b"\n",
    ),
}


@pytest.mark.parametrize("name", list(ODD_FILES))
def test_odd_lines_across_chunk_boundaries(
    tmp_path: Path, name: str, isolations: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest.jsonl, "CHUNK_BYTES", 4096)  # about ten lines a chunk: many boundaries
    bad, prefix, newline = ODD_FILES[name]
    source = _write(tmp_path / "feedback.jsonl", _lines(bad, total=600), prefix=prefix, newline=newline)
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


def test_a_key_twice_in_an_object_goes_line_by_line(tmp_path: Path, isolations: list[bool]) -> None:
    """Valid JSON that DuckDB's reader refuses (a key twice) and the line path takes: the readers disagree on
    a line, so the file goes line by line."""
    source = _write(
        tmp_path / "feedback.jsonl", _lines({7: b"{bad", 9: _event(9)[:-1] + b', "skill_id": "x"}'}, total=300)
    )
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [False]


@pytest.mark.parametrize("newline_at_end", [True, False])
def test_the_last_line_bad(tmp_path: Path, newline_at_end: bool, isolations: list[bool]) -> None:
    lines = _lines({999: b'{"event_id": "cut'}, total=1000)
    source = tmp_path / "feedback.jsonl"
    source.write_bytes(b"\n".join(lines) + (b"\n" if newline_at_end else b""))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (1000, 999, 1, 0)
    assert ours.execute("select line_number, raw_text from raw.quarantine").fetchall() == [
        (1000, '{"event_id": "cut')  # the text as read, less its line end
    ]
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


def test_a_good_last_line_without_a_newline_lands(tmp_path: Path, isolations: list[bool]) -> None:
    source = tmp_path / "feedback.jsonl"
    source.write_bytes(b"\n".join(_lines({10: b"{bad"}, total=300)))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (300, 299, 1, 0)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


@pytest.mark.parametrize("with_malformed_lines", [False, True])
def test_valid_json_that_breaks_the_contract_is_quarantined_with_its_reason(
    tmp_path: Path, with_malformed_lines: bool, isolations: list[bool]
) -> None:
    """Rows DuckDB's reader parses but the contract refuses (a wrong type, a missing key, a value out of
    range): alone, or after malformed lines (found first, then every line the line path refuses)."""
    bad = {
        LINES - 300: _event(LINES - 300, confidence="high"),
        LINES - 200: jsonl_line(analyzer_event(LINES - 200, drop=["event_id"])),
        LINES - 100: _event(LINES - 100, turns_to_feedback=-1),
    }
    if with_malformed_lines:
        bad |= {5: b"{bad", 6: b"[]"}
    source = _write(tmp_path / "feedback.jsonl", _lines(bad))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (LINES, LINES - len(bad), len(bad), 0)
    reasons = dict(ours.execute("select line_number, reason from raw.quarantine").fetchall())
    assert reasons[LINES - 300 + 1] == "confidence: expected a number, got varchar"
    assert reasons[LINES - 200 + 1] == "event_id: missing required field"
    assert reasons[LINES - 100 + 1].startswith("turns_to_feedback: -1 is outside")
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


def test_only_bad_lines(tmp_path: Path, isolations: list[bool]) -> None:
    source = _write(tmp_path / "feedback.jsonl", [b"{bad %d" % n for n in range(50)] + [b"", b"[]"])
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (51, 0, 51, 0)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


def test_too_much_bad_text_goes_line_by_line(
    tmp_path: Path, isolations: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest.bad_lines, "APART_LIMIT_BYTES", 100)
    source = _write(tmp_path / "feedback.jsonl", _lines({n: b"{bad line %d" % n for n in range(10, 30)}, total=500))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (500, 480, 20, 0)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [False]


def test_more_unshaped_lines_than_a_scan_remembers(
    tmp_path: Path, isolations: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond UNSHAPED_LIMIT the scan forgets them; the line path's whole validation finds the bad lines."""
    monkeypatch.setattr(ingest.jsonl, "UNSHAPED_LIMIT", 5)
    source = _write(tmp_path / "feedback.jsonl", _lines({n: b"{bad line %d" % n for n in range(10, 30)}, total=500))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (500, 480, 20, 0)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


def test_bad_lines_in_an_appended_part_keep_their_line_numbers(tmp_path: Path, isolations: list[bool]) -> None:
    """The second load reads only the appended bytes; its bad lines are numbered on from the first load's,
    exactly as a fresh read of the whole file numbers them."""
    first = _lines({}, total=400)
    bad = {30: b"{bad", 31: b"", 32: b"\x0c", 90: _event(490, outcome="maybe")}
    appended = [bad.get(n, _event(400 + n)) for n in range(200)]
    source = _write(tmp_path / "feedback.jsonl", first)
    ours = connect(tmp_path / "ours.duckdb")
    file_loads(ours, ANALYZER_EVENTS, [source], LoadOptions())
    with source.open("ab") as handle:
        handle.write(b"".join(line + b"\n" for line in appended))
    (result,) = file_loads(ours, ANALYZER_EVENTS, [source], LoadOptions())
    assert ours.execute(
        "select start_offset > 0 from raw.load_manifest order by finished_at desc limit 1"
    ).fetchall() == [(True,)]
    assert _counts(result) == (199, 196, 3, 0)
    assert ours.execute("select line_number, reason from raw.quarantine order by line_number").fetchall() == [
        (431, "invalid JSON"),
        (433, "invalid JSON"),
        (491, "outcome: maybe is not one of correction, partial, acceptance"),
    ]
    reference = connect(tmp_path / "reference.duckdb")
    load_batches(reference, ANALYZER_EVENTS, str(source.resolve()), read_jsonl(source.resolve()), LoadOptions())
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]


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


# every way a shaped, valid JSON line breaks the analyzer contract (0-based line: the line)
BREACHES = {
    101: jsonl_line(analyzer_event(101, drop=["event_id"])),  # a missing required field
    202: _event(202, confidence="0.5"),  # a string where a number is due
    303: _event(303, skill_id={"name": "x"}),  # an object where a string is due
    404: _event(404, timestamp="yesterday at noon"),  # an unparseable timestamp
    505: _event(505, outcome="maybe"),  # outside the enum
    606: _event(606, turns_to_feedback=1.5),  # a fraction where an integer is due
    707: _event(707, ai_tools_used="Read"),  # a string where a list is due
}
UNSHAPED_AND_INVALID = {
    10: b"cut in the middle",  # unshaped
    11: b"",  # blank: no row
    20: b'{"a": }',  # invalid JSON shaped like an object
    30: _event(30)[:-10] + b"}",  # a truncated object, its brace put back
}


@pytest.fixture
def refusing_passes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the line path validated whole (`set_apart_refused`: the slow second read of a file)."""
    seen: list[Path] = []
    original = ingest.bad_lines.set_apart_refused

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(args[2])
        return original(*args, **kwargs)

    monkeypatch.setattr(ingest.bad_lines, "set_apart_refused", recording)
    return seen


@pytest.mark.parametrize("with_other_bad_lines", [False, True])
def test_lines_that_break_the_contract_keep_the_fast_path(
    tmp_path: Path,
    with_other_bad_lines: bool,
    isolations: list[bool],
    refusing_passes: list[Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each kind of contract breach, alone or among unshaped and invalid lines, with lines across chunks and
    marks (BOM, CRLF): DuckDB's reader lands the good rows, no line-path pass reads the file again, and the
    rows and the quarantine (line numbers, text, reasons) are the line path's."""
    monkeypatch.setattr(ingest.jsonl, "CHUNK_BYTES", 64 * 1024)
    bad = BREACHES | (UNSHAPED_AND_INVALID if with_other_bad_lines else {})
    source = _write(tmp_path / "feedback.jsonl", _lines(bad, total=1_000), prefix=b"\xef\xbb\xbf", newline=b"\r\n")
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    rows = 1_000 - (1 if with_other_bad_lines else 0)
    assert _counts(result) == _counts(expected) == (rows, 1_000 - len(bad), rows - 1_000 + len(bad), 0)
    reasons = dict(ours.execute("select line_number, reason from raw.quarantine").fetchall())
    assert reasons[102] == "event_id: missing required field"
    assert reasons[203] == "confidence: expected a number, got varchar"
    assert reasons[304] == "skill_id: expected a string, got object"
    assert reasons[405] == "timestamp: not an ISO-8601 timestamp: yesterday at noon"
    assert reasons[506] == "outcome: maybe is not one of correction, partial, acceptance"
    assert set(reasons) == {n + 1 for n in bad if bad[n]}
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True]
    assert refusing_passes == [], "the file was validated line by line again"


def test_contract_breaches_in_an_appended_part_keep_the_fast_path(
    tmp_path: Path, isolations: list[bool], refusing_passes: list[Path]
) -> None:
    """Only the appended bytes are read; the breaches there are numbered on from the lines read before."""
    source = _write(tmp_path / "feedback.jsonl", _lines({}, total=300))
    ours = connect(tmp_path / "ours.duckdb")
    file_loads(ours, ANALYZER_EVENTS, [source], LoadOptions())
    appended = [_event(300 + n, confidence="high") if n in (5, 150) else _event(300 + n) for n in range(200)]
    with source.open("ab") as handle:
        handle.write(b"".join(line + b"\n" for line in appended))
    (result,) = file_loads(ours, ANALYZER_EVENTS, [source], LoadOptions())
    assert _counts(result) == (200, 198, 2, 0)
    assert ours.execute("select line_number from raw.quarantine order by 1").fetchall() == [(306,), (451,)]
    reference = connect(tmp_path / "reference.duckdb")
    load_batches(reference, ANALYZER_EVENTS, str(source.resolve()), read_jsonl(source.resolve()), LoadOptions())
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [True] and refusing_passes == []


def test_every_kind_of_bad_line_and_a_key_twice(tmp_path: Path, isolations: list[bool]) -> None:
    """Every kind at once, a key written twice among them (DuckDB's reader refuses that object, the line path
    takes it: the readers disagree, so the file goes line by line): the line path's rows and quarantine."""
    bad = BREACHES | UNSHAPED_AND_INVALID | {40: _event(40)[:-1] + b', "skill_id": "x"}'}
    source = _write(tmp_path / "feedback.jsonl", _lines(bad, total=1_000))
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source)
    assert _counts(result) == _counts(expected) == (999, 989, 10, 0)
    _assert_same(ours, reference, ANALYZER_EVENTS)
    assert isolations == [False]


def test_session_feedback_breaches_keep_the_fast_path_and_its_privacy(
    tmp_path: Path, isolations: list[bool], refusing_passes: list[Path]
) -> None:
    """The session feedback upstream's contract (only its fields kept in the quarantine) with breaches."""
    items = [jsonl_line(session_record(n)) for n in range(500)]
    items[50] = jsonl_line(session_record(50, label="meh"))
    items[60] = jsonl_line(session_record(60, recorded_at="not a time", secret="keep out"))
    items[70] = jsonl_line(session_record(70, drop=["id"]))
    source = _write(tmp_path / "sessions.jsonl", items)
    ours, reference, result, expected = _ours_and_the_line_paths(tmp_path, source, SESSION_FEEDBACK)
    assert _counts(result) == _counts(expected) == (500, 497, 3, 0)
    assert "keep out" not in str(ours.execute(QUARANTINE).fetchall())
    _assert_same(ours, reference, SESSION_FEEDBACK)
    assert isolations == [True] and refusing_passes == []
