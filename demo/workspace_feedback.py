"""Source 4, workspace feedback: the rows of OUT/workspace/feedback.jsonl, from every intake point.

A row has the columns of the workspace feedback contract (`warehouse.contracts.WORKSPACE_FEEDBACK`),
`context` a JSON object whose fields depend on `source_type`; `demo.workspace` writes the file
(upstream: the agent workspace's PostgreSQL `feedback` table, exported as JSON lines). Some rows
are about a session of their own tenant; recent feedback is mostly pending, older feedback mostly
reviewed, applied or dismissed, extraction feedback applied at once. Each failed eval replay adds
a `session` feedback row linking the golden session and the replay.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from demo.common import (
    DAY_US,
    MINUTE_US,
    SECOND_US,
    TENANT_WEIGHTS,
    TENANTS,
    TimeFrame,
    arrow_schema,
    categorical,
    categorical_by_row,
    compact_json,
    sample_times,
    timestamp_column,
    uuid4_list,
)
from demo.workspace_evals import Evals
from demo.workspace_sessions import AGENT_NAMES, Workspace
from warehouse.contracts import FEEDBACK_RATINGS, FEEDBACK_SOURCE_TYPES, FEEDBACK_STATUSES, WORKSPACE_FEEDBACK

SOURCE_TYPE_WEIGHTS = (0.42, 0.16, 0.12, 0.1, 0.1, 0.1)
SOURCE_TYPE_LINK_SHARE = (0.7, 0.3, 0.2, 0.8, 1.0, 0.5)  # share linked to a session
# Rating weights (in FEEDBACK_RATINGS order) for each source type (in FEEDBACK_SOURCE_TYPES order).
RATING_WEIGHTS_BY_SOURCE_TYPE = (
    (0.55, 0.35, 0.10),
    (0.20, 0.70, 0.10),
    (0.0, 1.0, 0.0),
    (0.30, 0.50, 0.20),
    (0.0, 1.0, 0.0),
    (0.25, 0.55, 0.20),
)
# Comments by rating, review notes by status.
FEEDBACK_COMMENTS: dict[str, tuple[str, ...]] = {
    "positive": ("Exactly the comps I needed", "Très clair, merci", "回答准确", "Nice summary 🎉"),
    "negative": (
        "Valuation is off by 10x",
        "Wrong entity: Société Générale, not Generali",
        "数据来源不对",
        "It ignored the fiscal year",
        "Tool call failed silently",
    ),
    "neutral": ("Fine, a bit long", "Bof, passable", "一般"),
}
REVIEW_NOTES: dict[str, tuple[str, ...]] = {
    "reviewed": ("Looked at it, no pattern yet", "Waiting for a second signal"),
    "applied": (
        "Captured as correction: use fiscal-year revenue",
        "Added lesson about 'Société Générale' entity naming",
        "Updated agent prompt: cite the source filing",
        "Retry applied with feedback instruction",
    ),
    "dismissed": ("Duplicate of earlier feedback", "User error, dismissed", "Noise: one-off typo"),
}
FIELD_NAMES = ("valuation", "revenue", "ebitda", "sector", "deal_stage", "headcount")
REJECTED_VALUES = ("€12,5 M", "$4.82M", "Société Générale", "n/a", "上海", "1.2x")
TOOL_SLUGS = ("hubspot.create_contact", "sec.fetch_filing", "web.search", "sql.query")
FAILURE_REASONS = ("timeout", "tool_error", "max_steps_exceeded", "llm_refusal")

FEEDBACK_SCHEMA = arrow_schema(WORKSPACE_FEEDBACK)


@dataclass(frozen=True)
class Review:
    """Processing lifecycle of feedback rows."""

    status: np.ndarray  # index into FEEDBACK_STATUSES
    reviewed_us: np.ndarray
    by_agent: np.ndarray


def _reviews(rng: np.random.Generator, created_us: np.ndarray, always_applied: np.ndarray, frame: TimeFrame) -> Review:
    """Recent feedback is mostly pending; older feedback mostly reviewed, applied or dismissed."""
    n = len(created_us)
    age_days = (frame.end_us - created_us) / DAY_US
    pending = rng.random(n) < 0.06 + 0.9 * np.exp(-age_days / 2.5)
    outcome = 1 + categorical(rng, n, (0.25, 0.4, 0.35))
    delay = np.exp(rng.uniform(np.log(10 * MINUTE_US), np.log(4 * DAY_US), n)).astype(np.int64)
    reviewed = created_us + delay
    pending |= reviewed >= frame.end_us
    status = np.where(always_applied, 2, np.where(pending, 0, outcome))
    reviewed = np.where(always_applied, np.minimum(created_us + SECOND_US, frame.end_us - 1), reviewed)
    return Review(status=status, reviewed_us=reviewed, by_agent=rng.random(n) < 0.7)


def workspace_feedback(
    rng: np.random.Generator,
    n: int,
    sessions: pa.Table,
    session_tenant: np.ndarray,
    ids: Workspace,
    frame: TimeFrame,
) -> pa.Table:
    """Feedback from every intake point, some linked to a session of the same tenant."""
    tenants = list(TENANTS)
    session_ids = sessions.column("id").to_pylist()
    session_agents = sessions.column("agent_id").to_pylist()
    session_created = sessions.column("created_at").to_numpy().view(np.int64)

    source_type = categorical(rng, n, SOURCE_TYPE_WEIGHTS)
    tenant = categorical(rng, n, TENANT_WEIGHTS)
    linked, pick = _link_to_sessions(rng, tenant, source_type, session_tenant)
    follow_up = np.exp(rng.uniform(np.log(MINUTE_US), np.log(DAY_US), n)).astype(np.int64)
    room = frame.end_us - 1 - session_created[pick]  # feedback on a recent session stays before as_of
    follow_up = np.where(follow_up < room, follow_up, (room * rng.random(n)).astype(np.int64))
    created = np.where(linked, session_created[pick] + follow_up, sample_times(rng, n, frame))
    rating = categorical_by_row(rng, np.array(RATING_WEIGHTS_BY_SOURCE_TYPE)[source_type])
    review = _reviews(rng, created, source_type == FEEDBACK_SOURCE_TYPES.index("extraction"), frame)
    context = _feedback_contexts(rng, source_type)
    comment_draw = rng.random(n)
    entity_draw = rng.integers(0, 40, n)
    has_entity = np.isin(source_type, [1, 2]) | (rng.random(n) < 0.1)
    agent_draw = rng.integers(0, len(AGENT_NAMES), n)
    no_agent = rng.random(n) < 0.08
    user_draw = rng.integers(0, 12, n)
    admin_draw = rng.integers(0, 2, n)
    notes_draw = rng.random(n)
    rows = []
    for i in range(n):
        name = tenants[tenant[i]]
        status = FEEDBACK_STATUSES[review.status[i]]
        is_pending = status == "pending"
        rating_name = FEEDBACK_RATINGS[rating[i]]
        comments = FEEDBACK_COMMENTS[rating_name]
        notes = REVIEW_NOTES.get(status, ())
        rows.append(
            {
                "tenant_id": ids.tenant_ids[name],
                "source_type": FEEDBACK_SOURCE_TYPES[source_type[i]],
                "rating": rating_name,
                "comment": comments[int(comment_draw[i] * 10) % len(comments)] if comment_draw[i] < 0.7 else None,
                "session_id": session_ids[pick[i]] if linked[i] else None,
                "entity_id": ids.entities[name][entity_draw[i]] if has_entity[i] else None,
                "agent_id": session_agents[pick[i]]
                if linked[i]
                else (None if no_agent[i] else ids.agents[name][agent_draw[i]]),
                "context": context[i],
                "status": status,
                "reviewed_by_agent_id": None if is_pending or not review.by_agent[i] else ids.review_agent,
                "reviewed_by_user_id": None if is_pending or review.by_agent[i] else ids.users[name][admin_draw[i]],
                "reviewed_at": None if is_pending else int(review.reviewed_us[i]),
                "review_notes": notes[int(notes_draw[i] * 10) % len(notes)] if notes and notes_draw[i] < 0.85 else None,
                "created_by": ids.users[name][user_draw[i]],
                "created_at": int(created[i]),
            }
        )
    return _feedback_table(rng, rows)


def _link_to_sessions(
    rng: np.random.Generator, tenant: np.ndarray, source_type: np.ndarray, session_tenant: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Whether each feedback row is about a session, and which session of its own tenant."""
    n = len(tenant)
    by_tenant = np.argsort(session_tenant, kind="stable")
    per_tenant = np.bincount(session_tenant, minlength=len(TENANTS))
    first = np.concatenate(([0], np.cumsum(per_tenant)[:-1]))
    linked = (rng.random(n) < np.array(SOURCE_TYPE_LINK_SHARE)[source_type]) & (per_tenant[tenant] > 0)
    within = (rng.random(n) * per_tenant[tenant]).astype(np.int64)
    return linked, by_tenant[np.minimum(first[tenant] + within, len(by_tenant) - 1)]


