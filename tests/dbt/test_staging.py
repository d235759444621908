"""The dbt staging layer on hand-written raw rows.

A small warehouse is created by the loader's own DDL (`warehouse.connection.connect`),
filled with rows that exercise every normalisation the staging views promise
(upper-case and padded enums, the reactions' legacy tag, a user reaction
without a confidence, golden and replay metadata in JSON), then built with
`dbt build --select staging+ resource_type:seed` (the staging views and
everything built on them, the seeds, their data tests and unit tests).
The tests read the staging views back and check each row.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.support.dbt import run_dbt
from tests.support.staging import STAGING_COLUMNS
from warehouse.connection import connect

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
LOADED_AT = datetime(2026, 6, 1, 0, 0, 0)
LOAD_ID = "load-test"
SOURCE_URI = "/hand/written.jsonl"

# The staging contracts other models are built on: names and order.
SHA = "a" * 64
GOLDEN_METADATA = (
    '{"golden": {"set": "pe-extraction", "promoted_at": "2026-05-03T11:00:00.250000+02:00",'
    ' "promoted_by": "admin-1", "snapshot": {"initial_message": "Compare the deals"}}}'
)
REPLAY_METADATA = (
    '{"eval_source": "golden-1", "eval_run_id": "run-1", "eval_result": {"session_type": "RESPONSE",'
    ' "overall_accuracy": 0.75, "dimensions": {"valuation": {"passed": true, "score": 0.9},'
    ' "sector": {"passed": false, "score": 0.4}}, "divergences": [{"field": "sector"}]}}'
)

# Raw rows as the loader lands them: columns as upstream has them, stored as read.
RAW_ROWS: dict[str, list[dict[str, Any]]] = {
    "analyzer_events": [
        {
            "event_id": "e-correction",
            "timestamp": datetime(2026, 5, 1, 10, 0, 0, 123456),
            "session_id": "session-1",
            "skill_id": "deslop",
            "invocation_uuid": "inv-1",
            "outcome": "CORRECTION",
            "confidence": 0.9,
            "correction_type": " Revert ",
            "user_message_snippet": "non, ça ne marche pas 😤",
            "turns_to_feedback": 1,
            "ai_tools_used": ["Read", "Edit"],
            "dimension_hint": "Security",
        },
        {
            "event_id": "e-partial",
            "timestamp": datetime(2026, 5, 2, 10, 0, 0),
            "session_id": "session-1",
            "skill_id": "deslop",
            "invocation_uuid": "inv-2",
            "outcome": " Partial ",
            "confidence": 0.7,
            "correction_type": "partial",
            "user_message_snippet": "",
            "turns_to_feedback": 3,
            "ai_tools_used": [],
            "dimension_hint": "TRIGGER_QUALITY",
        },
        {
            "event_id": "e-acceptance",
            "timestamp": datetime(2026, 5, 3, 10, 0, 0),
            "session_id": "session-2",
            "skill_id": "cpp-expert",
            "invocation_uuid": "inv-3",
            "outcome": "acceptance",
            "confidence": 0.6,
            "correction_type": None,
            "user_message_snippet": "thanks",
            "turns_to_feedback": 2,
            "ai_tools_used": None,
            "dimension_hint": None,
        },
    ],
    "session_feedback": [
        {
            "id": "sf-positive-incognito",
            "session_id_opaque": SHA,
            "user_id_or_null": None,
            "recorded_at": datetime(2026, 5, 1, 23, 59, 59, 999999),
            "recorded_date": date(2026, 5, 1),
            "label": "POSITIVE",
            "turn_count_at_end": 0,
            "source": "CLI_END",
            "schema_version": 1,
            "insertion_order": 1,
            "modality": "text",
        },
        {
            "id": "sf-skip",
            "session_id_opaque": SHA,
            "user_id_or_null": "user-1",
            "recorded_at": datetime(2026, 5, 2, 8, 0, 0),
            "recorded_date": date(2026, 5, 2),
            "label": " Skip ",
            "turn_count_at_end": 12,
            "source": "api_end",
            "schema_version": 1,
            "insertion_order": None,
            "modality": " Voice ",
        },
        {
            "id": "sf-negative",
            "session_id_opaque": SHA,
            "user_id_or_null": "user-1",
            "recorded_at": datetime(2026, 5, 3, 8, 0, 0),
            "recorded_date": date(2026, 5, 3),
            "label": "negative",
            "turn_count_at_end": 4,
            "source": "Cli_Exit",
            "schema_version": 1,
            "insertion_order": 2,
            "modality": "text",
        },
    ],
    "turn_reactions": [
        {
            # legacy tag, user reaction without a confidence: counts as 1.0
            "rn": "rn-user-legacy",
            "tenant": "acme",
            "project": "support",
            "user_id": "user-1",
            "conversation_id": "conv-1",
            "bundle_id": "support.assistant",
            "turn_id": "turn-1",
            "track_id": "A",
            "user_type": "Registered",
            "kind": "turn.log.reaction",
            "tags": ["kind:turn.log.reaction", "turn:turn-1", "origin:user"],
            "origin": "USER",
            "reaction": "OK",
            "confidence": None,
            "ts": datetime(2026, 5, 1, 12, 0, 0, 654321),
            "text": "merci 👍",
        },
        {
            # a clear: reaction null
            "rn": "rn-user-clear",
            "tenant": "acme",
            "project": "support",
            "user_id": "user-1",
            "conversation_id": "conv-1",
            "bundle_id": "support.assistant",
            "turn_id": "turn-1",
            "track_id": None,
            "user_type": "registered",
            "kind": "turn.log.reaction",
            "tags": ["artifact:turn.log.reaction", "turn:turn-1", "origin:user"],
            "origin": "user",
            "reaction": None,
            "confidence": None,
            "ts": datetime(2026, 5, 1, 13, 0, 0),
            "text": None,
        },
        {
            # a user reaction with its own confidence keeps it
            "rn": "rn-user-scored",
            "tenant": "acme",
            "project": "support",
            "user_id": "user-2",
            "conversation_id": "conv-2",
            "bundle_id": "support.assistant",
            "turn_id": "turn-9",
            "track_id": None,
            "user_type": "anonymous",
            "kind": "turn.log.reaction",
            "tags": ["artifact:turn.log.reaction"],
            "origin": " User ",
            "reaction": "neutral",
            "confidence": 0.8,
            "ts": datetime(2026, 5, 2, 9, 0, 0),
            "text": None,
        },
        {
            # machine, no tags (JSON-lines export): confidence untouched, no legacy tag
            "rn": "rn-machine",
            "tenant": "acme",
            "project": "support",
            "user_id": "user-1",
            "conversation_id": "conv-1",
            "bundle_id": "support.assistant",
            "turn_id": "turn-2",
            "track_id": "B",
            "user_type": "PRIVILEGED",
            "kind": "turn.log.reaction",
            "tags": None,
            "origin": "Machine",
            "reaction": "Not_OK",
            "confidence": 0.65,
            "ts": datetime(2026, 5, 1, 14, 0, 0),
            "text": "Detected frustration",
        },
    ],
    "workspace_feedback": [
        {
            "id": "wf-chat",
            "tenant_id": "tenant-1",
            "source_type": "CHAT",
            "rating": "Positive",
            "comment": "great answer",
            "session_id": "plain-1",
            "entity_id": None,
            "agent_id": "agent-base",
            "context": '{"chat_id": "chat-1", "message_index": 3}',
            "status": "PENDING",
            "reviewed_by_agent_id": None,
            "reviewed_by_user_id": None,
            "reviewed_at": None,
            "review_notes": None,
            "created_by": "user-1",
            "created_at": datetime(2026, 5, 1, 9, 0, 0),
        },
        {
            "id": "wf-tool",
            "tenant_id": "tenant-1",
            "source_type": " tool ",
            "rating": "negative",
            "comment": None,
            "session_id": None,
            "entity_id": None,
            "agent_id": "agent-base",
            "context": '{"tool_slug": "sec.fetch_filing", "tool_run_id": "run-7"}',
            "status": "Applied",
            "reviewed_by_agent_id": "agent-review",
            "reviewed_by_user_id": None,
            "reviewed_at": datetime(2026, 5, 1, 10, 0, 0),
            "review_notes": "use fiscal-year revenue",
            "created_by": "user-2",
            "created_at": datetime(2026, 5, 1, 9, 30, 0),
        },
    ],
    "workspace_sessions": [
        {
            "id": "golden-1",
            "tenant_id": "tenant-1",
            "agent_id": "agent-base",
            "session_type": "Response",
            "status": "COMPLETED",
            "created_at": datetime(2026, 5, 1, 9, 0, 0),
            "completed_at": datetime(2026, 5, 1, 9, 5, 0),
            "metadata": GOLDEN_METADATA,
        },
        {
            "id": "replay-1",
            "tenant_id": "tenant-1",
            "agent_id": "agent-candidate",
            "session_type": "response",
            "status": "completed",
            "created_at": datetime(2026, 6, 1, 2, 0, 0),
            "completed_at": datetime(2026, 6, 1, 2, 1, 0),
            "metadata": REPLAY_METADATA,
        },
        {
            # `golden` that is not an object does not make a golden session
            "id": "plain-1",
            "tenant_id": "tenant-1",
            "agent_id": "agent-base",
            "session_type": "AGENT",
            "status": "Failed",
            "created_at": datetime(2026, 6, 2, 0, 0, 0),
            "completed_at": None,
            "metadata": '{"golden": "yes", "trigger": "api", "event_count": 4}',
        },
        {
            "id": "plain-2",
            "tenant_id": "tenant-1",
            "agent_id": None,
            "session_type": None,
            "status": None,
            "created_at": datetime(2026, 6, 2, 0, 0, 0),
            "completed_at": None,
            "metadata": None,
        },
    ],
    "workspace_eval_runs": [
        {
            "id": "run-1",
            "tenant_id": "tenant-1",
            "name": "golden-pe-extraction-2026-06-01",
            "set_name": "pe-extraction",
            "agent_id": "agent-candidate",
            "triggered_by": "Post-Deploy",
            "started_at": datetime(2026, 6, 1, 2, 0, 0),
            "completed_at": datetime(2026, 6, 1, 2, 6, 0),
            "golden_session_count": 1,
            "passed_count": 0,
            "failed_count": 1,
            "results": '{"bySession": {"golden-1": {"replay_session_id": "replay-1", "passed": false}}}',
            "created_by": None,
        },
    ],
}


def insert_raw_rows(warehouse: Path) -> None:
    """Land RAW_ROWS in the raw tables the loader's DDL created, with lineage."""
    con = connect(warehouse)
    try:
        for table, rows in RAW_ROWS.items():
            for row in rows:
                values = {**row, "_source_uri": SOURCE_URI, "_loaded_at": LOADED_AT, "_load_id": LOAD_ID}
                columns = ", ".join(f'"{name}"' for name in values)
                placeholders = ", ".join("?" for _ in values)
                con.execute(f"insert into raw.{table} ({columns}) values ({placeholders})", list(values.values()))
    finally:
        con.close()


