"""Helpers for the ingest tests: record builders, input writers, the CLI in a subprocess, warehouse reads.

Records follow the source contracts in /work/shared/reference/README.md. Each
builder returns one valid record for a sequence number `n`; keyword arguments
override fields, and `drop=` removes them (to make a required field missing).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from demo.session_feedback import SESSION_FEEDBACK_DDL
from warehouse.contracts import FEEDBACK_RATINGS, OUTCOMES, REACTIONS, SESSION_LABELS, SESSION_SOURCES
from warehouse.raw_tables import DATA_TABLES

RAW_DATA_TABLES = tuple(DATA_TABLES)
RAW_TABLES = (*RAW_DATA_TABLES, "quarantine", "load_manifest")  # what a load writes

_DROP = object()


def _apply(record: dict[str, Any], overrides: dict[str, Any], drop: Sequence[str]) -> dict[str, Any]:
    record.update(overrides)
    for key in drop:
        record.pop(key, None)
    return record


def hex_id(text: str, length: int = 64) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def uuid_for(n: int, prefix: str = "0000") -> str:
    """A deterministic uuid4-shaped id."""
    return f"{prefix:0>8}-0000-4000-8000-{n:012d}"


# -- source 3: analyzer events ------------------------------------------------------
def analyzer_event(n: int = 0, *, drop: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    invocation = uuid_for(n, "a")
    skill = overrides.get("skill_id", f"skill-{n % 3}")
    record = {
        "event_id": hex_id(f"{invocation}:{skill}", 16),
        "timestamp": f"2026-05-{1 + n % 28:02d}T12:00:00Z",
        "session_id": f"session-{n}",
        "skill_id": skill,
        "invocation_uuid": invocation,
        "outcome": OUTCOMES[n % 3],
        "confidence": 0.75,
        "correction_type": ("rejection", "partial", None)[n % 3],
        "user_message_snippet": f"no, use the other function ({n})",
        "turns_to_feedback": 1 + n % 3,
        "ai_tools_used": ["Read", "Edit"],
        "dimension_hint": ("accuracy", "coverage", None)[n % 3],
    }
    return _apply(record, overrides, drop)


# -- source 1: session feedback -------------------------------------------------------
def session_record(n: int = 0, *, drop: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    record = {
        "id": uuid_for(n, "5"),
        "session_id_opaque": hex_id(f"thread-{n}"),
        "user_id_or_null": f"user-{n % 4}" if n % 5 else None,
        "recorded_at": f"2026-05-{1 + n % 28:02d}T09:30:00.123456Z",
        "label": SESSION_LABELS[n % 3],
        "turn_count_at_end": n % 7,
        "source": SESSION_SOURCES[n % 3],
        "schema_version": 1,
    }
    return _apply(record, overrides, drop)


SESSION_SQLITE_DDL = SESSION_FEEDBACK_DDL  # the legacy table as upstream created it

SESSION_COLUMNS = (
    "id",
    "session_id_opaque",
    "user_id_or_null",
    "recorded_at",
    "recorded_date",
    "label",
    "turn_count_at_end",
    "source",
    "schema_version",
)


def recorded_date_of(record: dict[str, Any]) -> str:
    return str(record["recorded_at"])[:10]


def write_session_sqlite(
    path: Path, records: Iterable[dict[str, Any]], extra_value: dict[str, Any] | None = None
) -> Path:
    """The legacy SQLite store: one row per record, `value` holding the record (plus `extra_value`) as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    try:
        db.execute(SESSION_SQLITE_DDL)
        for record in records:
            row = {**record, "recorded_date": record.get("recorded_date", recorded_date_of(record))}
            value = json.dumps({**record, **(extra_value or {})}, ensure_ascii=False)
            db.execute(
                f"insert into session_feedback ({', '.join(SESSION_COLUMNS)}, value) "
                f"values ({', '.join('?' * (len(SESSION_COLUMNS) + 1))})",
                [row.get(c) for c in SESSION_COLUMNS] + [value],
            )
        db.commit()
    finally:
        db.close()
    return path


