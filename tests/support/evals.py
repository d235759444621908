"""The eval and signal marts recomputed in Python from the raw tables (tests/dbt/test_marts_evals.py): an
independent reading of docs/metrics.md, part 2, and the warehouses the tests build."""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import duckdb

FLAKY_WINDOW = 5  # dbt_project.yml default
MACHINE_CONFIDENCE_THRESHOLD = 0.70  # dbt_project.yml default
SEED_SOURCE_SYSTEM = {"turn_reactions": "reactions"}  # mart name -> seed name
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class EdgeCases:
    """The cells `add_eval_edge_cases` touched, as (golden session, agent config)."""

    running_now: tuple[str, str]  # running since the demo's last day; completed after EARLIER_AS_OF before that
    running_stale: tuple[str, str]  # running since 2026-10-20 10:00: newer than run 8 of 10, older than run 10
    cancelled: tuple[str, str]  # cancelled 2026-10-19 with a failing eval result
    failed_to_run: tuple[str, str]  # failed to run 2026-10-31 23:00, after the last run
    pending_only: tuple[str, str]  # a new agent config whose only replay is running
    promoted_late: tuple[str, str]  # golden promoted 2026-10-25, replayed (passing) 2026-10-15
    no_promoted_at: tuple[str, str]  # golden without metadata.golden.promoted_at, created 2026-09-01


@dataclass(frozen=True)
class Ingested:
    warehouse: Path
    edge_cases: EdgeCases


@dataclass(frozen=True)
class Built:
    warehouse: Path
    as_of: dt.datetime
    edge_cases: EdgeCases

    def query(self, sql: str) -> list[tuple]:
        with duckdb.connect(str(self.warehouse), read_only=True) as con:
            return con.execute(sql).fetchall()


# --- expected values, from the raw tables --------------------------------------------


@dataclass(frozen=True)
class Replay:
    """A replay of a golden session as it stood at as_of (docs/metrics.md (part 2), "A replay")."""

    replay_id: str
    created_at: dt.datetime
    state: str  # finished, pending or abandoned
    replayed_at: dt.datetime | None  # finished replays only
    passed: bool | None  # finished replays only


def utc_or_none(text: object) -> dt.datetime | None:
    """An ISO-8601 text as a naive UTC datetime; None when it is not one."""
    try:
        parsed = dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return parsed.astimezone(dt.UTC).replace(tzinfo=None) if parsed.tzinfo else parsed


def golden_at_as_of(built: Built) -> set[str]:
    """Sessions golden at as_of: promoted at or before it (no promotion date: since created)."""
    golden = set()
    for sid, created_at, meta in built.query("select id, created_at, metadata from raw.workspace_sessions"):
        promotion = json.loads(meta or "{}").get("golden")
        if isinstance(promotion, dict):
            since = utc_or_none(promotion.get("promoted_at")) if promotion.get("promoted_at") else None
            if (since or created_at) <= built.as_of:
                golden.add(sid)
    return golden


def replays_per_cell(built: Built) -> dict[tuple[str, str], list[Replay]]:
    """(golden session, agent) -> its replays started at or before as_of, with their state then."""
    golden = golden_at_as_of(built)
    sessions = built.query(
        "select id, agent_id, status, created_at, completed_at, metadata from raw.workspace_sessions"
    )
    cells: dict[tuple[str, str], list[Replay]] = defaultdict(list)
    for sid, agent_id, status, created_at, completed_at, meta in sessions:
        metadata = json.loads(meta or "{}")
        source = metadata.get("eval_source")
        if source not in golden or created_at > built.as_of:
            continue
        status = (status or "").strip().lower()
        result = metadata.get("eval_result")
        if status == "completed" and isinstance(result, dict) and (completed_at or created_at) <= built.as_of:
            dimensions = result.get("dimensions") or {}
            passed = bool(dimensions) and all(value.get("passed") is True for value in dimensions.values())
            replay = Replay(sid, created_at, "finished", completed_at or created_at, passed)
        elif status in {"failed", "cancelled"} and (completed_at is None or completed_at <= built.as_of):
            replay = Replay(sid, created_at, "abandoned", None, None)
        else:
            replay = Replay(sid, created_at, "pending", None, None)
        cells[(source, agent_id)].append(replay)
    return cells


