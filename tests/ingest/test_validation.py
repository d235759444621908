"""Every class of bad input is quarantined with its reason (and line number); what is valid lands exactly.

Each source gets one file holding one line per case, ingested once per module
with the real CLI; the tests then look at what happened to their own line.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.ingest import (
    analyzer_event,
    count,
    eval_run,
    ingest_ok,
    jsonl_line,
    manifest,
    parse_report,
    places_containing,
    quarantine,
    query,
    reaction_envelope,
    reaction_payload,
    rn_of,
    rows,
    session_record,
    workspace_feedback,
    workspace_session,
    write_jsonl,
    write_session_sqlite,
)
from tests.support.postgres_tables import (
    INDEX_SCHEMA,
    conv_row,
    create_pg_conv_messages,
    create_pg_session_feedback,
    index_rn,
)

BOM = b"\xef\xbb\xbf"
BLANK = "blank"  # a case that is not a row at all
NON_ASCII = "把这个函数改回去 🙏 — ça ne marche pas, Ärger 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"
RAW_SESSION_ID = "thread-7f3a9c-RAW-SESSION-ID"
FREE_TEXT = "FREE-TEXT-what the user typed"


@dataclass
class Case:
    name: str
    line: dict[str, Any] | str | bytes
    reason: tuple[str, ...] | None = None  # substrings of the quarantine reason; None: the line lands
    newline: bytes = b"\n"


@dataclass
class Ingested:
    db: Path
    source: Path
    cases: dict[str, Case]
    line_of: dict[str, int]
    stdout: str


def _ingest_cases(folder: Path, command: str, file_name: str, cases: list[Case], *, bom: bool = True) -> Ingested:
    folder.mkdir(parents=True, exist_ok=True)
    data = BOM if bom else b""
    line_of = {}
    for number, case in enumerate(cases, start=1):
        data += jsonl_line(case.line) + case.newline
        line_of[case.name] = number
    source = folder / file_name
    source.write_bytes(data)
    db = folder / "w.duckdb"
    result = ingest_ok(command, source, "--db", db)
    return Ingested(db, source, {c.name: c for c in cases}, line_of, result.stdout)


def _assert_quarantined(ingested: Ingested, name: str) -> dict[str, Any]:
    case = ingested.cases[name]
    line = ingested.line_of[name]
    found = [q for q in quarantine(ingested.db) if q["line_number"] == line]
    assert len(found) == 1, f"line {line} ({name}) quarantined {len(found)} times: {quarantine(ingested.db)}"
    (row,) = found
    assert row["source_uri"] == str(ingested.source.resolve())
    for part in case.reason or ():
        assert part.lower() in row["reason"].lower(), f"{name}: {part!r} not in reason {row['reason']!r}"
    return row


def _assert_totals(ingested: Ingested) -> None:
    cases = ingested.cases.values()
    rows_read = sum(c.reason != BLANK for c in cases)
    bad = sum(c.reason not in (None, BLANK) for c in cases)
    (load,) = manifest(ingested.db)
    assert (load["rows_read"], load["rows_loaded"], load["rows_quarantined"], load["rows_duplicate"]) == (
        rows_read,
        rows_read - bad,
        bad,
        0,
    )
    assert parse_report(ingested.stdout)[2] == {
        "read": rows_read,
        "loaded": rows_read - bad,
        "quarantined": bad,
        "duplicates": 0,
    }
    assert count(ingested.db, "quarantine") == bad


# -- analyzer events ------------------------------------------------------------------------------------
def _ev(n: int, **kw: Any) -> dict[str, Any]:
    return analyzer_event(n, **kw)


ANALYZER_CASES = [
    Case("good", _ev(100)),
    Case("missing skill_id", _ev(101, drop=["skill_id"]), ("skill_id", "missing")),
    Case("missing event_id", _ev(102, drop=["event_id"]), ("event_id", "missing")),
    Case("outcome outside enum", _ev(103, outcome="approved"), ("outcome", "approved")),
    Case("correction_type outside enum", _ev(104, correction_type="oops"), ("correction_type", "oops")),
    Case("dimension_hint outside enum", _ev(105, dimension_hint="speed"), ("dimension_hint", "speed")),
    Case("confidence above 1", _ev(106, confidence=1.5), ("confidence", "1.5")),
    Case("confidence below 0", _ev(107, confidence=-0.1), ("confidence", "-0.1")),
    Case("negative count", _ev(108, turns_to_feedback=-1), ("turns_to_feedback", "-1")),
    Case("timestamp that does not parse", _ev(109, timestamp="yesterday"), ("timestamp", "yesterday")),
    Case("timestamp impossible date", _ev(110, timestamp="2026-02-30T10:00:00Z"), ("timestamp",)),
    Case("timestamp as a number", _ev(111, timestamp=1777600000), ("timestamp",)),
    # analyze.py writes "" for an entry without a timestamp (an undated event, which lands); nothing else is "no time"
    Case("timestamp blank", _ev(126, timestamp=" "), ("timestamp", "not an ISO-8601 timestamp")),
    Case("timestamp missing", _ev(127, drop=["timestamp"]), ("timestamp", "missing")),
    Case("timestamp null", _ev(128, timestamp=None), ("timestamp", "missing")),
    Case("invalid JSON", '{"event_id": "abc", "timestamp": "2026-05-01T1', ("json",)),
    Case("invalid UTF-8", b'{"event_id": "bad\xff\xfeutf8", "skill_id": "k\xc3"}', ("utf-8",)),
    Case("JSON array", "[1, 2, 3]", ("object",)),
    Case("JSON string", '"just a string"', ("object",)),
    Case("JSON number", "42", ("object",)),
    Case("JSON null", "null", ("object",)),
    Case("confidence as a string", _ev(112, confidence="0.9"), ("confidence", "expected")),
    Case("turns_to_feedback as a string", _ev(113, turns_to_feedback="2"), ("turns_to_feedback", "expected")),
    Case("ai_tools_used as a string", _ev(114, ai_tools_used="Read"), ("ai_tools_used", "expected")),
    Case("event_id as a number", _ev(115, event_id=12345), ("event_id", "expected")),
    Case("two problems", _ev(116, outcome="nope", confidence=7), ("outcome", "confidence")),
    Case("bad line with CRLF", _ev(117, outcome="approved"), ("outcome",), newline=b"\r\n"),
    Case("blank", "", BLANK),
    Case("whitespace only", "   \t ", BLANK),
    Case("blank CRLF", "", BLANK, newline=b"\r\n"),
    Case("unknown extra fields", {**_ev(118), "unknown_field": 1, "nested": {"deep": [1, 2]}}),
    Case("non-ASCII text", _ev(119, user_message_snippet=NON_ASCII, session_id="会话-1")),
    Case("good with CRLF", _ev(120), newline=b"\r\n"),
    Case("timestamp Z", _ev(121, timestamp="2026-05-01T12:00:00Z")),
    Case("timestamp +02:00", _ev(122, timestamp="2026-05-01T14:00:00+02:00")),
    Case("timestamp fractional", _ev(123, timestamp="2026-05-01T12:00:00.123456Z")),
    Case("timestamp -05:00 fractional", _ev(124, timestamp="2026-05-01T23:30:00.5-05:00")),
    Case("null optional fields", _ev(125, correction_type=None, dimension_hint=None, turns_to_feedback=None)),
    Case("timestamp empty (undated)", _ev(129, timestamp="")),
    # one event of year 1 would stretch every daily series of the period marts over 2,000 years
    Case("timestamp of year 1", _ev(130, timestamp="0001-01-01T00:00:00Z"), ("timestamp",)),
    Case("timestamp of 1999", _ev(131, timestamp="1999-12-31T23:59:59Z"), ("timestamp",)),
]
ANALYZER_UTC = {
    "timestamp Z": dt.datetime(2026, 5, 1, 12, 0, 0),
    "timestamp +02:00": dt.datetime(2026, 5, 1, 12, 0, 0),
    "timestamp fractional": dt.datetime(2026, 5, 1, 12, 0, 0, 123456),
    "timestamp -05:00 fractional": dt.datetime(2026, 5, 2, 4, 30, 0, 500000),
    "timestamp empty (undated)": None,
}


@pytest.fixture(scope="module")
def analyzer_dirty(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    return _ingest_cases(tmp_path_factory.mktemp("analyzer"), "analyzer", "feedback.jsonl", ANALYZER_CASES)


@pytest.mark.parametrize("name", [c.name for c in ANALYZER_CASES if c.reason not in (None, BLANK)])
def test_analyzer_bad_line_is_quarantined_with_reason_and_line(analyzer_dirty: Ingested, name: str) -> None:
    row = _assert_quarantined(analyzer_dirty, name)
    assert row["source"] == "analyzer" and row["target_table"] == "analyzer_events"
    line = analyzer_dirty.cases[name].line
    if isinstance(line, bytes):
        assert row["raw_bytes"] is not None and row["raw_bytes"].rstrip(b"\r\n") == line, "the bytes as read"
    else:
        assert row["raw_text"] == jsonl_line(line).decode(), "the line is kept as read (without its line end)"
    if isinstance(line, dict) and isinstance(line.get("event_id"), str):
        assert row["record_key"] == line["event_id"]
        landed = query(
            analyzer_dirty.db, "select count(*) from raw.analyzer_events where event_id = ?", [line["event_id"]]
        )
        assert landed == [(0,)], "a quarantined line does not land"


def test_analyzer_dirty_file_counts(analyzer_dirty: Ingested) -> None:
    _assert_totals(analyzer_dirty)


def test_analyzer_valid_lines_land_exactly(analyzer_dirty: Ingested) -> None:
    landed = {r["event_id"]: r for r in rows(analyzer_dirty.db, "select * from raw.analyzer_events")}
    good = [c for c in ANALYZER_CASES if c.reason is None]
    assert set(landed) == {c.line["event_id"] for c in good}
    for case in good:
        row, event = landed[case.line["event_id"]], case.line
        for name in ("session_id", "skill_id", "outcome", "confidence", "correction_type", "user_message_snippet"):
            assert row[name] == event[name], (case.name, name)
        assert row["turns_to_feedback"] == event["turns_to_feedback"]
        assert row["ai_tools_used"] == event["ai_tools_used"]
        if case.name in ANALYZER_UTC:
            assert row["timestamp"] == ANALYZER_UTC[case.name], case.name


def test_analyzer_non_ascii_round_trips(analyzer_dirty: Ingested) -> None:
    event = analyzer_dirty.cases["non-ASCII text"].line
    assert query(
        analyzer_dirty.db,
        "select user_message_snippet, session_id from raw.analyzer_events where event_id = ?",
        [event["event_id"]],
    ) == [(NON_ASCII, "会话-1")]


def test_analyzer_unknown_fields_are_not_stored(analyzer_dirty: Ingested) -> None:
    assert places_containing(analyzer_dirty.db, "unknown_field") == []
    assert "unknown_field" not in [r[0] for r in query(analyzer_dirty.db, "describe raw.analyzer_events")]


def test_analyzer_clean_file_with_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    """The fast path (a clean file): BOM, CRLF and blank lines are no rows and no quarantine."""
    events = [analyzer_event(n) for n in range(4)]
    events[1]["timestamp"] = "2026-05-01T14:00:00+02:00"
    events[2]["timestamp"] = "2026-05-01T12:00:00.123456Z"
    events[3]["user_message_snippet"] = NON_ASCII
    lines = [
        jsonl_line(events[0]),
        b"",
        jsonl_line(events[1]),
        b"   ",
        jsonl_line(events[2]),
        b"",
        jsonl_line(events[3]),
    ]
    source = tmp_path / "feedback.jsonl"
    source.write_bytes(BOM + b"\r\n".join(lines) + b"\r\n\r\n")
    db = tmp_path / "w.duckdb"

    result = ingest_ok("analyzer", source, "--db", db)

    assert parse_report(result.stdout)[2] == {"read": 4, "loaded": 4, "quarantined": 0, "duplicates": 0}
    assert count(db, "quarantine") == 0
    landed = {
        r[0]: r[1:] for r in query(db, "select event_id, timestamp, user_message_snippet from raw.analyzer_events")
    }
    assert landed[events[1]["event_id"]][0] == dt.datetime(2026, 5, 1, 12, 0)
    assert landed[events[2]["event_id"]][0] == dt.datetime(2026, 5, 1, 12, 0, 0, 123456)
    assert landed[events[3]["event_id"]][1] == NON_ASCII
    assert all("\r" not in (snippet or "") for _, snippet in landed.values())


# -- session feedback (JSONL) -----------------------------------------------------------------------
def _sf(n: int, **kw: Any) -> dict[str, Any]:
    return session_record(n, **kw)


SESSION_CASES = [
    Case("good", _sf(1)),
    # the contract: 64 lower-case hex characters (reference/README.md)
    Case("uppercase hex opaque id", _sf(2, session_id_opaque="ABCDEF0123456789" * 4), ("session_id_opaque",)),
    Case("no schema_version", _sf(3, drop=["schema_version"])),
    Case("free text beside a good record", {**_sf(4), "comment": FREE_TEXT}),
    Case("offset and fraction", _sf(5, recorded_at="2026-05-01T01:30:00.25+02:00")),
    Case("raw session id", _sf(6, session_id_opaque=RAW_SESSION_ID), ("session_id_opaque",)),
    Case("63 hex characters", _sf(7, session_id_opaque="a" * 63), ("session_id_opaque",)),
    Case("schema_version 2", _sf(8, schema_version=2), ("schema_version", "2")),
    Case("label outside enum", _sf(9, label="meh"), ("label", "meh")),
    Case("source outside enum", _sf(10, source="web"), ("source", "web")),
    Case("negative turn count", _sf(11, turn_count_at_end=-1), ("turn_count_at_end", "-1")),
    Case("turn count as a string", _sf(12, turn_count_at_end="3"), ("turn_count_at_end", "expected")),
    Case("recorded_at does not parse", _sf(13, recorded_at="2026-13-01T00:00:00Z"), ("recorded_at",)),
    Case("missing id", _sf(14, drop=["id"]), ("id", "missing")),
    Case("missing label", _sf(15, drop=["label"]), ("label", "missing")),
    Case("bad record with free text", {**_sf(16, label="meh"), "comment": FREE_TEXT}, ("label",)),
    Case("invalid JSON", '{"id": "x", "label": ', ("json",)),
    Case("blank", "", BLANK),
]


@pytest.fixture(scope="module")
def session_dirty(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    return _ingest_cases(
        tmp_path_factory.mktemp("session"), "session-feedback", "session_feedback.jsonl", SESSION_CASES
    )


@pytest.mark.parametrize("name", [c.name for c in SESSION_CASES if c.reason not in (None, BLANK)])
def test_session_feedback_bad_line_is_quarantined(session_dirty: Ingested, name: str) -> None:
    row = _assert_quarantined(session_dirty, name)
    assert row["source"] == "session_feedback" and row["target_table"] == "session_feedback"
    line = session_dirty.cases[name].line
    if isinstance(line, dict) and "id" in line:
        assert row["record_key"] == line["id"]


def test_session_feedback_dirty_file_counts(session_dirty: Ingested) -> None:
    _assert_totals(session_dirty)


def test_session_feedback_raw_session_id_is_stored_nowhere(session_dirty: Ingested) -> None:
    row = _assert_quarantined(session_dirty, "raw session id")
    assert RAW_SESSION_ID not in row["reason"]
    assert RAW_SESSION_ID not in (row["raw_text"] or "") and RAW_SESSION_ID not in (row["record_key"] or "")
    assert places_containing(session_dirty.db, "RAW-SESSION-ID") == []


def test_session_feedback_free_text_is_stored_nowhere(session_dirty: Ingested) -> None:
    assert places_containing(session_dirty.db, "FREE-TEXT") == []


def test_session_feedback_valid_lines_land(session_dirty: Ingested) -> None:
    landed = {r["id"]: r for r in rows(session_dirty.db, "select * from raw.session_feedback")}
    good = [c.line for c in SESSION_CASES if c.reason is None]
    assert set(landed) == {r["id"] for r in good}
    assert landed[session_dirty.cases["no schema_version"].line["id"]]["schema_version"] == 1
    shifted = landed[session_dirty.cases["offset and fraction"].line["id"]]
    assert shifted["recorded_at"] == dt.datetime(2026, 4, 30, 23, 30, 0, 250000)
    assert shifted["recorded_date"] == dt.date(2026, 4, 30), "the UTC date"
    plain = landed[session_dirty.cases["good"].line["id"]]
    assert plain["recorded_at"] == dt.datetime(2026, 5, 2, 9, 30, 0, 123456)


def test_session_feedback_line_with_invalid_utf8_keeps_no_private_text(tmp_path: Path) -> None:
    """Source 1 stores metadata only: a line that is not UTF-8 is quarantined without its free text or raw id."""
    line = jsonl_line({**_sf(1, session_id_opaque=RAW_SESSION_ID), "comment": FREE_TEXT + " caf\u00e9"})
    source = tmp_path / "session_feedback.jsonl"
    source.write_bytes(jsonl_line(_sf(2)) + b"\n" + line.replace("é".encode(), b"\xe9") + b"\n")
    db = tmp_path / "w.duckdb"

    ingest_ok("session-feedback", source, "--db", db)

    (row,) = quarantine(db)
    assert row["line_number"] == 2 and "utf-8" in row["reason"].lower()
    assert places_containing(db, "FREE-TEXT") == []
    assert places_containing(db, "RAW-SESSION-ID") == []


# -- session feedback from SQLite and PostgreSQL (typed rows) -------------------------------------------
TYPED_SESSION_ROWS = [
    ("good", _sf(20), None),
    ("raw session id", _sf(21, session_id_opaque=RAW_SESSION_ID), ("session_id_opaque",)),
    ("uppercase hex opaque id", _sf(22, session_id_opaque="0123456789ABCDEF" * 4), ("session_id_opaque",)),
    ("schema_version 2", _sf(23, schema_version=2), ("schema_version", "2")),
    ("recorded_at does not parse", _sf(24, recorded_at="last tuesday", recorded_date="2026-05-01"), ("recorded_at",)),
    ("offset and fraction", _sf(25, recorded_at="2026-05-01T14:00:00.5+02:00"), None),
    ("negative turn count", _sf(26, turn_count_at_end=-2), ("turn_count_at_end", "-2")),
]


def _assert_typed_session_load(db: Path, uri: str) -> None:
    by_key = {q["line_number"]: q for q in quarantine(db)}
    bad = [(pos, name, reason) for pos, (name, _, reason) in enumerate(TYPED_SESSION_ROWS, start=1) if reason]
    assert sorted(by_key) == [pos for pos, _, _ in bad], "quarantine line_number is the row's insertion_order"
    for pos, name, reason in bad:
        row = by_key[pos]
        assert row["source_uri"] == uri
        for part in reason:
            assert part in row["reason"], (name, row["reason"])
    good = {r[1]["id"]: r[0] for r in TYPED_SESSION_ROWS if r[2] is None}
    landed = {r["id"]: r for r in rows(db, "select * from raw.session_feedback")}
    assert set(landed) == set(good)
    shifted = landed[TYPED_SESSION_ROWS[5][1]["id"]]
    assert shifted["recorded_at"] == dt.datetime(2026, 5, 1, 12, 0, 0, 500000)
    (load,) = manifest(db)
    assert (load["rows_read"], load["rows_loaded"], load["rows_quarantined"], load["rows_duplicate"]) == (7, 2, 5, 0)
    assert places_containing(db, "RAW-SESSION-ID") == [], "a raw session id must not be stored, not even quarantined"
    assert places_containing(db, "FREE-TEXT") == []


def test_session_feedback_sqlite_bad_rows(tmp_path: Path) -> None:
    store = write_session_sqlite(
        tmp_path / "session_feedback.sqlite3", [r[1] for r in TYPED_SESSION_ROWS], extra_value={"note": FREE_TEXT}
    )
    db = tmp_path / "w.duckdb"
    ingest_ok("session-feedback", store, "--db", db)
    _assert_typed_session_load(db, str(store.resolve()))


def test_session_feedback_postgres_bad_rows(tmp_path: Path, pg_database: str) -> None:
    create_pg_session_feedback(pg_database, [r[1] for r in TYPED_SESSION_ROWS], extra_value={"note": FREE_TEXT})
    db = tmp_path / "w.duckdb"
    ingest_ok("session-feedback", "--postgres", pg_database, "--db", db)
    _assert_typed_session_load(db, f"{pg_database}#session_feedback")


# -- reactions --------------------------------------------------------------------------------------------
def _rx(n: int, **reaction: Any) -> dict[str, Any]:
    return reaction_envelope(reaction_payload(n, **reaction))


REACTION_CASES = [
    Case("good", _rx(1)),
    Case("bare payload", reaction_payload(2)),
    Case("clear (null reaction)", _rx(3, reaction=None)),
    Case("non-ASCII comment", _rx(4, text=NON_ASCII)),
    Case("machine with offset ts", _rx(5, origin="machine", confidence=0.7, ts="2026-05-01T19:47:02.5+02:00")),
    Case("confidence above 1", _rx(6, confidence=1.5), ("confidence", "1.5")),
    Case("confidence as a string", _rx(7, confidence="1.0"), ("confidence", "expected")),
    Case("reaction outside enum", _rx(8, reaction="love"), ("reaction", "love")),
    Case("origin outside enum", _rx(9, origin="bot"), ("origin", "bot")),
    Case("ts does not parse", _rx(10, ts="2026-05-01 noon"), ("ts",)),
    Case("missing rn", reaction_envelope(reaction_payload(11, meta={"rn": None})), ("rn", "missing")),
    Case("missing origin", reaction_envelope(reaction_payload(12, drop=["origin"])), ("origin", "missing")),
    Case("JSON array", "[]", ("object",)),
]


@pytest.fixture(scope="module")
def reactions_dirty(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    return _ingest_cases(tmp_path_factory.mktemp("reactions"), "reactions", "reactions.jsonl", REACTION_CASES)


@pytest.mark.parametrize("name", [c.name for c in REACTION_CASES if c.reason not in (None, BLANK)])
def test_reactions_bad_line_is_quarantined(reactions_dirty: Ingested, name: str) -> None:
    row = _assert_quarantined(reactions_dirty, name)
    assert row["target_table"] == "turn_reactions"


def test_reactions_dirty_file_counts_and_values(reactions_dirty: Ingested) -> None:
    _assert_totals(reactions_dirty)
    landed = {r["rn"]: r for r in rows(reactions_dirty.db, "select * from raw.turn_reactions")}

    def rn(name: str) -> str:
        line = reactions_dirty.cases[name].line
        return rn_of(line.get("payload", line))

    assert landed[rn("non-ASCII comment")]["text"] == NON_ASCII
    assert landed[rn("clear (null reaction)")]["reaction"] is None
    machine = landed[rn("machine with offset ts")]
    assert (machine["origin"], machine["confidence"]) == ("machine", 0.7)
    assert machine["ts"] == dt.datetime(2026, 5, 1, 17, 47, 2, 500000)
    assert landed[rn("bare payload")]["tenant"] is None


def test_reactions_bad_blobs_are_quarantined_by_file(tmp_path: Path) -> None:
    blobs = tmp_path / "blobs"
    (blobs / "a").mkdir(parents=True)
    good = reaction_envelope(reaction_payload(1))
    (blobs / "a" / "good.json").write_text(json.dumps(good, indent=2, ensure_ascii=False))
    (blobs / "a" / "too-confident.json").write_text(json.dumps(_rx(2, confidence=1.5), indent=2))
    (blobs / "truncated.json").write_text('{"payload": {"reaction": {"turn_id": "t"')
    db = tmp_path / "w.duckdb"

    ingest_ok("reactions", blobs, "--db", db)

    assert [r[0] for r in query(db, "select rn from raw.turn_reactions")] == [rn_of(good["payload"])]
    found = {Path(q["source_uri"]).name: q for q in quarantine(db)}
    # a reaction that breaks the contract keeps its file and text; a file that is no JSON object claims to be
    # nothing and may be anyone's message: the folder, its content's sha256 to find it again, no text
    assert set(found) == {"too-confident.json", "blobs"}
    assert "confidence" in found["too-confident.json"]["reason"] and "1.5" in found["too-confident.json"]["reason"]
    assert '"confidence": 1.5' in found["too-confident.json"]["raw_text"]
    truncated = found["blobs"]
    assert "json" in truncated["reason"].lower() and truncated["raw_text"] is None and truncated["raw_bytes"] is None
    content = (blobs / "truncated.json").read_bytes()
    assert truncated["record_key"] == "sha256:" + hashlib.sha256(content).hexdigest()
    (load,) = manifest(db)
    assert (load["rows_read"], load["rows_loaded"], load["rows_quarantined"], load["rows_duplicate"]) == (3, 1, 2, 0)


def test_reactions_postgres_bad_row_is_quarantined(tmp_path: Path, pg_database: str) -> None:
    """An index row whose reaction JSON (ctx_rag.py:1163-1186 writes it in `text`) has confidence 1.5."""
    good, bad = conv_row(reaction_payload(1)), conv_row(reaction_payload(2, confidence=1.5))
    create_pg_conv_messages(pg_database, [good, bad])
    db = tmp_path / "w.duckdb"

    ingest_ok("reactions", "--postgres", pg_database, "--db", db)

    assert [r[0] for r in query(db, "select rn from raw.reaction_index")] == [index_rn(good)]
    (row,) = quarantine(db)
    database = pg_database.rsplit("/", 1)[1]
    assert "confidence" in row["reason"] and row["record_key"] == f"{database}.{INDEX_SCHEMA}:2"
    assert row["source_uri"] == f"{pg_database}#{database}.{INDEX_SCHEMA}.conv_messages"
    assert '"confidence":1.5' in row["raw_text"].replace(" ", "")


# -- workspace ----------------------------------------------------------------------------------------------
WORKSPACE_FILES = {
    "feedback.jsonl": [
        Case("good", workspace_feedback(1, comment=NON_ASCII, context={"note": NON_ASCII})),
        Case("rating outside enum", workspace_feedback(2, rating="great"), ("rating", "great")),
        Case("source_type outside enum", workspace_feedback(3, source_type="email"), ("source_type", "email")),
        Case("status outside enum", workspace_feedback(4, status="done"), ("status", "done")),
        Case("missing tenant_id", workspace_feedback(5, drop=["tenant_id"]), ("tenant_id", "missing")),
        Case("created_at does not parse", workspace_feedback(6, created_at="2026-05-40"), ("created_at",)),
        Case("offset timestamp", workspace_feedback(7, created_at="2026-05-01T10:00:00.75+02:00")),
    ],
    "sessions.jsonl": [
        Case("good", workspace_session(1)),
        Case("session_type outside enum", workspace_session(2, session_type="batch"), ("session_type", "batch")),
        Case("missing created_at", workspace_session(3, drop=["created_at"]), ("created_at", "missing")),
    ],
    "eval_runs.jsonl": [
        Case("good", eval_run(1)),
        Case("negative passed_count", eval_run(2, passed_count=-1), ("passed_count", "-1")),
        Case("failed_count as a string", eval_run(3, failed_count="1"), ("failed_count", "expected")),
        Case("triggered_by outside enum", eval_run(4, triggered_by="cron"), ("triggered_by", "cron")),
    ],
}


@pytest.fixture(scope="module")
def workspace_dirty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workspace")
    for name, cases in WORKSPACE_FILES.items():
        write_jsonl(folder / "in" / name, [c.line for c in cases])
    db = folder / "w.duckdb"
    ingest_ok("workspace", folder / "in", "--db", db)
    return db


@pytest.mark.parametrize(
    ("file_name", "position"),
    [(f, i) for f, cases in WORKSPACE_FILES.items() for i, c in enumerate(cases) if c.reason],
)
def test_workspace_bad_line_is_quarantined(workspace_dirty: Path, file_name: str, position: int) -> None:
    case = WORKSPACE_FILES[file_name][position]
    found = [
        q
        for q in quarantine(workspace_dirty)
        if Path(q["source_uri"]).name == file_name and q["line_number"] == position + 1
    ]
    assert len(found) == 1, case.name
    for part in case.reason:
        assert part in found[0]["reason"], (case.name, found[0]["reason"])
    assert found[0]["record_key"] == case.line["id"]


def test_workspace_dirty_counts_and_values(workspace_dirty: Path) -> None:
    loads = {Path(r["uri"]).name: r for r in manifest(workspace_dirty)}
    for name, cases in WORKSPACE_FILES.items():
        bad = sum(c.reason is not None for c in cases)
        load = loads[name]
        assert (load["rows_read"], load["rows_loaded"], load["rows_quarantined"], load["rows_duplicate"]) == (
            len(cases),
            len(cases) - bad,
            bad,
            0,
        )
    good = WORKSPACE_FILES["feedback.jsonl"][0].line
    comment, context = query(
        workspace_dirty, "select comment, context from raw.workspace_feedback where id = ?", [good["id"]]
    )[0]
    assert comment == NON_ASCII and json.loads(context) == {"note": NON_ASCII}
    shifted = WORKSPACE_FILES["feedback.jsonl"][6].line
    assert query(workspace_dirty, "select created_at from raw.workspace_feedback where id = ?", [shifted["id"]]) == [
        (dt.datetime(2026, 5, 1, 8, 0, 0, 750000),)
    ]