@pytest.fixture(scope="module")
def built_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-written warehouse after `dbt build --select staging+ seeds`."""
    work_dir = tmp_path_factory.mktemp("dbt_staging")
    warehouse = work_dir / "warehouse.duckdb"
    insert_raw_rows(warehouse)
    result = run_dbt(["build", "--select", "staging+", "resource_type:seed"], warehouse=warehouse, work_dir=work_dir)
    assert result.returncode == 0, f"dbt build exited {result.returncode}:\n{result.stdout[-6000:]}"
    return warehouse


def staging_rows(warehouse: Path, model: str, key: str) -> dict[str, dict[str, Any]]:
    """Rows of a staging view as dicts, by primary key."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        cursor = con.execute(f"select * from staging.{model}")
        names = [column[0] for column in cursor.description]
        return {row[names.index(key)]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


def subset(row: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: row[name] for name in names}


@pytest.mark.parametrize("model", sorted(STAGING_COLUMNS))
def test_staging_view_has_the_contract_columns(built_warehouse: Path, model: str) -> None:
    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        columns = [
            name
            for (name,) in con.execute(
                "select column_name from information_schema.columns "
                "where table_schema = 'staging' and table_name = ? order by ordinal_position",
                [model],
            ).fetchall()
        ]
    assert columns == STAGING_COLUMNS[model]


@pytest.mark.parametrize(
    ("model", "raw_table", "key"),
    [
        ("stg_analyzer__events", "analyzer_events", "event_id"),
        ("stg_session_feedback__records", "session_feedback", "feedback_id"),
        ("stg_reactions__turn_reactions", "turn_reactions", "reaction_rn"),
        ("stg_workspace__feedback", "workspace_feedback", "feedback_id"),
        ("stg_workspace__sessions", "workspace_sessions", "session_id"),
        ("stg_workspace__eval_runs", "workspace_eval_runs", "eval_run_id"),
    ],
)
def test_staging_keeps_every_raw_row_with_its_lineage(
    built_warehouse: Path, model: str, raw_table: str, key: str
) -> None:
    rows = staging_rows(built_warehouse, model, key)
    raw_key = "rn" if raw_table == "turn_reactions" else ("event_id" if raw_table == "analyzer_events" else "id")
    assert sorted(rows) == sorted(row[raw_key] for row in RAW_ROWS[raw_table])
    for row in rows.values():
        assert subset(row, "loaded_at", "load_id", "source_uri") == {
            "loaded_at": LOADED_AT,
            "load_id": LOAD_ID,
            "source_uri": SOURCE_URI,
        }


def test_analyzer_events_renamed_and_lower_cased(built_warehouse: Path) -> None:
    rows = staging_rows(built_warehouse, "stg_analyzer__events", "event_id")
    columns = ("invoked_at", "outcome", "correction_type", "dimension_hint", "ai_tools_used", "user_message_snippet")
    assert subset(rows["e-correction"], *columns) == {
        "invoked_at": datetime(2026, 5, 1, 10, 0, 0, 123456),
        "outcome": "correction",
        "correction_type": "revert",
        "dimension_hint": "security",
        "ai_tools_used": ["Read", "Edit"],
        "user_message_snippet": "non, ça ne marche pas 😤",
    }
    assert subset(rows["e-partial"], "outcome", "correction_type", "dimension_hint") == {
        "outcome": "partial",
        "correction_type": "partial",
        "dimension_hint": "trigger_quality",
    }
    assert subset(rows["e-acceptance"], "outcome", "correction_type", "dimension_hint", "confidence") == {
        "outcome": "acceptance",
        "correction_type": None,
        "dimension_hint": None,
        "confidence": 0.6,
    }


def test_session_feedback_renamed_and_lower_cased(built_warehouse: Path) -> None:
    rows = staging_rows(built_warehouse, "stg_session_feedback__records", "feedback_id")
    columns = ("user_id", "label", "surface", "recorded_at", "recorded_date", "turn_count_at_end", "insertion_order")
    assert subset(rows["sf-positive-incognito"], *columns) == {
        "user_id": None,
        "label": "positive",
        "surface": "cli_end",
        "recorded_at": datetime(2026, 5, 1, 23, 59, 59, 999999),
        "recorded_date": date(2026, 5, 1),
        "turn_count_at_end": 0,
        "insertion_order": 1,
    }
    assert subset(rows["sf-skip"], "user_id", "label", "surface", "insertion_order", "modality") == {
        "user_id": "user-1",
        "label": "skip",
        "surface": "api_end",
        "insertion_order": None,
        "modality": "voice",  # trimmed and lower-cased
    }
    assert subset(rows["sf-negative"], "label", "surface") == {"label": "negative", "surface": "cli_exit"}


def test_turn_reactions_normalised(built_warehouse: Path) -> None:
    rows = staging_rows(built_warehouse, "stg_reactions__turn_reactions", "reaction_rn")
    columns = ("origin", "reaction", "is_clear", "confidence", "has_legacy_tag", "user_type")
    assert {rn: subset(row, *columns) for rn, row in rows.items()} == {
        # legacy tag folded; a user reaction without a confidence counts as 1.0
        "rn-user-legacy": {
            "origin": "user",
            "reaction": "ok",
            "is_clear": False,
            "confidence": 1.0,
            "has_legacy_tag": True,
            "user_type": "registered",
        },
        # a clear: null reaction, still a user reaction with confidence 1.0
        "rn-user-clear": {
            "origin": "user",
            "reaction": None,
            "is_clear": True,
            "confidence": 1.0,
            "has_legacy_tag": False,
            "user_type": "registered",
        },
        # a user's own confidence is kept
        "rn-user-scored": {
            "origin": "user",
            "reaction": "neutral",
            "is_clear": False,
            "confidence": 0.8,
            "has_legacy_tag": False,
            "user_type": "anonymous",
        },
        # machine: confidence untouched; no tags at all means no legacy tag (false, not null)
        "rn-machine": {
            "origin": "machine",
            "reaction": "not_ok",
            "is_clear": False,
            "confidence": 0.65,
            "has_legacy_tag": False,
            "user_type": "privileged",
        },
    }
    assert subset(rows["rn-user-legacy"], "reacted_at", "comment_text", "turn_id", "track_id") == {
        "reacted_at": datetime(2026, 5, 1, 12, 0, 0, 654321),
        "comment_text": "merci 👍",
        "turn_id": "turn-1",
        "track_id": "A",
    }


def test_workspace_feedback_lower_cased(built_warehouse: Path) -> None:
    rows = staging_rows(built_warehouse, "stg_workspace__feedback", "feedback_id")
    columns = ("source_type", "rating", "status")
    assert {feedback_id: subset(row, *columns) for feedback_id, row in rows.items()} == {
        "wf-chat": {"source_type": "chat", "rating": "positive", "status": "pending"},
        "wf-tool": {"source_type": "tool", "rating": "negative", "status": "applied"},
    }


def test_workspace_sessions_golden_and_replay_metadata(built_warehouse: Path) -> None:
    rows = staging_rows(built_warehouse, "stg_workspace__sessions", "session_id")
    golden_columns = ("is_golden", "golden_set", "golden_promoted_at", "golden_promoted_by", "is_replay")
    eval_columns = ("eval_source_session_id", "eval_session_type", "eval_overall_accuracy")

    golden = rows["golden-1"]
    assert subset(golden, "session_type", "status") == {"session_type": "response", "status": "completed"}
    assert subset(golden, *golden_columns) == {
        "is_golden": True,
        "golden_set": "pe-extraction",
        # +02:00 in the metadata, UTC here
        "golden_promoted_at": datetime(2026, 5, 3, 9, 0, 0, 250000),
        "golden_promoted_by": "admin-1",
        "is_replay": False,
    }
    assert subset(golden, *eval_columns, "eval_dimensions", "eval_divergences") == dict.fromkeys(
        (*eval_columns, "eval_dimensions", "eval_divergences")
    )

    replay = rows["replay-1"]
    assert subset(replay, "is_golden", "is_replay", "golden_set") == {
        "is_golden": False,
        "is_replay": True,
        "golden_set": None,
    }
    assert subset(replay, *eval_columns) == {
        "eval_source_session_id": "golden-1",
        "eval_session_type": "response",
        "eval_overall_accuracy": 0.75,
    }
    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        dimensions, divergences = con.execute(
            "select json_extract(eval_dimensions, '$.sector.passed'), json_array_length(eval_divergences) "
            "from staging.stg_workspace__sessions where session_id = 'replay-1'"
        ).fetchone()
    assert (dimensions, divergences) == ("false", 1)

    for plain in ("plain-1", "plain-2"):
        assert subset(rows[plain], "is_golden", "is_replay", "golden_set", "eval_overall_accuracy") == {
            "is_golden": False,
            "is_replay": False,
            "golden_set": None,
            "eval_overall_accuracy": None,
        }
    assert subset(rows["plain-1"], "session_type", "status") == {"session_type": "agent", "status": "failed"}


def test_eval_runs_renamed_and_lower_cased(built_warehouse: Path) -> None:
    run = staging_rows(built_warehouse, "stg_workspace__eval_runs", "eval_run_id")["run-1"]
    assert subset(run, "run_name", "set_name", "triggered_by", "passed_count", "failed_count") == {
        "run_name": "golden-pe-extraction-2026-06-01",
        "set_name": "pe-extraction",
        "triggered_by": "post-deploy",
        "passed_count": 0,
        "failed_count": 1,
    }


def test_seeds_are_loaded(built_warehouse: Path) -> None:
    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        weights = dict(con.execute("select outcome, weight from seeds.analyzer_outcome_weights").fetchall())
        ratings = con.execute(
            "select source_system, count(*) from seeds.feedback_label_ratings group by all order by all"
        ).fetchall()
        policies = dict(con.execute("select policy, keep_days from seeds.retention_policies").fetchall())
    assert weights == {"correction": 1.0, "partial": 0.5, "acceptance": 0.0}
    assert ratings == [("analyzer", 3), ("reactions", 3), ("session_feedback", 3), ("workspace", 3)]
    assert policies["session_feedback"] == 180
    assert policies["golden_sessions"] is None