def _feedback_table(rng: np.random.Generator, rows: list[dict[str, object]]) -> pa.Table:
    """Feedback rows with fresh ids; timestamps given as epoch microseconds."""
    feedback_ids = uuid4_list(rng, len(rows))
    columns: dict[str, list[object]] = {field.name: [] for field in FEEDBACK_SCHEMA}
    for feedback_id, row in zip(feedback_ids, rows, strict=True):
        columns["id"].append(feedback_id)
        for name, value in row.items():
            columns[name].append(value)
    arrays = []
    for field in FEEDBACK_SCHEMA:
        values = columns[field.name]
        if pa.types.is_timestamp(field.type):
            us = np.array([-1 if v is None else v for v in values], dtype=np.int64)
            arrays.append(timestamp_column(us, null=us < 0))
        else:
            arrays.append(pa.array(values, field.type))
    return pa.Table.from_arrays(arrays, schema=FEEDBACK_SCHEMA)


def _feedback_contexts(rng: np.random.Generator, source_type: np.ndarray) -> list[str]:
    """Source-specific context objects, as the unified feedback table stores them."""
    n = len(source_type)
    ref_ids = uuid4_list(rng, n)
    criteria_sets = uuid4_list(rng, 4)
    entity_types = uuid4_list(rng, 5)
    small = rng.integers(0, 1000, (n, 3))
    contexts = []
    for i in range(n):
        kind = FEEDBACK_SOURCE_TYPES[source_type[i]]
        a, b, c = (int(v) for v in small[i])
        if kind == "chat":
            context: dict[str, object] = {"chat_id": ref_ids[i], "message_index": a % 30}
        elif kind == "response":
            context = {
                "response_id": ref_ids[i],
                "criteria_set_id": criteria_sets[b % 4],
                "field_name": FIELD_NAMES[c % len(FIELD_NAMES)],
            }
        elif kind == "extraction":
            context = {
                "field_name": FIELD_NAMES[a % len(FIELD_NAMES)],
                "entity_type_id": entity_types[b % 5],
                "rejected_value": REJECTED_VALUES[c % len(REJECTED_VALUES)],
            }
        elif kind == "tool":
            context = {"tool_slug": TOOL_SLUGS[a % len(TOOL_SLUGS)], "tool_run_id": ref_ids[i]}
        elif kind == "session":
            context = {"failure_reason": FAILURE_REASONS[a % len(FAILURE_REASONS)], "event_id": ref_ids[i]}
        else:
            context = {"surface": "agent-review", "flagged": ("message", "response", "session")[a % 3]}
        contexts.append(compact_json(context))
    return contexts


