"""Source 4, the agent workspace: feedback.jsonl, sessions.jsonl and eval_runs.jsonl under OUT/workspace.

Upstream these are the workspace's PostgreSQL tables `feedback`, `sessions` and `eval_runs`,
exported as JSON lines: one row a line with the columns of the workspace contracts
(`warehouse.contracts.WORKSPACE_CONTRACTS`) in their order, timestamps as ISO-8601 Z text, the
JSON column (`context`, `metadata`, `results`) as a nested object, rows in time order. The rows
come from `demo.workspace_sessions` (identities, everyday sessions), `demo.workspace_evals`
(golden sessions, replays, eval runs) and `demo.workspace_feedback`.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from demo.common import ISO_US, Progress, TimeFrame, copy_jsonl
from demo.workspace_evals import EVAL_RUN_SCHEMA, generate_evals
from demo.workspace_feedback import replay_failure_feedback, workspace_feedback
from demo.workspace_sessions import SESSION_SCHEMA, ordinary_sessions, workspace_identities
from warehouse.sql import sql_literal

ISO_SQL = sql_literal(ISO_US)


def write_workspace(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    volumes: dict[str, int],
    rng: np.random.Generator,
    frame: TimeFrame,
    report: Progress,
) -> dict[str, int]:
    folder.mkdir(parents=True, exist_ok=True)
    ids = workspace_identities(rng)
    sessions, session_tenant = ordinary_sessions(rng, volumes["workspace_sessions"], ids, frame)
    evals = generate_evals(rng, ids, frame)
    feedback = workspace_feedback(rng, volumes["workspace_feedback"], sessions, session_tenant, ids, frame)
    feedback = pa.concat_tables([feedback, replay_failure_feedback(rng, evals, ids, frame)])
    all_sessions = pa.concat_tables([sessions, pa.Table.from_pylist(evals.golden + evals.replays, SESSION_SCHEMA)])
    eval_runs = pa.Table.from_pylist(evals.runs, EVAL_RUN_SCHEMA)
    _write_rows(con, all_sessions, "metadata", "created_at", folder / "sessions.jsonl")
    _write_rows(con, feedback, "context", "created_at", folder / "feedback.jsonl")
    _write_rows(con, eval_runs, "results", "started_at", folder / "eval_runs.jsonl")
    counts = {
        "workspace_feedback": len(feedback),
        "workspace_sessions": len(all_sessions),
        "workspace_eval_runs": len(eval_runs),
    }
    report(
        f"workspace: {counts['workspace_feedback']:,} feedback rows, "
        f"{counts['workspace_sessions']:,} sessions ({len(evals.golden)} golden, "
        f"{len(evals.replays)} replays), {counts['workspace_eval_runs']} eval runs"
    )
    return counts


def _write_rows(con: duckdb.DuckDBPyConnection, table: pa.Table, json_column: str, order_by: str, path: Path) -> None:
    """Rows in time order; timestamps as ISO-8601 Z text, the JSON column as a nested object."""
    columns = []
    for field in table.schema:
        if field.name == json_column:
            columns.append(f"{field.name}::json as {field.name}")
        elif pa.types.is_timestamp(field.type):
            columns.append(f"strftime({field.name}, {ISO_SQL}) as {field.name}")
        else:
            columns.append(field.name)
    times = table.column(order_by).to_numpy(zero_copy_only=False).astype("datetime64[us]")
    position = np.empty(len(table), dtype=np.int64)
    position[np.argsort(times.view(np.int64), kind="stable")] = np.arange(len(table))
    con.register("workspace_rows", table.append_column("seq", pa.array(position)))
    copy_jsonl(con, f"select {', '.join(columns)} from workspace_rows order by seq", path)
    con.unregister("workspace_rows")
