"""Upstream PostgreSQL tables for the ingest tests: the `session_feedback`, `conv_messages` and workspace
tables as upstream defines them, rows written into them, DSN helpers (the server: tests/support/postgres.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from tests.support.ingest import SESSION_COLUMNS, eval_run, recorded_date_of, workspace_feedback, workspace_session


def pg_literal(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "array[" + ", ".join(pg_literal(v) for v in value) + "]::text[]"
    if isinstance(value, dict):
        return pg_literal(json.dumps(value, ensure_ascii=False)) + "::jsonb"
    return "'" + str(value).replace("'", "''") + "'"


def pg_execute(dsn: str, *statements: str) -> None:
    import adbc_driver_postgresql.dbapi as pg

    with pg.connect(dsn) as conn, conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement)
        conn.commit()


def pg_insert(table: str, records: Iterable[dict[str, Any]], columns: Sequence[str]) -> list[str]:
    return [
        f"insert into {table} ({', '.join(columns)}) values ({', '.join(pg_literal(r.get(c)) for c in columns)})"
        for r in records
    ]


PG_SESSION_FEEDBACK_DDL = """
create table session_feedback (
    insertion_order bigserial primary key,
    id text not null,
    session_id_opaque text not null,
    user_id_or_null text,
    recorded_at text not null,
    recorded_date text not null,
    label text not null check (label in ('positive', 'negative', 'skip')),
    turn_count_at_end int not null,
    source text not null check (source in ('cli_end', 'cli_exit', 'api_end')),
    schema_version int not null default 1,
    value jsonb
)
"""


def create_pg_session_feedback(
    dsn: str, records: Sequence[dict[str, Any]], extra_value: dict[str, Any] | None = None
) -> None:
    rows_ = [
        {
            **r,
            "recorded_date": r.get("recorded_date", recorded_date_of(r)),
            "value": {**r, **(extra_value or {})},
        }
        for r in records
    ]
    pg_execute(dsn, PG_SESSION_FEEDBACK_DDL, *pg_insert("session_feedback", rows_, [*SESSION_COLUMNS, "value"]))


INDEX_SCHEMA = "kdcube_tenant_a_proj_x"  # conv_index.py:65-72 for tenant-a / proj-x
CONV_COLUMNS = (
    "user_id", "conversation_id", "message_id", "role", "text", "hosted_uri", "ts", "user_type", "tags", "turn_id",
    "bundle_id",
)  # fmt: skip


def conv_row(
    artifact: dict[str, Any],
    *,
    role: str = "artifact",
    tags: list[str] | None = None,
    tenant: str = "tenant-a",
    project: str = "proj-x",
    **columns: Any,
) -> dict[str, Any]:
    """A conv_messages row of the platform's index for a reaction artifact payload, as ctx_rag.py:1163-1186
    writes it: `text` the reaction as JSON, tags artifact/turn/origin, `ts` the reaction's, `hosted_uri` the
    blob under cb/tenants/<tenant>/projects/<project>/conversation/<user>/<conversation>/<turn>/; keyword
    arguments override columns."""
    body = artifact["reaction"]
    user = columns.get("user_id", "user-1")
    turn = body.get("turn_id")
    digest = hashlib.md5(json.dumps(body, sort_keys=True).encode()).hexdigest()[:8]  # _mid's uuid4().hex[:8]
    message_id = f"artifact-2026-05-01T17-47-02-{digest}"
    message_id += "-turn.log.reaction"
    row = {
        "user_id": user,
        "conversation_id": artifact["conversation_id"],
        "message_id": message_id,
        "role": role,
        "text": json.dumps(body, ensure_ascii=False),
        "hosted_uri": f"file:///store/cb/tenants/{tenant}/projects/{project}/conversation/{user}/"
        f"{artifact['conversation_id']}/{turn}/{message_id}.json",
        "ts": body.get("ts"),
        "user_type": artifact.get("meta", {}).get("user_type", "registered"),
        "turn_id": turn,
        "bundle_id": artifact.get("bundle_id"),
        "tags": tags
        if tags is not None
        else ["artifact:turn.log.reaction", f"turn:{turn}", f"origin:{body.get('origin')}"],
    }
    row.update(columns)
    return row


def index_rn(row: dict[str, Any], tenant: str = "tenant-a", project: str = "proj-x") -> str:
    """The blob's rn a row points at (rn.py:14, rn_message)."""
    return (
        f"ef:{tenant}:{project}:chatbot:message:{row['user_id']}:{row['conversation_id']}:{row['turn_id']}"
        f":artifact:{row['message_id']}"
    )


def create_pg_conv_messages(dsn: str, conv_rows: Sequence[dict[str, Any]], schema: str = INDEX_SCHEMA) -> None:
    """The index schema with the upstream DDL (tests/support/kdcube.py) and the rows in it."""
    from tests.support.kdcube import INDEX_DDL

    ddl = [statement for statement in INDEX_DDL.format(schema=schema).split(";") if statement.strip()]
    pg_execute(dsn, *ddl, *pg_insert(f"{schema}.conv_messages", conv_rows, CONV_COLUMNS))


PG_WORKSPACE_DDL = {
    "feedback": """
        create table feedback (
            id uuid primary key, tenant_id text not null, source_type text not null, rating text not null,
            comment text, session_id uuid, entity_id text, agent_id text, context jsonb,
            status text not null default 'pending', reviewed_by_agent_id text, reviewed_by_user_id text,
            reviewed_at timestamptz, review_notes text, created_by text, created_at timestamptz not null
        )
    """,
    "sessions": """
        create table sessions (
            id uuid primary key, tenant_id text not null, agent_id text, session_type text, status text,
            created_at timestamptz not null, completed_at timestamptz, metadata jsonb
        )
    """,
    "eval_runs": """
        create table eval_runs (
            id uuid primary key, tenant_id text not null, name text, set_name text, agent_id text,
            triggered_by text, started_at timestamptz not null, completed_at timestamptz,
            golden_session_count int, passed_count int, failed_count int, results jsonb, created_by text
        )
    """,
}
WORKSPACE_COLUMNS = {
    "feedback": tuple(workspace_feedback()),
    "sessions": tuple(workspace_session()),
    "eval_runs": tuple(eval_run()),
}


def create_pg_workspace(dsn: str, tables: dict[str, Sequence[dict[str, Any]]]) -> None:
    statements = []
    for table, records in tables.items():
        statements.append(PG_WORKSPACE_DDL[table])
        statements.extend(pg_insert(table, records, WORKSPACE_COLUMNS[table]))
    pg_execute(dsn, *statements)


def dsn_with_password(dsn: str, password: str) -> str:
    """postgresql://user@host/db -> postgresql://user:password@host/db (trust auth ignores it)."""
    return dsn.replace("://postgres@", f"://postgres:{password}@", 1)