# -- source 2: turn reactions -----------------------------------------------------------
def reaction_payload(n: int = 0, *, drop: Sequence[str] = (), meta: dict[str, Any] | None = None, **reaction: Any):
    """A bare reaction artifact payload; keyword arguments override fields of `reaction`."""
    turn = f"turn_{1762441078644 + n}_t{n}"
    conversation = uuid_for(n // 2, "c")
    body = {
        "turn_id": turn,
        "text": f"comment {n}",
        "confidence": 1.0,
        "ts": f"2026-05-{1 + n % 28:02d}T17:47:02.162904Z",
        "reaction": REACTIONS[n % 3],
        "origin": "user",
    }
    body.update(reaction)
    for key in drop:
        body.pop(key, None)
    meta_block = {
        "rn": f"ef:tenant-a:proj-x:{conversation}:{turn}:artifact:artifact-{n}",
        "turn_id": turn,
        "track_id": "A",
        "user_type": "registered",
        "kind": "turn.log.reaction",
    }
    meta_block.update(meta or {})
    return {"reaction": body, "meta": meta_block, "conversation_id": conversation, "bundle_id": "with.codegen"}


def reaction_envelope(
    payload: dict[str, Any],
    *,
    tenant: str = "tenant-a",
    project: str = "proj-x",
    user_id: str | None = "user-1",
    tags: list[str] | None = None,
) -> dict[str, Any]:
    body = payload["reaction"]
    default_tags = ["artifact:turn.log.reaction", f"turn:{body.get('turn_id')}", f"origin:{body.get('origin')}"]
    return {
        "tenant": tenant,
        "project": project,
        "user_id": user_id,
        "tags": default_tags if tags is None else tags,
        "payload": payload,
    }


def rn_of(payload: dict[str, Any]) -> str:
    return payload["meta"]["rn"]


# -- source 4: workspace -------------------------------------------------------------------
def workspace_feedback(n: int = 0, *, drop: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    record = {
        "id": uuid_for(n, "f"),
        "tenant_id": "tenant-a",
        "source_type": ("chat", "response", "tool")[n % 3],
        "rating": FEEDBACK_RATINGS[n % 3],
        "comment": f"feedback comment {n}",
        "session_id": uuid_for(n, "e"),
        "entity_id": None,
        "agent_id": "agent-1",
        "context": {"turn": n, "tags": ["x"]},
        "status": "pending",
        "reviewed_by_agent_id": None,
        "reviewed_by_user_id": None,
        "reviewed_at": None,
        "review_notes": None,
        "created_by": "user-1",
        "created_at": f"2026-05-{1 + n % 28:02d}T08:00:00Z",
    }
    return _apply(record, overrides, drop)


def workspace_session(n: int = 0, *, drop: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    record = {
        "id": uuid_for(n, "e"),
        "tenant_id": "tenant-a",
        "agent_id": "agent-1",
        "session_type": "agent",
        "status": "completed",
        "created_at": f"2026-05-{1 + n % 28:02d}T07:00:00Z",
        "completed_at": f"2026-05-{1 + n % 28:02d}T07:30:00Z",
        "metadata": {"golden": {"set": "core", "promoted_at": "2026-04-01T00:00:00Z", "promoted_by": "u"}}
        if n == 0
        else {"eval_source": uuid_for(0, "e"), "eval_result": {"overall_accuracy": 0.9, "dimensions": {}}},
    }
    return _apply(record, overrides, drop)


def eval_run(n: int = 0, *, drop: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    record = {
        "id": uuid_for(n, "d"),
        "tenant_id": "tenant-a",
        "name": f"nightly {n}",
        "set_name": "core",
        "agent_id": "agent-2",
        "triggered_by": "scheduled",
        "started_at": f"2026-05-{1 + n % 28:02d}T02:00:00Z",
        "completed_at": f"2026-05-{1 + n % 28:02d}T02:10:00Z",
        "golden_session_count": 3,
        "passed_count": 2,
        "failed_count": 1,
        "results": {"sessions": [1, 2, 3]},
        "created_by": "scheduler",
    }
    return _apply(record, overrides, drop)


# -- writing input files ---------------------------------------------------------------------
def jsonl_line(item: dict[str, Any] | str | bytes) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode()
    return json.dumps(item, ensure_ascii=False).encode()


def write_jsonl(path: Path, items: Iterable[dict[str, Any] | str | bytes], *, newline: bytes = b"\n") -> Path:
    """One line per item: a dict as compact JSON (non-ASCII kept), a str/bytes as is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(jsonl_line(i) + newline for i in items))
    return path


def append_jsonl(path: Path, items: Iterable[dict[str, Any] | str | bytes]) -> Path:
    with path.open("ab") as handle:
        handle.write(b"".join(jsonl_line(i) + b"\n" for i in items))
    return path


# -- the CLI ----------------------------------------------------------------------------------
def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "FEEDBACK_DB"}
    env.update(extra)
    return env


def run_on_a_terminal(args: Sequence[Any], *, timeout: float = 600, stdout_too: bool = True) -> tuple[int, str]:
    """`python -m cli ARGS...` with stderr (and stdout, unless `stdout_too` is false: then a pipe) on a
    pseudo-terminal; (exit code, what reached the terminal)."""
    import pty
    import select

    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", *(str(a) for a in args)],
            stdout=terminal if stdout_too else subprocess.PIPE,
            stderr=terminal,
            stdin=subprocess.DEVNULL,
            env=cli_env(TERM="xterm-256color", COLUMNS="120"),
        )
    finally:
        os.close(terminal)
    output = b""
    while True:
        ready, _, _ = select.select([controller], [], [], timeout)
        if not ready:
            break
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    if proc.stdout is not None:
        proc.stdout.read()
    return proc.wait(timeout=60), output.decode("utf-8", errors="replace")


def kill_at(point: str, command: Sequence[Any], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """Run `command` until it stops itself at the pause point `point` (warehouse/pause_points.py), then SIGKILL it.

    Deterministic: the process says when it is at the point. Fails if it ends without reaching it."""
    proc = subprocess.Popen(
        [str(part) for part in command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env={**env, "FEEDBACK_PAUSE_AT": point},
    )
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    if not os.WIFSTOPPED(status):
        proc.returncode = os.waitstatus_to_exitcode(status)
        out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
        raise AssertionError(f"{command[2:4]} ended (exit {proc.returncode}) before reaching {point}: {out!r} {err!r}")
    proc.kill()  # SIGKILL also ends a stopped process
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def run_cli(*args: Any, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m cli ARGS...` with pipes for stdout/stderr (so: not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "cli", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env or cli_env(),
        timeout=timeout,
        check=False,
    )


def ingest_ok(
    *args: Any, env: dict[str, str] | None = None, fresh_process: bool = False
) -> subprocess.CompletedProcess[str]:
    """`ingest ARGS...`, asserting success and no traceback.

    With `fresh_process`, `python -m cli` runs in a subprocess (where the CLI's own behaviour is tested:
    pipes, exit codes, kills). Otherwise the same click command runs in this process, with its stdout and
    stderr captured (not terminals): the same code, without paying an interpreter start per load.
    """
    if fresh_process:
        result = run_cli("ingest", *args, env=env)
    else:
        from click.testing import CliRunner

        from cli.main import cli

        overrides: dict[str, str | None] = {"FEEDBACK_DB": None, **(env or {})}
        outcome = CliRunner(env=overrides).invoke(cli, ["ingest", *(str(a) for a in args)], catch_exceptions=False)
        result = subprocess.CompletedProcess(["ingest", *args], outcome.exit_code, outcome.stdout, outcome.stderr)
    assert result.returncode == 0, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert "Traceback" not in result.stderr
    return result


_LOAD_LINE = re.compile(
    r"^(?P<table>\w+)\s+(?P<uri>.+): read (?P<read>[\d,]+), landed (?P<loaded>[\d,]+), "
    r"quarantined (?P<quarantined>[\d,]+), duplicates (?P<duplicates>[\d,]+) \("
)
_SKIP_LINE = re.compile(r"^(?P<table>\w+)\s+(?P<uri>.+): unchanged since its last load, skipped$")
_TOTAL_LINE = re.compile(
    r"^total: read (?P<read>[\d,]+), landed (?P<loaded>[\d,]+), quarantined (?P<quarantined>[\d,]+), "
    r"duplicates (?P<duplicates>[\d,]+)"
)


def _ints(match: re.Match[str]) -> dict[str, int]:
    return {k: int(match[k].replace(",", "")) for k in ("read", "loaded", "quarantined", "duplicates")}


def parse_report(stdout: str) -> tuple[list[dict[str, Any]], list[dict[str, str]], dict[str, int]]:
    """(per-load lines, skipped lines, totals) of an `ingest` run's stdout."""
    loads, skipped, totals = [], [], None
    for line in stdout.splitlines():
        if m := _LOAD_LINE.match(line):
            loads.append({"table": m["table"], "uri": m["uri"], **_ints(m)})
        elif m := _SKIP_LINE.match(line):
            skipped.append({"table": m["table"], "uri": m["uri"]})
        elif m := _TOTAL_LINE.match(line):
            totals = _ints(m)
    assert totals is not None, f"no totals line in:\n{stdout}"
    return loads, skipped, totals


# -- reading the warehouse ----------------------------------------------------------------------
def query(db: Path, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def rows(db: Path, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        cur = con.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        con.close()


def count(db: Path, table: str) -> int:
    return query(db, f"select count(*) from raw.{table}")[0][0]


def manifest(db: Path) -> list[dict[str, Any]]:
    return rows(db, "select * from raw.load_manifest order by started_at, uri")


def quarantine(db: Path) -> list[dict[str, Any]]:
    return rows(db, "select * from raw.quarantine order by source_uri, line_number, record_key")


def quarantine_by_line(db: Path) -> dict[int, dict[str, Any]]:
    found = {}
    for row in quarantine(db):
        assert row["line_number"] not in found, f"line {row['line_number']} quarantined twice"
        found[row["line_number"]] = row
    return found


def snapshot(db: Path, tables: Sequence[str] = RAW_TABLES) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the raw tables, sorted: to compare the warehouse before and after."""
    return {t: sorted(query(db, f"select * from raw.{t}"), key=repr) for t in tables}


def places_containing(db: Path, needle: str) -> list[str]:
    """`schema.table.column` of every column (text or blob) in the warehouse holding `needle`."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = con.execute(
            "select table_schema, table_name, column_name, data_type from information_schema.columns "
            "where table_catalog = current_database()"
        ).fetchall()
        found = []
        for schema, table, column, _data_type in columns:
            ident = f'"{schema}"."{table}"'
            col = '"' + column.replace('"', '""') + '"'
            # a blob casts to text with its non-UTF-8 bytes escaped: ASCII needles are found in it too
            (hits,) = con.execute(
                f"select count(*) from {ident} where strpos(cast({col} as varchar), ?) > 0", [needle]
            ).fetchone()
            if hits:
                found.append(f"{schema}.{table}.{column}")
        return found
    finally:
        con.close()


def assert_counts_add_up(db: Path) -> None:
    """Every manifest row: read = loaded + quarantined + duplicates."""
    for row in manifest(db):
        assert row["rows_read"] == row["rows_loaded"] + row["rows_quarantined"] + row["rows_duplicate"], row


# -- PostgreSQL ---------------------------------------------------------------------------------
