"""A load killed with SIGKILL half-way leaves the warehouse exactly as it was; re-running it then completes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.ingest import (
    analyzer_event,
    cli_env,
    count,
    hex_id,
    ingest_ok,
    kill_at,
    manifest,
    parse_report,
    snapshot,
    write_jsonl,
)
from warehouse.contracts import OUTCOMES

BIG_EVENTS = 50_000  # no race to win: the load stops itself before its commit


def _write_big_file(path: Path, n: int) -> None:
    """n clean, distinct analyzer events (formatted directly: json.dumps per line is slow)."""
    template = (
        '{{"event_id": "{eid}", "timestamp": "2026-04-{day:02d}T{hour:02d}:15:00.250Z", "session_id": "big-{s}", '
        '"skill_id": "skill-{k}", "invocation_uuid": "inv-{i}", "outcome": "{outcome}", "confidence": 0.8, '
        '"correction_type": null, "user_message_snippet": "bulk event {i} with some text to make it longer", '
        '"turns_to_feedback": 2, "ai_tools_used": ["Read", "Edit", "Bash"], "dimension_hint": "accuracy"}}\n'
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(
                template.format(
                    eid=hex_id(f"inv-{i}:skill-{i % 40}", 16),
                    day=1 + i % 28,
                    hour=i % 24,
                    s=i // 10,
                    k=i % 40,
                    i=i,
                    outcome=OUTCOMES[i % 3],
                )
            )


@pytest.mark.slow
def test_a_killed_load_changes_nothing_and_can_be_rerun(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    small = write_jsonl(tmp_path / "small" / "feedback.jsonl", [analyzer_event(n) for n in range(5)] + ["not json"])
    ingest_ok("analyzer", small, "--db", db)
    before = snapshot(db)
    (small_load,) = manifest(db)
    big = tmp_path / "big" / "feedback.jsonl"
    _write_big_file(big, BIG_EVENTS)

    # killed with every row written and the manifest row inserted, just before the commit
    kill_at("load-before-commit", [sys.executable, "-m", "cli", "ingest", "analyzer", big, "--db", db], cli_env())

    assert snapshot(db) == before, "no row of the killed load is visible, nothing else changed"
    assert manifest(db) == [small_load]
    assert str(big.resolve()) not in {r["uri"] for r in manifest(db)}

    rerun = ingest_ok("analyzer", big, "--db", db, fresh_process=True)

    assert "unchanged" not in rerun.stdout
    assert parse_report(rerun.stdout)[2] == {
        "read": BIG_EVENTS,
        "loaded": BIG_EVENTS,
        "quarantined": 0,
        "duplicates": 0,
    }
    loads = {r["uri"]: r for r in manifest(db)}
    assert loads[str(small.resolve())] == small_load
    big_load = loads[str(big.resolve())]
    assert (big_load["rows_read"], big_load["rows_loaded"], big_load["rows_quarantined"]) == (BIG_EVENTS, BIG_EVENTS, 0)
    after = snapshot(db, ["quarantine"])
    assert after["quarantine"] == before["quarantine"]
    assert count(db, "analyzer_events") == 5 + BIG_EVENTS