def expected_cells(built: Built) -> dict[tuple[str, str], tuple[str | None, str, str | None]]:
    """(golden session, agent) -> (deciding replay id, cell status, pending replay id), by docs/metrics.md (part 2)."""
    cells = {}
    for cell, replays in replays_per_cell(built).items():
        finished = sorted(
            (replay for replay in replays if replay.state == "finished"), key=lambda r: (r.replayed_at, r.replay_id)
        )
        pending = [replay for replay in replays if replay.state == "pending"]
        if finished:
            pending = [replay for replay in pending if replay.created_at > finished[-1].created_at]
        if not finished and not pending:
            continue  # only failed-to-run or cancelled replays: no cell
        newest_pending = max(pending, key=lambda r: (r.created_at, r.replay_id)).replay_id if pending else None
        if not finished:
            cells[cell] = (None, "pending", newest_pending)
            continue
        outcomes = [replay.passed for replay in finished]
        window = outcomes[-FLAKY_WINDOW:]
        flips = sum(older != newer for older, newer in zip(window, window[1:], strict=False))
        latest, previous = outcomes[-1], outcomes[-2] if len(outcomes) > 1 else None
        if flips >= 2:
            status = "flaky"
        elif previous is True and not latest:
            status = "regressed"
        elif previous is False and latest:
            status = "fixed"
        else:
            status = "pass" if latest else "fail"
        cells[cell] = (finished[-1].replay_id, status, newest_pending)
    return cells


def active_reactions(built: Built) -> list[tuple[str, str]]:
    """(origin, reaction) of every active reaction at as_of.

    A user's latest reaction per turn unless it is a clear; every machine
    reaction at or above the confidence threshold.
    """
    rows = built.query(
        "select rn, conversation_id, turn_id, user_id, origin, reaction, confidence, ts from raw.turn_reactions"
    )
    latest_user: dict[tuple[str, str, str | None], tuple[dt.datetime, str, str | None]] = {}
    active = []
    for rn, conversation_id, turn_id, user_id, origin, reaction, confidence, ts in rows:
        if ts > built.as_of:
            continue
        origin = origin.strip().lower()
        reaction = reaction.strip().lower() if reaction is not None else None
        if origin == "user":
            key = (conversation_id, turn_id, user_id)
            if key not in latest_user or (ts, rn) > latest_user[key][:2]:
                latest_user[key] = (ts, rn, reaction)
        elif reaction is not None and confidence is not None and confidence >= MACHINE_CONFIDENCE_THRESHOLD:
            active.append(("machine", reaction))
    active += [("user", reaction) for _, _, reaction in latest_user.values() if reaction is not None]
    return active


def expected_signals(built: Built) -> Counter[tuple[str, str]]:
    """(source_system, rating) -> signals, with the seed's label mapping."""
    with (REPO / "seeds" / "feedback_label_ratings.csv").open() as seed:
        ratings = {(row["source_system"], row["label"]): row["rating"] for row in csv.DictReader(seed)}
    as_of = built.as_of
    labels: list[tuple[str, str]] = []
    labels += [
        ("session_feedback", label.strip().lower())
        for label, recorded_at in built.query("select label, recorded_at from raw.session_feedback")
        if recorded_at <= as_of
    ]
    labels += [("turn_reactions", reaction) for _, reaction in active_reactions(built)]
    analyzer = {
        event_id: outcome.strip().lower()
        for event_id, outcome, invoked_at in built.query(
            'select event_id, outcome, "timestamp" from raw.analyzer_events'
        )
        if invoked_at <= as_of
    }
    labels += [("analyzer", outcome) for outcome in analyzer.values()]
    labels += [
        ("workspace", rating.strip().lower())
        for rating, created_at in built.query("select rating, created_at from raw.workspace_feedback")
        if created_at <= as_of
    ]
    return Counter((source, ratings[(SEED_SOURCE_SYSTEM.get(source, source), label)]) for source, label in labels)


# --- the facts -------------------------------------------------------------------------
