"""The DuckDB warehouse file: where it is, how to open it, and the `raw` schema.

Every command resolves the file the same way: `--db PATH`, else the
`FEEDBACK_DB` environment variable, else `./feedback.duckdb` (dbt's
`profiles.yml` reads the same variable).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import duckdb

from warehouse.errors import UserError

DEFAULT_DB = "feedback.duckdb"
# DuckDB spills to disk beyond this, so a big load keeps a flat memory profile
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_LOCK_WAIT_SECONDS = 120

LINEAGE_COLUMNS = """
    _source_uri varchar not null,
    _loaded_at timestamp not null,
    _load_id varchar not null
"""

# One table per upstream entity: columns as the source has them (timestamps
# parsed to UTC `timestamp`), plus lineage. Natural keys are noted per table.
RAW_TABLES: dict[str, str] = {
    # natural key: event_id
    "analyzer_events": f"""
        event_id varchar not null,
        "timestamp" timestamp not null,
        session_id varchar,
        skill_id varchar not null,
        invocation_uuid varchar,
        outcome varchar not null,
        confidence double,
        correction_type varchar,
        user_message_snippet varchar,
        turns_to_feedback bigint,
        ai_tools_used varchar[],
        dimension_hint varchar,
        {LINEAGE_COLUMNS}
    """,
    # natural key: id
    "session_feedback": f"""
        id varchar not null,
        session_id_opaque varchar not null,
        user_id_or_null varchar,
        recorded_at timestamp not null,
        recorded_date date not null,
        label varchar not null,
        turn_count_at_end bigint,
        source varchar not null,
        schema_version integer not null,
        insertion_order bigint,
        {LINEAGE_COLUMNS}
    """,
    # natural key: rn
    "turn_reactions": f"""
        rn varchar not null,
        tenant varchar,
        project varchar,
        user_id varchar,
        conversation_id varchar not null,
        bundle_id varchar,
        turn_id varchar not null,
        track_id varchar,
        user_type varchar,
        kind varchar,
        tags varchar[],
        origin varchar not null,
        reaction varchar,
        confidence double,
        ts timestamp not null,
        text varchar,
        {LINEAGE_COLUMNS}
    """,
    # natural key: id
    "workspace_feedback": f"""
        id varchar not null,
        tenant_id varchar not null,
        source_type varchar not null,
        rating varchar not null,
        comment varchar,
        session_id varchar,
        entity_id varchar,
        agent_id varchar,
        context json,
        status varchar not null,
        reviewed_by_agent_id varchar,
        reviewed_by_user_id varchar,
        reviewed_at timestamp,
        review_notes varchar,
        created_by varchar,
        created_at timestamp not null,
        {LINEAGE_COLUMNS}
    """,
    # natural key: id
    "workspace_sessions": f"""
        id varchar not null,
        tenant_id varchar not null,
        agent_id varchar,
        session_type varchar,
        status varchar,
        created_at timestamp not null,
        completed_at timestamp,
        metadata json,
        {LINEAGE_COLUMNS}
    """,
    # natural key: id
    "workspace_eval_runs": f"""
        id varchar not null,
        tenant_id varchar not null,
        name varchar,
        set_name varchar,
        agent_id varchar,
        triggered_by varchar,
        started_at timestamp not null,
        completed_at timestamp,
        golden_session_count bigint,
        passed_count bigint,
        failed_count bigint,
        results json,
        created_by varchar,
        {LINEAGE_COLUMNS}
    """,
    # every row or line that failed validation, with why
    "quarantine": """
        load_id varchar not null,
        source varchar not null,
        target_table varchar not null,
        source_uri varchar not null,
        line_number bigint,
        record_key varchar,
        raw_text varchar,
        raw_bytes blob,
        reason varchar not null,
        quarantined_at timestamp not null
    """,
    # one row per file or table read
    "load_manifest": """
        load_id varchar not null,
        source varchar not null,
        target_table varchar not null,
        uri varchar not null,
        checksum varchar,
        size_bytes bigint,
        rows_read bigint not null,
        rows_loaded bigint not null,
        rows_quarantined bigint not null,
        rows_duplicate bigint not null,
        started_at timestamp not null,
        finished_at timestamp not null
    """,
    # one row per retention policy applied
    "purge_log": """
        purge_id varchar not null,
        policy varchar not null,
        table_name varchar not null,
        cutoff timestamp,
        rows_archived bigint not null,
        rows_deleted bigint not null,
        applied_at timestamp not null,
        is_dry_run boolean not null,
        archive_uri varchar,
        rows_deleted_from_archive bigint
    """,
    # one row per erasure request; the user id only as a salted-free SHA-256, never in clear
    "erasure_log": """
        erasure_id varchar not null,
        user_id_sha256 varchar not null,
        requested_at timestamp not null,
        rows_deleted bigint not null,
        rows_pseudonymised bigint not null,
        detail json,
        is_dry_run boolean not null
    """,
}


# DuckDB names a database after its file (raw.duckdb -> "raw"); a name that is also one of the warehouse's
# schemas (or one of DuckDB's own catalogs) makes every `raw.<table>` ambiguous.
RESERVED_DB_NAMES = frozenset({"raw", "main", "staging", "intermediate", "marts", "seeds", "memory", "system", "temp"})


def resolve_db_path(db: str | os.PathLike[str] | None) -> Path:
    """`--db`, else `FEEDBACK_DB`, else `./feedback.duckdb`; refuses a file named like a schema."""
    path = Path(db or os.environ.get("FEEDBACK_DB") or DEFAULT_DB)
    name = path.name.split(".")[0].lower()
    if name in RESERVED_DB_NAMES:
        raise UserError(
            f"warehouse file name {path.name!r} clashes with the schema or catalog {name!r}: "
            "DuckDB names the database after the file; choose another name, e.g. feedback.duckdb"
        )
    return path


def connect(db: str | os.PathLike[str] | None, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse (creating it and the raw schema unless read-only)."""
    path = resolve_db_path(db)
    if read_only and not path.exists():
        raise UserError(
            f"warehouse {path} does not exist: run `feedback-analytics ingest ...` "
            "(or `make demo`) first, or point --db / FEEDBACK_DB at it"
        )
    if not read_only and path.parent and not path.parent.exists():
        raise UserError(f"folder {path.parent} for the warehouse does not exist: create it first")
    refuse_what_is_no_warehouse(path)
    con = _open_waiting_for_lock(path, read_only)
    con.execute("set TimeZone = 'UTC'")
    con.execute(f"set memory_limit = '{os.environ.get('FEEDBACK_MEMORY_LIMIT', DEFAULT_MEMORY_LIMIT)}'")
    if not read_only:
        ensure_raw_schema(con)
        return con
    found = {
        row[0]
        for row in con.execute("select table_name from information_schema.tables where table_schema = 'raw'").fetchall()
    }
    missing = [table for table in RAW_TABLES if table not in found]
    if missing:  # read-only commands (dry runs, listings) cannot create them: say so in one line
        con.close()
        raise UserError(
            f"warehouse {path} has no raw.{missing[0]}: load data into it with `feedback-analytics ingest ...` "
            "first (a file from an older version gets the new tables from any ingest or purge)"
        )
    return con


