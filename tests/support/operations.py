"""Helpers for the operations tests (purge, forget, nightly): dated records, source folders, the CLI, archive reads.

Everything is dated relative to AS_OF, the day the purge runs "as of". A policy
with keep_days N has its cutoff day AS_OF - N: rows dated strictly before it go,
a row on the cutoff day stays (docs/operations.md, "Retention purge").
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from tests.support.ingest import (
    analyzer_event,
    cli_env,
    eval_run,
    hex_id,
    reaction_envelope,
    reaction_payload,
    session_record,
    workspace_feedback,
    workspace_session,
    write_jsonl,
)
from warehouse.raw_tables import DATA_TABLES as RAW_DATA_TABLES

AS_OF = dt.date(2026, 11, 1)

# The retention defaults (docs/operations.md, "Retention purge"; policy name as in seeds/retention_policies.csv).
KEEP_DAYS = {
    "session_feedback": 180,
    "analyzer_events_archive": 90,
    "analyzer_events": 365,
    "turn_reactions": 365,
    "turn_reaction_index": 365,
    "workspace_feedback": 365,
    "golden_sessions": None,
    "replay_sessions": 365,
    "eval_runs": 365,
}
POLICY_TABLES = {
    "session_feedback": "session_feedback",
    "analyzer_events_archive": "analyzer_events",
    "analyzer_events": "analyzer_events",
    "turn_reactions": "turn_reactions",
    "turn_reaction_index": "reaction_index",
    "workspace_feedback": "workspace_feedback",
    "golden_sessions": "workspace_sessions",
    "replay_sessions": "workspace_sessions",
    "eval_runs": "workspace_eval_runs",
}
POLICIES = tuple(KEEP_DAYS)
DATA_TABLES = tuple(RAW_DATA_TABLES)


def cutoff(policy: str, as_of: dt.date = AS_OF) -> dt.date:
    keep = KEEP_DAYS[policy]
    assert keep is not None, policy
    return as_of - dt.timedelta(days=keep)


def days(n: int) -> dt.timedelta:
    return dt.timedelta(days=n)


def at(day: dt.date, clock: str = "12:00:00") -> str:
    """An ISO-8601 UTC timestamp on `day`."""
    return f"{day.isoformat()}T{clock}Z"


def last_moment(day: dt.date) -> str:
    """The last microsecond of `day`: still dated `day`."""
    return at(day, "23:59:59.999999")


def first_moment(day: dt.date) -> str:
    return at(day, "00:00:00")


# -- dated records, one per source, named so a test can find them ------------------------------------
def event_on(name: str, moment: str, **overrides: Any) -> dict[str, Any]:
    fields = {"event_id": hex_id(f"event:{name}", 16), "timestamp": moment, "session_id": name, **overrides}
    return analyzer_event(len(name), **fields)


def session_on(name: str, moment: str, *, user: str | None = None, **overrides: Any) -> dict[str, Any]:
    fields = {"id": name, "session_id_opaque": hex_id(f"thread:{name}"), "user_id_or_null": user}
    return session_record(len(name), **{**fields, "recorded_at": moment, **overrides})


def reaction_on(name: str, moment: str, *, user: str | None = "user-1", **reaction: Any) -> dict[str, Any]:
    payload = reaction_payload(
        len(name),
        meta={"rn": name, "turn_id": f"turn-{name}"},
        turn_id=f"turn-{name}",
        ts=moment,
        **reaction,
    )
    payload["conversation_id"] = f"conv-{name}"
    return reaction_envelope(payload, user_id=user)


def feedback_on(name: str, moment: str, *, created_by: str | None = "user-1", **overrides: Any) -> dict[str, Any]:
    return workspace_feedback(len(name), **{"id": name, "created_at": moment, "created_by": created_by, **overrides})


GOLDEN = {"golden": {"set": "core", "promoted_at": "2024-01-01T00:00:00Z", "promoted_by": "curator-1"}}


def replay_on(name: str, moment: str, *, source: str = "gold-ancient", **overrides: Any) -> dict[str, Any]:
    metadata = {"eval_source": source, "eval_result": {"overall_accuracy": 0.9, "dimensions": {}}}
    fields = {"id": name, "created_at": moment, "completed_at": None, "metadata": metadata, **overrides}
    return workspace_session(1, **fields)


def golden_on(name: str, moment: str, *, also_replay_of: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = json.loads(json.dumps(GOLDEN))
    if also_replay_of:  # a replay promoted to golden keeps its eval_source
        metadata["eval_source"] = also_replay_of
    return workspace_session(0, id=name, created_at=moment, completed_at=None, metadata=metadata)


def eval_run_on(name: str, moment: str, **overrides: Any) -> dict[str, Any]:
    return eval_run(len(name), **{"id": name, "started_at": moment, "completed_at": None, **overrides})


# -- source folders and their config -------------------------------------------------------------------
Item = dict[str, Any] | str | bytes


def write_sources(
    folder: Path,
    *,
    analyzer: Iterable[Item] = (),
    sessions: Iterable[Item] = (),
    reactions: Iterable[Item] = (),
    feedback: Iterable[Item] = (),
    workspace_sessions: Iterable[Item] = (),
    eval_runs: Iterable[Item] = (),
) -> Path:
    """JSONL files in the upstream formats plus `sources.toml` naming them; returns the config file."""
    folder.mkdir(parents=True, exist_ok=True)
    sections = []
    for section, relative, items in (
        ("analyzer", "analyzer/feedback.jsonl", analyzer),
        ("session_feedback", "session-feedback/export.jsonl", sessions),
        ("reactions", "reactions/export.jsonl", reactions),
    ):
        items = list(items)
        if items:
            write_jsonl(folder / relative, items)
            sections.append(f'[[{section}]]\npath = "{relative}"\n')
    workspace = False
    for name, items in (("feedback", feedback), ("sessions", workspace_sessions), ("eval_runs", eval_runs)):
        items = list(items)
        if items:
            write_jsonl(folder / "workspace" / f"{name}.jsonl", items)
            workspace = True
    if workspace:
        sections.append('[[workspace]]\npath = "workspace"\n')
    config = folder / "sources.toml"
    config.write_text("\n".join(sections), encoding="utf-8")
    return config


def write_bulk_sessions(path: Path, n: int, *, as_of: dt.date = AS_OF, spread_days: int = 400) -> None:
    """n clean session feedback records (JSONL export), recorded evenly over `spread_days` before as_of."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    try:
        con.execute(
            f"""
            copy (
                select
                    'bulk-' || i as id,
                    sha256('thread-' || i) as session_id_opaque,
                    case when i % 3 = 0 then null else 'user-' || (i % 50) end as user_id_or_null,
                    strftime(
                        timestamp '{as_of.isoformat()}' - to_days(cast(1 + i % {spread_days} as integer))
                        + to_seconds(cast(i % 86400 as bigint)),
                        '%Y-%m-%dT%H:%M:%SZ'
                    ) as recorded_at,
                    ['positive', 'negative', 'skip'][1 + i % 3] as label,
                    i % 9 as turn_count_at_end,
                    ['cli_end', 'cli_exit', 'api_end'][1 + i % 3] as source,
                    1 as schema_version
                from range({n}) as t(i)
            ) to '{path}' (format json)
            """
        )
    finally:
        con.close()


