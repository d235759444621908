"""Reading a generated demo data set back (tests/demo/test_demo_data.py): the files of each source, parsed as a
user's tools would read them."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Demo:
    out: Path
    counts: dict[str, int]

    @property
    def store(self) -> Path:
        return self.out / "analyzer" / "feedback-store"


def parse_ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def read_jsonl(path: Path) -> tuple[list[dict], list[str]]:
    """Parsed objects and the lines that are not valid JSON."""
    rows, bad = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            bad.append(line)
    return rows, bad


def archive_files(demo: Demo) -> list[Path]:
    return sorted((demo.store / "archive").glob("feedback-*.jsonl"))


def all_analyzer_events(demo: Demo) -> dict[str, dict]:
    events: dict[str, dict] = {}
    for path in [*archive_files(demo), demo.store / "feedback.jsonl"]:
        for event in read_jsonl(path)[0]:
            events[event["event_id"]] = event
    return events


def session_feedback_sqlite_rows(demo: Demo) -> list[sqlite3.Row]:
    db = sqlite3.connect(demo.out / "session-feedback" / "session_feedback.sqlite3")
    db.row_factory = sqlite3.Row
    try:
        return db.execute("select * from session_feedback order by insertion_order").fetchall()
    finally:
        db.close()


def blob_paths(out: Path) -> list[Path]:
    return sorted((out / "reactions" / "blobs").rglob("*.json"))


def reaction_envelopes(out: Path) -> Iterator[dict]:
    for path in blob_paths(out):
        yield json.loads(path.read_text(encoding="utf-8"))
    export = out / "reactions" / "reactions_export.jsonl"
    if export.exists():
        yield from read_jsonl(export)[0]


def workspace_rows(demo: Demo, name: str) -> list[dict]:
    rows, bad = read_jsonl(demo.out / "workspace" / f"{name}.jsonl")
    assert not bad
    return rows


def correction_rate(events: list[dict]) -> float:
    outcomes = Counter(e["outcome"] for e in events)
    return (outcomes["correction"] + 0.5 * outcomes["partial"]) / len(events)


# ---------------------------------------------------------------------------------------
# Determinism and volume
# ---------------------------------------------------------------------------------------


def file_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def all_timestamps(demo: Demo) -> Iterator[tuple[str, str]]:
    for event in all_analyzer_events(demo).values():
        yield "analyzer", event["timestamp"]
    for row in session_feedback_sqlite_rows(demo):
        yield "session_feedback sqlite", row["recorded_at"]
    for row in read_jsonl(demo.out / "session-feedback" / "session_feedback_export.jsonl")[0]:
        yield "session_feedback export", row["recorded_at"]
    for envelope in reaction_envelopes(demo.out):
        yield "reactions", envelope["payload"]["reaction"]["ts"]
    for row in workspace_rows(demo, "feedback"):
        yield "workspace feedback", row["created_at"]
        if row["reviewed_at"]:
            yield "workspace feedback reviewed", row["reviewed_at"]
    for row in workspace_rows(demo, "sessions"):
        yield "workspace sessions", row["created_at"]
        if row["completed_at"]:
            yield "workspace sessions completed", row["completed_at"]
        if "golden" in row["metadata"]:
            yield "golden promoted", row["metadata"]["golden"]["promoted_at"]
    for row in workspace_rows(demo, "eval_runs"):
        yield "eval runs", row["started_at"]
        yield "eval runs completed", row["completed_at"]
