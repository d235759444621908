"""A JSON-lines file that grows by appending is read from where the last load stopped; any other change
(rewritten, truncated, rotated) reads it whole. Counts add up for every load, line numbers stay physical.

The oracle of the many-appends test is a fresh warehouse that reads the final file once.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.ingest import (
    analyzer_event,
    append_jsonl,
    assert_counts_add_up,
    ingest_ok,
    jsonl_line,
    manifest,
    parse_report,
    query,
    write_jsonl,
)

CONTRACT_COLUMNS = "event_id, timestamp, skill_id, outcome, confidence"


def totals(result: Any) -> dict[str, int]:
    return parse_report(result.stdout)[2]


def events(db: Path) -> list[tuple[Any, ...]]:
    return query(db, f"select {CONTRACT_COLUMNS} from raw.analyzer_events order by event_id")


def quarantined(db: Path) -> list[tuple[Any, ...]]:
    return query(db, "select line_number, reason, raw_text from raw.quarantine order by line_number, reason")


def test_an_appended_file_reads_only_its_new_bytes(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(200)])
    db = tmp_path / "w.duckdb"
    ingest_ok("analyzer", source, "--db", db)
    first_size = source.stat().st_size

    append_jsonl(source, [analyzer_event(n) for n in range(200, 230)] + ["{broken"] + [analyzer_event(230)])
    result = ingest_ok("analyzer", source, "--db", db)

    assert totals(result) == {"read": 32, "loaded": 31, "quarantined": 1, "duplicates": 0}
    last = manifest(db)[-1]
    assert (last["start_offset"], last["size_bytes"]) == (first_size, source.stat().st_size)
    assert (last["end_offset"], last["end_line"]) == (source.stat().st_size, 232)
    assert query(db, "select line_number, reason from raw.quarantine") == [(231, "invalid JSON")]
    assert query(db, "select count(*) from raw.analyzer_events") == [(231,)]

    again = ingest_ok("analyzer", source, "--db", db)
    assert totals(again) == {"read": 0, "loaded": 0, "quarantined": 0, "duplicates": 0}
    assert len(manifest(db)) == 2, "an unchanged file is skipped without a load"
    assert_counts_add_up(db)


def _truncated(path: Path) -> None:
    path.write_bytes(b"".join(jsonl_line(analyzer_event(n)) + b"\n" for n in range(50)))


def _rewritten_in_place(path: Path) -> None:
    """Same size, one byte different in the first line: the first block's checksum differs."""
    data = path.read_bytes()
    assert data.count(b'"session-0"') == 1
    path.write_bytes(data.replace(b'"session-0"', b'"session-Z"'))


def _rotated(path: Path) -> None:
    """A new file under the same name, longer than the old one (a size check alone would call it grown)."""
    path.write_bytes(b"".join(jsonl_line(analyzer_event(n)) + b"\n" for n in range(1000, 1400)))


@pytest.mark.parametrize(
    "change", [_truncated, _rewritten_in_place, _rotated], ids=["truncated", "rewritten in place", "rotated"]
)
def test_a_file_changed_otherwise_is_read_whole(tmp_path: Path, change: Any) -> None:
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(200)])
    db = tmp_path / "w.duckdb"
    ingest_ok("analyzer", source, "--db", db)
    change(source)
    lines = source.read_bytes().count(b"\n")

    result = ingest_ok("analyzer", source, "--db", db)

    assert totals(result)["read"] == lines, "the changed file is read whole"
    last = manifest(db)[-1]
    assert (last["start_offset"], last["end_offset"], last["end_line"]) == (0, source.stat().st_size, lines)
    in_file = {
        line.split(b'"event_id": "', 1)[1].split(b'"', 1)[0].decode() for line in source.read_bytes().splitlines()
    }
    landed = {event_id for (event_id,) in query(db, "select event_id from raw.analyzer_events")}
    assert in_file <= landed, "every event of the file is in the warehouse"
    assert_counts_add_up(db)


def test_an_unfinished_last_line_is_read_again_once_finished(tmp_path: Path) -> None:
    """A writer caught mid-line: the unfinished line is read (and quarantined as what it is then); the next
    load starts at that line again, and lands it once finished, under the same line number."""
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(10)])
    finished = jsonl_line(analyzer_event(10)) + b"\n"
    with source.open("ab") as handle:
        handle.write(finished[:25])
    db = tmp_path / "w.duckdb"
    first = ingest_ok("analyzer", source, "--db", db)
    assert totals(first) == {"read": 11, "loaded": 10, "quarantined": 1, "duplicates": 0}
    assert manifest(db)[-1]["end_line"] == 10

    with source.open("ab") as handle:
        handle.write(finished[25:])
    second = ingest_ok("analyzer", source, "--db", db)

    assert totals(second) == {"read": 1, "loaded": 1, "quarantined": 0, "duplicates": 0}
    assert query(db, "select count(*) from raw.analyzer_events") == [(11,)]
    assert query(db, "select line_number, reason from raw.quarantine") == [(11, "invalid JSON")]
    assert manifest(db)[-1]["end_line"] == 11
    assert_counts_add_up(db)