def _column_definitions(columns: str) -> dict[str, str]:
    """Column name -> type of a DDL column list (one column per line)."""
    definitions = {}
    for line in columns.strip().splitlines():
        line = line.strip().rstrip(",")
        if line:
            name, _, rest = line.partition(" ")
            definitions[name.strip('"')] = rest.replace("not null", "").strip()
    return definitions


# A DuckDB database file carries these bytes at offset 8 (DuckDB's storage header).
DUCKDB_MAGIC = b"DUCK"


def refuse_what_is_no_warehouse(path: Path) -> None:
    """A folder, or an existing file that is not a DuckDB database (a CSV, an export given to --db by mistake)."""
    if path.is_dir():
        raise UserError(f"--db {path} is a folder: give the warehouse file, e.g. {path / DEFAULT_DB}")
    if path.is_file() and path.stat().st_size > 0:
        with path.open("rb") as handle:
            header = handle.read(12)
        if header[8:12] != DUCKDB_MAGIC:
            raise UserError(
                f"--db {path} is not a DuckDB warehouse (no DuckDB header): give the warehouse file, "
                "or a new file name to create one"
            )


def _open_waiting_for_lock(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the file, waiting while another process holds it (the dashboard's brief reads, another writer).

    DuckDB lets one process write a file and no other process read it
    meanwhile; readers hold it only for a query, so a writer waits them out.
    FEEDBACK_LOCK_WAIT_SECONDS (default 120) bounds the wait.
    """
    wait_seconds = float(os.environ.get("FEEDBACK_LOCK_WAIT_SECONDS", DEFAULT_LOCK_WAIT_SECONDS))
    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    said = False
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            first = str(exc).splitlines()[0]
            if "lock" not in first.lower():
                raise UserError(f"cannot open warehouse {path}: {first}") from None
            if not said:  # once: what it waits for and for how long at most
                holder = re.search(r"\(PID (\d+)\)", first)
                print(
                    f"waiting for warehouse {path}: another process"
                    + (f" (pid {holder[1]})" if holder else "")
                    + f" is using it; waiting up to {wait_seconds:g} s (FEEDBACK_LOCK_WAIT_SECONDS)",
                    file=sys.stderr,
                    flush=True,
                )
                said = True
            if time.monotonic() >= deadline:
                raise UserError(
                    f"cannot open warehouse {path}: {first} (another process is using it; wait for it to finish)"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def wait_until_writable(db: str | os.PathLike[str] | None) -> None:
    """Return once this process could open the warehouse for writing (e.g. before handing it to dbt)."""
    path = resolve_db_path(db)
    if path.exists():
        _open_waiting_for_lock(path, read_only=False).close()


def ensure_raw_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the raw schema; a warehouse from an earlier version gets the columns added since."""
    con.execute("create schema if not exists raw")
    for table, columns in RAW_TABLES.items():
        con.execute(f"create table if not exists raw.{table} ({columns})")
        existing = {
            row[0]
            for row in con.execute(
                "select column_name from information_schema.columns where table_schema = 'raw' and table_name = ?",
                [table],
            ).fetchall()
        }
        for name, definition in _column_definitions(columns).items():
            if name not in existing:
                con.execute(f'alter table raw.{table} add column "{name}" {definition}')