# -- the CLI ---------------------------------------------------------------------------------------------
def ops_env(work: Path, **extra: str) -> dict[str, str]:
    """The CLI's environment: no FEEDBACK_DB / FEEDBACK_ARCHIVE_DIR from outside; dbt's target/ and logs/ in `work`."""
    env = cli_env(DBT_TARGET_PATH=str(work / "dbt-target"), DBT_LOG_PATH=str(work / "dbt-logs"), **extra)
    if "FEEDBACK_ARCHIVE_DIR" not in extra:
        env.pop("FEEDBACK_ARCHIVE_DIR", None)
    env.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    return env


def cli_command(*args: Any) -> list[str]:
    return [sys.executable, "-m", "cli", *(str(a) for a in args)]


def run_ops(
    *args: Any, env: dict[str, str], cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m cli ARGS...` in a subprocess, stdout and stderr captured."""
    return subprocess.run(
        cli_command(*args),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert "Traceback" not in result.stdout + result.stderr
    return result


@dataclass(frozen=True)
class PurgeLine:
    policy: str
    table: str
    cutoff: dt.date | None
    archived: int  # moved out of the table into the archive
    deleted: int  # deleted from the table
    deleted_from_archive: int
    archive_uri: str | None
    dry_run: bool


_PURGE_LINE = re.compile(
    r"^(?P<policy>\w+)\s+raw\.(?P<table>\w+)\s+(?:never purged|before (?P<cutoff>\d{4}-\d{2}-\d{2}))\s+"
    r"(?P<verb>would move|moved) (?P<archived>[\d,]+) to the archive, "
    r"(?:would delete|deleted) (?P<deleted>[\d,]+) from the table and (?P<from_archive>[\d,]+) from the archive"
    r"(?: -> (?P<uri>.+))?$"
)


def parse_purge(stdout: str) -> dict[str, PurgeLine]:
    """The per-policy lines of `purge` (or `purge --dry-run`) output, by policy."""
    found: dict[str, PurgeLine] = {}
    for line in stdout.splitlines():
        if m := _PURGE_LINE.match(line.strip()):
            assert m["policy"] not in found, f"policy {m['policy']} printed twice:\n{stdout}"
            found[m["policy"]] = PurgeLine(
                policy=m["policy"],
                table=m["table"],
                cutoff=dt.date.fromisoformat(m["cutoff"]) if m["cutoff"] else None,
                archived=int(m["archived"].replace(",", "")),
                deleted=int(m["deleted"].replace(",", "")),
                deleted_from_archive=int(m["from_archive"].replace(",", "")),
                archive_uri=m["uri"],
                dry_run=m["verb"] == "would move",
            )
    return found


# -- reading the warehouse and the archive ---------------------------------------------------------------
def read_only(db: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(db), read_only=True)
    con.execute("set TimeZone = 'UTC'")
    return con


def ids(db: Path, table: str, column: str = "id") -> set[str]:
    con = read_only(db)
    try:
        return {row[0] for row in con.execute(f"select {column} from raw.{table}").fetchall()}
    finally:
        con.close()


def purge_log(db: Path) -> list[dict[str, Any]]:
    con = read_only(db)
    try:
        cur = con.execute("select * from raw.purge_log order by applied_at, policy")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        con.close()


def archive_listing(folder: Path) -> list[Path]:
    """Every file in the archive folder, whatever its name."""
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def parquet_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.parquet")) if folder.exists() else []


def read_archive(folder: Path, sql: str = "select * from archive") -> list[tuple[Any, ...]]:
    """Query the archive's Parquet files with DuckDB directly (`archive` is every *.parquet under `folder`)."""
    files = parquet_files(folder)
    con = duckdb.connect()
    try:
        con.execute("set TimeZone = 'UTC'")
        if files:
            listing = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
            con.execute(f"create view archive as select * from read_parquet([{listing}])")
        else:
            con.execute("create table archive as select * from (select 1) where false")
        return con.execute(sql).fetchall()
    finally:
        con.close()


def archived_event_ids(folder: Path) -> list[str]:
    if not parquet_files(folder):
        return []
    return [row[0] for row in read_archive(folder, "select event_id from archive")]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def places_holding(db: Path, user_id: str, *, schemas: Sequence[str] | None = None) -> list[str]:
    """`schema.table.column` of every column holding the id: as the whole value, or as a JSON string inside text."""
    con = read_only(db)
    try:
        columns = con.execute(
            "select table_schema, table_name, column_name from information_schema.columns "
            "where table_catalog = current_database()"
        ).fetchall()
        found = []
        for schema, table, column in columns:
            if schemas is not None and schema not in schemas:
                continue
            col = '"' + column.replace('"', '""') + '"'
            text = f"cast({col} as varchar)"
            (hits,) = con.execute(
                f'select count(*) from "{schema}"."{table}" where {text} = ? or strpos({text}, ?) > 0',
                [user_id, json.dumps(user_id, ensure_ascii=False)],
            ).fetchone()
            if hits:
                found.append(f"{schema}.{table}.{column}")
        return found
    finally:
        con.close()


# -- processes and the network ----------------------------------------------------------------------------


def wait_until(predicate: Callable[[], bool], *, timeout: float, interval: float = 0.05, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")


def http_get(url: str, timeout: float = 10) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


# -- erasure: the forms a user id can be stored in, a decoded scan, the bytes on disk ------------------------------
def json_escaped(user_id: str) -> str:
    """The id as a JSON string literal spelled with \\u escapes (non-ASCII characters, and always the first one):
    `"jos\\u00e9"` for josé, `"\\u0061lice"` for alice. It decodes to the id but does not contain it as text."""
    literal = json.dumps(user_id, ensure_ascii=True)
    first = f"\\u{ord(user_id[0]):04x}"
    return literal if not user_id[0].isascii() else '"' + first + literal[2:]


def raw_line(record: dict[str, Any], placeholder: str, literal: str) -> str:
    """`record` as a JSONL line in which the JSON string `placeholder` is replaced by `literal` as written."""
    line = json.dumps(record, ensure_ascii=False)
    assert json.dumps(placeholder) in line, placeholder
    return line.replace(json.dumps(placeholder), literal)


def stored_forms(user_id: str) -> dict[str, bytes]:
    """The byte strings the id can be stored as: its UTF-8 text, and the body of its escaped JSON literal."""
    return {"utf-8": user_id.encode(), "json-escaped": json_escaped(user_id)[1:-1].encode()}


def files_holding(paths: Iterable[Path], forms: dict[str, bytes]) -> dict[str, list[str]]:
    """file -> names of the forms whose bytes occur in it (files that hold none are left out)."""
    found: dict[str, list[str]] = {}
    for path in paths:
        data = path.read_bytes()
        hits = [name for name, form in forms.items() if form in data]
        if hits:
            found[str(path)] = hits
    return found


def files_under(*folders_or_files: Path) -> list[Path]:
    """Every file (any name: temporary files, WALs, leftovers) in the given folders, and the given files."""
    found: list[Path] = []
    for item in folders_or_files:
        if item.is_dir():
            found += sorted(p for p in item.rglob("*") if p.is_file())
        elif item.exists():
            found.append(item)
    return found


_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\(.)")


def _unescaped(text: str) -> str:
    """`text` with JSON escapes decoded wherever they are (the oracle's view, not a JSON parser)."""
    simple = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
    return _ESCAPE.sub(lambda m: chr(int(m[1], 16)) if m[1] else simple.get(m[2], m[2]), text)


def places_mentioning(db: Path, user_id: str) -> list[str]:
    """`schema.table.column` of every column of every table and view that mentions the id anywhere: as the value,
    inside text (a substring, also after decoding JSON escapes) or in a blob's bytes. Stricter than any erasure
    rule (a longer id containing this one counts), so use it with ids that no other id contains."""
    needle = user_id.encode()
    con = read_only(db)
    try:
        columns = con.execute(
            "select table_schema, table_name, column_name, data_type from information_schema.columns "
            "where table_catalog = current_database()"
        ).fetchall()
        found = []
        for schema, table, column, data_type in columns:
            col = '"' + column.replace('"', '""') + '"'
            value = col if data_type == "BLOB" else f"cast({col} as varchar)"
            values = con.execute(f'select {value} from "{schema}"."{table}" where {col} is not null').fetchall()
            for (item,) in values:
                if isinstance(item, bytes) and needle in item:
                    break
                if isinstance(item, str) and (user_id in item or user_id in _unescaped(item)):
                    break
            else:
                continue
            found.append(f"{schema}.{table}.{column}")
        return found
    finally:
        con.close()


def catalog_of(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """What a warehouse holds besides rows: schemas, tables (with row counts), views (with their SQL), macros,
    sequences, indexes, constraints."""
    con = read_only(db)
    try:
        here = "database_name = current_database()"
        tables = con.execute(
            f"select schema_name, table_name from duckdb_tables() where {here} order by all"
        ).fetchall()
        return {
            "schemas": con.execute(f"select schema_name from duckdb_schemas() where {here} order by all").fetchall(),
            "tables": [
                (schema, table, con.execute(f'select count(*) from "{schema}"."{table}"').fetchone()[0])
                for schema, table in tables
            ],
            "columns": con.execute(
                f"select schema_name, table_name, column_name, data_type from duckdb_columns() where {here} "
                "order by all"
            ).fetchall(),
            "views": con.execute(
                f"select schema_name, view_name, sql from duckdb_views() where {here} and not internal order by all"
            ).fetchall(),
            "macros": con.execute(
                f"select schema_name, function_name, function_type from duckdb_functions() where {here} "
                "and not internal and function_type in ('macro', 'table_macro') order by all"
            ).fetchall(),
            "sequences": con.execute(
                f"select schema_name, sequence_name, last_value from duckdb_sequences() where {here} order by all"
            ).fetchall(),
            "indexes": con.execute(
                f"select schema_name, table_name, index_name from duckdb_indexes() where {here} order by all"
            ).fetchall(),
            "constraints": con.execute(
                f"select schema_name, table_name, constraint_type, constraint_text from duckdb_constraints() "
                f"where {here} order by all"
            ).fetchall(),
        }
    finally:
        con.close()