def test_many_appends_land_what_one_read_of_the_final_file_lands(tmp_path: Path) -> None:
    """Appends of random sizes, with bad lines, blank lines, duplicates and a BOM at the start, ingested after
    each: the same events and the same quarantine (line numbers, reasons, text) as one read of the final file."""
    rng = random.Random(13)
    source = tmp_path / "feedback.jsonl"
    source.write_bytes(b"\xef\xbb\xbf")
    db = tmp_path / "w.duckdb"
    n = 0
    for _ in range(6):
        batch: list[Any] = []
        for _ in range(rng.randint(1, 400)):
            roll = rng.random()
            if roll < 0.02:
                batch.append("{not json")
            elif roll < 0.04:
                batch.append(analyzer_event(n, confidence=7.5))  # breaks the contract
            elif roll < 0.05:
                batch.append("")
            elif roll < 0.08 and n:
                batch.append(analyzer_event(rng.randrange(n)))  # a duplicate of an earlier event
            else:
                batch.append(analyzer_event(n))
            n += 1
        append_jsonl(source, batch)
        ingest_ok("analyzer", source, "--db", db)
    assert len(manifest(db)) == 6 and all(row["start_offset"] > 0 for row in manifest(db)[1:])

    once = tmp_path / "once.duckdb"
    ingest_ok("analyzer", source, "--db", once)
    assert events(db) == events(once)
    assert quarantined(db) == quarantined(once)
    assert_counts_add_up(db)


def test_a_renamed_file_continues_where_its_original_stopped(tmp_path: Path) -> None:
    """A rotation: the file grows, is renamed (`feedback.jsonl.1`) and a new file starts under the old name.
    The renamed file is read from where the original's last load stopped (its first bytes are the same), the
    new file whole: every event once, none counted twice."""
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(100)])
    db = tmp_path / "w.duckdb"
    ingest_ok("analyzer", source, "--db", db)
    first_size = source.stat().st_size
    append_jsonl(source, [analyzer_event(n) for n in range(100, 120)])
    rotated = source.rename(tmp_path / "feedback.jsonl.1")
    write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(120, 130)])

    renamed = ingest_ok("analyzer", rotated, "--db", db)
    fresh = ingest_ok("analyzer", tmp_path / "feedback.jsonl", "--db", db)

    assert totals(renamed) == {"read": 20, "loaded": 20, "quarantined": 0, "duplicates": 0}
    assert totals(fresh) == {"read": 10, "loaded": 10, "quarantined": 0, "duplicates": 0}
    loads = {row["uri"]: row for row in manifest(db)[1:]}
    assert loads[str(rotated.resolve())]["start_offset"] == first_size
    assert loads[str((tmp_path / "feedback.jsonl").resolve())]["start_offset"] == 0
    assert query(db, "select count(*) from raw.analyzer_events") == [(130,)]
    assert_counts_add_up(db)


def test_bytes_appended_while_a_load_reads_wait_for_the_next_load(tmp_path: Path) -> None:
    """The writer appends after the load took the file's size, before DuckDB reads it: the load lands only
    the bytes it measured (it reads a copy of them), and the next load reads the rest, nothing twice."""
    source = write_jsonl(tmp_path / "feedback.jsonl", [analyzer_event(n) for n in range(300)])
    db = tmp_path / "w.duckdb"
    reader = subprocess.Popen(
        [sys.executable, "-m", "cli", "ingest", "analyzer", str(source), "--db", str(db), "-q"],
        env={**os.environ, "FEEDBACK_PAUSE_AT": "file-read-starts"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, status = os.waitpid(reader.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), "the load ended before it began reading"
    size = source.stat().st_size
    append_jsonl(source, [analyzer_event(n) for n in range(300, 340)])
    os.kill(reader.pid, signal.SIGCONT)
    out, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, out + err

    assert [(r["rows_read"], r["size_bytes"], r["end_line"]) for r in manifest(db)] == [(300, size, 300)]
    second = ingest_ok("analyzer", source, "--db", db)
    assert totals(second) == {"read": 40, "loaded": 40, "quarantined": 0, "duplicates": 0}
    assert query(db, "select count(*) from raw.analyzer_events") == [(340,)]
    assert_counts_add_up(db)