def replay_failure_feedback(rng: np.random.Generator, evals: Evals, ids: Workspace, frame: TimeFrame) -> pa.Table:
    """A failed replay writes a `session` feedback row linking golden and replay sessions."""
    failed = evals.failed
    created = np.array([f.completed_us for f in failed], dtype=np.int64) + 5 * MINUTE_US
    review = _reviews(rng, created, np.zeros(len(failed), dtype=bool), frame)
    rows = []
    for i, failure in enumerate(failed):
        tenant = failure.tenant
        status = FEEDBACK_STATUSES[review.status[i]]
        is_pending = status == "pending"
        dims = ", ".join(failure.dimensions)
        rows.append(
            {
                "tenant_id": ids.tenant_ids[tenant],
                "source_type": "session",
                "rating": "negative",
                "comment": f"Replay diverged from golden on {dims}",
                "session_id": failure.replay_id,
                "entity_id": None,
                "agent_id": failure.agent_id,
                "context": compact_json(
                    {
                        "failure_reason": "golden_replay_diverged",
                        "golden_session_id": failure.golden_id,
                        "replay_session_id": failure.replay_id,
                    }
                ),
                "status": status,
                "reviewed_by_agent_id": None if is_pending else ids.review_agent,
                "reviewed_by_user_id": None,
                "reviewed_at": None if is_pending else int(review.reviewed_us[i]),
                "review_notes": None if is_pending else REVIEW_NOTES[status][0],
                "created_by": ids.users[tenant][0],
                "created_at": int(created[i]),
            }
        )
    return _feedback_table(rng, rows)
