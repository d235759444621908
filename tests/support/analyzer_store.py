"""An analyzer store folder written the way the real analyzer writes it.

The upstream is `lanyasheng/auto-improvement-orchestrator-skill`, folder
`skills/session-feedback-analyzer/`, file `scripts/analyze.py` (the lines
cited below are that file's at the commit the project read). What it does,
and what these helpers reproduce:

- An event is the dataclass `FeedbackEvent` (analyze.py:69-82) written with
  `json.dumps(asdict(event), ensure_ascii=False)` (analyze.py:490-493), keys
  in the dataclass's order; `event_id` is the first 16 hex characters of the
  SHA-256 of `invocation_uuid:skill_id` (analyze.py:423-425).
- `timestamp` is the transcript entry's own, `entry.get("timestamp", "")`
  (analyze.py:226, copied at :430): `""` when the entry has none. Its own
  tests build such events (tests/test_analyze.py:343, `timestamp=""`).
- A run appends to `feedback.jsonl` every event whose id the file does not
  hold yet (analyze.py:472-494). The ids are those of the file before the
  run, not of the run's own events, so a resumed session (a second session
  file repeating the invocation uuids of the first) writes the same event
  id twice in one run.
- After writing, `archive_old_events` (analyze.py:499-538) moves the events
  older than 90 days to `archive/feedback-<cutoff %Y%m%d>.jsonl` (appended)
  and rewrites `feedback.jsonl` with the rest. An event whose timestamp is
  empty is never archived (analyze.py:515-516: `if ts:`), so undated events
  stay in `feedback.jsonl` for good.
- The next run analyses every session again: an archived event is no longer
  in `feedback.jsonl`, so it is appended again (and archived again, into that
  day's archive file).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARCHIVE_DAYS = 90  # archive_old_events(days=90), analyze.py:499


@dataclass(frozen=True)
class Invocation:
    """One skill invocation the analyzer classified: what it needs to build a FeedbackEvent."""

    uuid: str
    skill_id: str
    timestamp: str  # "" when the transcript entry had none
    outcome: str
    session_id: str
    dimension_hint: str | None = None


def feedback_event(invocation: Invocation) -> dict[str, Any]:
    """`asdict(FeedbackEvent(...))` as `_build_event` fills it (analyze.py:414-441), keys in the dataclass's order."""
    correction_type = {"correction": "rejection", "partial": "partial"}.get(invocation.outcome)
    confidence = {"correction": 0.9, "partial": 0.7, "acceptance": 0.8}[invocation.outcome]
    return {
        "event_id": hashlib.sha256(f"{invocation.uuid}:{invocation.skill_id}".encode()).hexdigest()[:16],
        "timestamp": invocation.timestamp,
        "session_id": invocation.session_id,
        "skill_id": invocation.skill_id,
        "invocation_uuid": invocation.uuid,
        "outcome": invocation.outcome,
        "confidence": confidence,
        "correction_type": correction_type,
        "user_message_snippet": f"reply to {invocation.skill_id}",
        "turns_to_feedback": 1,
        "ai_tools_used": ["Read", "Edit"],
        "dimension_hint": invocation.dimension_hint,
    }


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.exists() else []


def analyzer_run(store: Path, invocations: list[Invocation], *, now: dt.datetime) -> None:
    """One `analyze.py` run at `now` over sessions yielding `invocations` (in session order): write, then archive."""
    active = store / "feedback.jsonl"
    store.mkdir(parents=True, exist_ok=True)
    existing = {json.loads(line)["event_id"] for line in _lines(active)}  # analyze.py:473-482
    with active.open("a", encoding="utf-8") as handle:  # analyze.py:484-494: no dedupe within the run
        for event in map(feedback_event, invocations):
            if event["event_id"] not in existing:
                handle.write(json.dumps(event, ensure_ascii=False) + "\n")
    cutoff = now - dt.timedelta(days=ARCHIVE_DAYS)  # analyze.py:504
    keep, archive = [], []
    for line in _lines(active):
        timestamp = json.loads(line).get("timestamp", "")
        if timestamp and dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")) < cutoff:  # analyze.py:515-518
            archive.append(line)
        else:
            keep.append(line)
    if not archive:  # analyze.py:525-526: the active file is left as it is
        return
    (store / "archive").mkdir(exist_ok=True)
    with (store / "archive" / f"feedback-{cutoff:%Y%m%d}.jsonl").open("a", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in archive)
    active.write_text("".join(line + "\n" for line in keep), encoding="utf-8")  # analyze.py:534-536


def iso(moment: dt.datetime) -> str:
    """A transcript timestamp as Claude Code writes it (ISO 8601, milliseconds, Z)."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
