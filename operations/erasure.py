"""`feedback-analytics forget --user-id ID`: erase one user's rows from every raw table that holds a user id.

- raw.session_feedback: rows whose `user_id_or_null` is the user: deleted.
- raw.turn_reactions: the user's reactions: deleted.
- raw.workspace_feedback: rows the user created: deleted; rows the user only
  reviewed keep their content but lose the reviewer id (pseudonymised).
- raw.workspace_eval_runs: runs the user started keep their results but lose `created_by`.
- raw.workspace_sessions: a golden session the user promoted keeps its
  snapshot but loses `metadata.golden.promoted_by` (golden sessions are immutable references).
- raw.quarantine: quarantined lines that carry the id as a JSON string value: deleted.
- Analyzer events and their Parquet archive hold no user id (only a session
  id), so they have nothing to erase.

Everything happens in one transaction, with a `raw.erasure_log` row that
names the request by the SHA-256 of the id, never the id itself.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from dataclasses import dataclass, field

import duckdb

# table -> (column, action): "delete" removes the row, "null" only removes the id
USER_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "session_feedback": [("user_id_or_null", "delete")],
    "turn_reactions": [("user_id", "delete")],
    "workspace_feedback": [("created_by", "delete"), ("reviewed_by_user_id", "null")],
    "workspace_eval_runs": [("created_by", "null")],
}
# ids inside JSON: the admin who promoted a golden session (metadata.golden.promoted_by)
PROMOTED_BY = "json_extract_string(metadata, '$.golden.promoted_by')"
FORGET_PROMOTER = """json_merge_patch(metadata, '{"golden": {"promoted_by": null}}')"""


@dataclass
class ErasureResult:
    user_id_sha256: str
    deleted: dict[str, int] = field(default_factory=dict)
    pseudonymised: dict[str, int] = field(default_factory=dict)
    remaining: dict[str, int] = field(default_factory=dict)

    @property
    def rows_deleted(self) -> int:
        return sum(self.deleted.values())

    @property
    def rows_pseudonymised(self) -> int:
        return sum(self.pseudonymised.values())


def _quarantine_match() -> str:
    # the id as a JSON string value anywhere in the quarantined text: "<id>"
    return "strpos(coalesce(raw_text, ''), ?) > 0"


def _json_string(user_id: str) -> str:
    return json.dumps(user_id, ensure_ascii=False)


def remaining_rows(con: duckdb.DuckDBPyConnection, user_id: str) -> dict[str, int]:
    """The verification: rows that still carry the id, per table and column (all zero after an erasure)."""
    counts = {}
    for table, columns in USER_COLUMNS.items():
        for column, _action in columns:
            (count,) = con.execute(f"select count(*) from raw.{table} where {column} = ?", [user_id]).fetchall()[0]
            counts[f"raw.{table}.{column}"] = count
    (count,) = con.execute(
        f"select count(*) from raw.workspace_sessions where {PROMOTED_BY} = ?", [user_id]
    ).fetchall()[0]
    counts["raw.workspace_sessions.metadata.golden.promoted_by"] = count
    (count,) = con.execute(
        f"select count(*) from raw.quarantine where {_quarantine_match()}", [_json_string(user_id)]
    ).fetchall()[0]
    counts["raw.quarantine.raw_text"] = count
    return counts


def forget(con: duckdb.DuckDBPyConnection, user_id: str, *, dry_run: bool) -> ErasureResult:
    result = ErasureResult(hashlib.sha256(user_id.encode()).hexdigest())
    con.execute("begin transaction")
    try:
        for table, columns in USER_COLUMNS.items():
            for column, action in columns:
                where = f"{column} = ?"
                if dry_run:
                    (count,) = con.execute(f"select count(*) from raw.{table} where {where}", [user_id]).fetchall()[0]
                elif action == "delete":
                    (count,) = con.execute(f"delete from raw.{table} where {where}", [user_id]).fetchall()[0]
                else:
                    (count,) = con.execute(
                        f"update raw.{table} set {column} = null where {where}", [user_id]
                    ).fetchall()[0]
                bucket = result.deleted if action == "delete" else result.pseudonymised
                bucket[f"raw.{table}"] = bucket.get(f"raw.{table}", 0) + count
        if dry_run:
            sql = f"select count(*) from raw.workspace_sessions where {PROMOTED_BY} = ?"
        else:
            sql = f"update raw.workspace_sessions set metadata = {FORGET_PROMOTER} where {PROMOTED_BY} = ?"
        (count,) = con.execute(sql, [user_id]).fetchall()[0]
        result.pseudonymised["raw.workspace_sessions"] = count
        verb = "select count(*) from" if dry_run else "delete from"
        (count,) = con.execute(
            f"{verb} raw.quarantine where {_quarantine_match()}", [_json_string(user_id)]
        ).fetchall()[0]
        result.deleted["raw.quarantine"] = count
        con.execute(
            "insert into raw.erasure_log values (?, ?, ?, ?, ?, ?, ?)",
            [
                uuid.uuid4().hex,
                result.user_id_sha256,
                dt.datetime.now(dt.UTC).replace(tzinfo=None),
                result.rows_deleted,
                result.rows_pseudonymised,
                json.dumps({"deleted": result.deleted, "pseudonymised": result.pseudonymised}),
                dry_run,
            ],
        )
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    result.remaining = remaining_rows(con, user_id)
    return result
