"""`feedback-analytics forget --user-id ID`: erase one user from the warehouse and its archive, down to the bytes.

What can hold a user id, and what happens to it:

- `raw.session_feedback.user_id_or_null`, `raw.turn_reactions.user_id`,
  `raw.workspace_feedback.created_by`: the user's own rows, deleted.
- `raw.workspace_feedback.reviewed_by_user_id`, `raw.workspace_eval_runs.created_by`:
  rows someone else owns; they stay and lose the id (set to NULL).
- The JSON columns of the raw data tables (workspace feedback `context`,
  sessions `metadata` such as a golden session's `golden.promoted_by`, eval
  runs `results`): anywhere in the document, a string holding the id (as a
  whole word, below) or a number equal to it becomes null, and a member whose
  key holds it is removed; the row stays (golden sessions are immutable
  references).
- Free text (analyzer `user_message_snippet`, reaction `text`, workspace
  feedback `comment` and `review_notes`): a text in which the id stands as a
  whole word (no letter, digit, `_`, `-` or `@` touching it, so a longer id
  that starts with this one does not count) is set to NULL; the row stays, as
  with `ingest --no-snippets`.
- `raw.quarantine`: a line that carries the id is deleted. A line that parses
  as JSON carries it when any key or string anywhere in it, decoded, holds the
  id as a whole word (`"jos\\u00e9"` is josé) or any number equals it
  (`"user_id": 12345` for "12345"); a line that does not parse carries it when
  one of its string literals, decoded, or its text holds the id as a whole
  word; a line kept as bytes (not UTF-8) likewise.
- The Parquet archive of analyzer events (every file a purge logged in
  `raw.purge_log`, every archive file in the archive folders): the snippet rule
  above; a file that changes is rewritten (temporary file, fsync, rename,
  fsync of the folder), and leftovers of a killed purge (`*.parquet.tmp`) go.

Out of scope: the upstream sources (re-ingesting a file that still holds the
user lands the user again), files made from the warehouse elsewhere
(exports, reports, backups), and blocks the file system or disk itself keeps
after a file is replaced.

The steps (the command line calls them in this order):

1. `erase`: everything above in one transaction, with a `raw.erasure_log` row
   naming the request by the SHA-256 of the id, never the id itself.
2. (the command line rebuilds the dbt models, so they lose the id too)
3. `rewrite_warehouse`: DuckDB keeps deleted rows' bytes in freed blocks of the
   file until they are reused, so the whole database is copied into a new file
   beside it (every schema, table, view, macro, sequence, index), checked
   against the original, fsynced and renamed over it, and the folder fsynced;
   no WAL is left. The copy holds the original's write lock throughout.
4. `verify` (operations/erasure_verification.py): every text, JSON, list and
   blob column of every table, and every archive file, decoded again in Python
   (the json module, `re`, pyarrow) rather than with the SQL that erased: the
   count of rows still carrying the id.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from operations.retention import ARCHIVE_PREFIX, archive_files, logged_archives
from warehouse.connection import connect
from warehouse.contracts import ARCHIVED_BY_PURGE, CONTRACTS
from warehouse.durable import fsync
from warehouse.errors import UserError
from warehouse.raw_tables import DATA_TABLES
from warehouse.sql import quote, sql_literal

# table -> (column, action): "delete" removes the row, "null" only removes the id
USER_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "session_feedback": [("user_id_or_null", "delete")],
    "turn_reactions": [("user_id", "delete")],
    "reaction_index": [("user_id", "delete")],
    "workspace_feedback": [("created_by", "delete"), ("reviewed_by_user_id", "null")],
    "workspace_eval_runs": [("created_by", "null")],
}
# free text that may name the user (the contracts' free_text fields): set to NULL where it does
FREE_TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    contract.table: tuple(field.name for field in contract.fields if field.free_text)
    for contract in CONTRACTS
    if any(field.free_text for field in contract.fields)
}
ARCHIVED_TABLE = ARCHIVED_BY_PURGE.table  # the table whose rows `purge` moves to Parquet
REWRITE_SUFFIX = ".forget-rewrite"  # the new copy of the warehouse, beside it, until it is renamed over it
# characters that make the id part of a longer id when they touch it (RE2 and Python spellings)
_ID_CHARACTERS_RE2 = r"\pL\pN_@-"
ID_CHARACTERS_PY = r"\w@-"
NUMBER_PATTERN = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


@dataclass
class Rewrite:
    """The physical rewrite of the warehouse file."""

    path: Path
    seconds: float
    bytes_before: int
    bytes_after: int


@dataclass
class ErasureResult:
    user_id_sha256: str
    deleted: dict[str, int] = field(default_factory=dict)  # raw.table -> rows deleted
    pseudonymised: dict[str, int] = field(default_factory=dict)  # raw.table.column -> rows kept without the id
    archives: dict[str, int] = field(default_factory=dict)  # archive file -> rows kept without the id
    archive_files: list[Path] = field(default_factory=list)  # every archive file looked at
    removed_leftovers: list[Path] = field(default_factory=list)

    @property
    def rows_deleted(self) -> int:
        return sum(self.deleted.values())

    @property
    def rows_pseudonymised(self) -> int:
        return sum(self.pseudonymised.values()) + sum(self.archives.values())

    @property
    def matched_nothing(self) -> bool:
        return self.rows_deleted == 0 and self.rows_pseudonymised == 0


# -- the erasure (SQL) ---------------------------------------------------------------------------------------
def _re2_literal(text: str) -> str:
    """`text` as an RE2 pattern that matches it literally (every character but ASCII letters and digits escaped)."""
    return "".join(ch if ch.isascii() and ch.isalnum() else f"\\x{{{ord(ch):x}}}" for ch in text)


def _word_pattern(text: str) -> str:
    """RE2: `text` as a whole word, not touching a character that would make it part of a longer id."""
    return f"(^|[^{_ID_CHARACTERS_RE2}]){_re2_literal(text)}([^{_ID_CHARACTERS_RE2}]|$)"


# A json_tree node that is the id: a key or string holding it as a whole word, or a number equal to it.
_NODE_HOLDS_ID = """(
    (node.type = 'VARCHAR' and regexp_matches(node.value ->> '$', $word))
    or (node.type not in ('VARCHAR', 'OBJECT', 'ARRAY', 'BOOLEAN', 'NULL')
        and (node.atom::varchar = $id or try_cast(node.atom::varchar as double) = try_cast($id as double)))
    or (node.key is not null and node.fullkey <> node.path || '[' || node.key || ']'
        and regexp_matches(node.key, $word))
)"""
# The string literals of a text that is not JSON (a closing quote may be missing: a cut line), decoded.
_LITERALS = r"""list_transform(
    regexp_extract_all({text}, '"((?:[^"\\]|\\.)*)("|$)', 1),
    lambda body: try(json_extract_string('"' || body || '"', '$'))
)"""


def _quarantine_hits_sql() -> str:
    """Row ids of the quarantined lines that carry the id (parameters $id, $word, $bytes_word)."""
    literals = _LITERALS.format(text="raw_text")
    return f"""
        with documents as (
            select rowid as row_id, raw_text from raw.quarantine where json_valid(raw_text)
        ),

        in_json as (
            select distinct documents.row_id
            from documents, json_tree(documents.raw_text) as node
            where {_NODE_HOLDS_ID}
        ),

        in_text as (
            select rowid as row_id from raw.quarantine
            where (
                raw_text is not null and not json_valid(raw_text)
                and (
                    regexp_matches(raw_text, $word)
                    or len(list_filter({literals}, lambda literal: regexp_matches(literal, $word))) > 0
                )
            )
            or (raw_bytes is not null and regexp_matches(cast(raw_bytes as varchar), $bytes_word))
        )

        select row_id from in_json
        union
        select row_id from in_text
    """


def _json_columns(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    rows = con.execute(
        "select table_name, column_name from duckdb_columns() "
        "where database_name = current_database() and schema_name = 'raw' and data_type = 'JSON' order by all"
    ).fetchall()
    return [(table, column) for table, column in rows if table in DATA_TABLES]


def _json_nodes(con: duckdb.DuckDBPyConnection, table: str, column: str, params: dict[str, str]) -> list[Any]:
    """(row id, path, is a key) of every JSON node holding the id in raw.table.column."""
    return con.execute(
        f"""
        select base.rowid, node.fullkey, node.key is not null and regexp_matches(node.key, $word)
            and node.fullkey <> node.path || '[' || node.key || ']'
        from raw.{table} as base, json_tree(base.{quote(column)}) as node
        where base.{quote(column)} is not null and {_NODE_HOLDS_ID}
        """,
        {name: params[name] for name in ("id", "word")},
    ).fetchall()


def _scrub_json(con: duckdb.DuckDBPyConnection, table: str, column: str, params: dict[str, str]) -> int:
    """Null every JSON value holding the id and remove every member keyed by it; the rows touched."""
    touched: set[int] = set()
    for _attempt in range(5):  # a removed member can shift what a second pass finds; normally one pass
        nodes = _json_nodes(con, table, column, params)
        if not nodes:
            return len(touched)
        paths: dict[int, tuple[list[str], list[str]]] = {}
        for row_id, path, is_key in nodes:
            values, keys = paths.setdefault(row_id, ([], []))
            (keys if is_key else values).append(path)
        for row_id, (values, keys) in paths.items():
            expression = quote(column)
            for path in values:
                expression = f"json_replace({expression}, {sql_literal(path)}, 'null'::json)"
            for path in sorted(keys, key=len, reverse=True):  # the deepest first
                expression = f"json_remove({expression}, {sql_literal(path)})"
            try:
                con.execute(f"update raw.{table} set {quote(column)} = {expression} where rowid = ?", [row_id])
            except duckdb.Error:  # a path DuckDB cannot address: the document goes rather than the id stays
                con.execute(f"update raw.{table} set {quote(column)} = null where rowid = ?", [row_id])
            touched.add(row_id)
    raise UserError(f"raw.{table}.{column}: the id is still in a JSON document after 5 passes; nothing was erased")


def archive_paths(con: duckdb.DuckDBPyConnection, archive_dir: Path) -> list[Path]:
    """Every analyzer archive file: those a committed purge logged (wherever --archive-dir put them) and every
    archive file in their folders and in `archive_dir` (the default one)."""
    logged = [Path(uri) for uri in logged_archives(con)]
    folders = {archive_dir.resolve(), *(path.parent for path in logged)}
    files = {path for path in logged if path.exists()}
    for folder in folders:
        files.update(path.resolve() for path in archive_files(folder))
    return sorted(files)


def _leftovers(files: Iterable[Path], archive_dir: Path) -> list[Path]:
    """Temporary archive files a killed purge or forget left (never logged, never read)."""
    folders = {archive_dir.resolve(), *(path.parent for path in files)}
    return sorted(p for folder in folders if folder.is_dir() for p in folder.glob(f"{ARCHIVE_PREFIX}*.parquet.tmp"))


def _erase_from_archive(con: duckdb.DuckDBPyConnection, path: Path, word: str, *, dry_run: bool) -> int:
    """Null the free text naming the user in one archive file (rewritten, fsynced, renamed); rows changed."""
    source = sql_literal(str(path))
    present = {row[0] for row in con.execute(f"describe select * from read_parquet({source})").fetchall()}
    columns = [c for c in FREE_TEXT_COLUMNS[ARCHIVED_TABLE] if c in present]
    if not columns:
        return 0
    naming = " or ".join(f"regexp_matches({quote(c)}, {sql_literal(word)})" for c in columns)
    (hits,) = con.execute(f"select count(*) from read_parquet({source}) where {naming}").fetchall()[0]
    if not hits or dry_run:
        return hits
    replaced = ", ".join(
        f"case when regexp_matches({quote(c)}, {sql_literal(word)}) then null else {quote(c)} end as {quote(c)}"
        for c in columns
    )
    partial = path.with_name(path.name + ".tmp")
    kept = f"select * replace ({replaced}) from read_parquet({source})"
    con.execute(f"copy ({kept}) to {sql_literal(str(partial))} (format parquet, compression zstd)")
    shutil.copymode(path, partial)
    fsync(partial)
    partial.replace(path)
    fsync(path.parent)
    return hits


def _count_or_apply(con: duckdb.DuckDBPyConnection, sql_count: str, sql_apply: str, params: Any, dry_run: bool) -> int:
    (count,) = con.execute(sql_count if dry_run else sql_apply, params).fetchall()[0]
    return count


def erase(con: duckdb.DuckDBPyConnection, user_id: str, *, dry_run: bool, archive_dir: Path) -> ErasureResult:
    """Step 1: erase (or, dry, count) the user everywhere, in one transaction, and log the request by hash."""
    if not user_id.strip():
        raise UserError("the user id to erase is empty: an empty id would match every text")
    result = ErasureResult(hashlib.sha256(user_id.encode()).hexdigest())
    (rendered,) = con.execute("select cast(encode(?) as varchar)", [user_id]).fetchall()[0]
    params = {"id": user_id, "word": _word_pattern(user_id), "bytes_word": _word_pattern(rendered)}
    con.execute("begin transaction")
    try:
        for table, columns in USER_COLUMNS.items():
            for column, action in columns:
                where = f"{quote(column)} = $id"
                count = _count_or_apply(
                    con,
                    f"select count(*) from raw.{table} where {where}",
                    f"delete from raw.{table} where {where}"
                    if action == "delete"
                    else f"update raw.{table} set {quote(column)} = null where {where}",
                    {"id": user_id},
                    dry_run,
                )
                if action == "delete":
                    result.deleted[f"raw.{table}"] = result.deleted.get(f"raw.{table}", 0) + count
                else:
                    result.pseudonymised[f"raw.{table}.{column}"] = count
        for table, column in _json_columns(con):
            place = f"raw.{table}.{column}"
            if dry_run:
                result.pseudonymised[place] = len({node[0] for node in _json_nodes(con, table, column, params)})
            else:
                result.pseudonymised[place] = _scrub_json(con, table, column, params)
        for table, columns in FREE_TEXT_COLUMNS.items():
            for column in columns:
                where = f"regexp_matches({quote(column)}, $word)"
                result.pseudonymised[f"raw.{table}.{column}"] = _count_or_apply(
                    con,
                    f"select count(*) from raw.{table} where {where}",
                    f"update raw.{table} set {quote(column)} = null where {where}",
                    {"word": params["word"]},
                    dry_run,
                )
        hits = _quarantine_hits_sql()
        result.deleted["raw.quarantine"] = _count_or_apply(
            con,
            f"select count(*) from ({hits})",
            f"delete from raw.quarantine where rowid in ({hits})",
            params,
            dry_run,
        )
        result.archive_files = archive_paths(con, archive_dir)
        for path in result.archive_files:
            result.archives[str(path)] = _erase_from_archive(con, path, params["word"], dry_run=dry_run)
        if not dry_run:
            for path in _leftovers(result.archive_files, archive_dir):
                path.unlink()
                result.removed_leftovers.append(path)
        if dry_run:  # a dry run only counts, on a read-only connection: it writes nothing, not even the log
            con.execute("commit")
            return result
        con.execute(
            "insert into raw.erasure_log values (?, ?, ?, ?, ?, ?, ?)",
            [
                uuid.uuid4().hex,
                result.user_id_sha256,
                dt.datetime.now(dt.UTC).replace(tzinfo=None),
                result.rows_deleted,
                result.rows_pseudonymised,
                json.dumps(
                    {
                        "deleted": result.deleted,
                        "pseudonymised": result.pseudonymised,
                        "archive_rows": sum(result.archives.values()),
                    }
                ),
                dry_run,
            ],
        )
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return result


# -- the physical rewrite --------------------------------------------------------------------------------------
def _inventory(con: duckdb.DuckDBPyConnection, database: str) -> dict[str, list[Any]]:
    """What a database holds: its objects by name, and every table's row count."""
    here = f"database_name = {sql_literal(database)}"
    tables = con.execute(f"select schema_name, table_name from duckdb_tables() where {here} order by all").fetchall()
    return {
        "schemas": con.execute(f"select schema_name from duckdb_schemas() where {here} order by all").fetchall(),
        "tables": [
            (
                schema,
                table,
                con.execute(f"select count(*) from {quote(database)}.{quote(schema)}.{quote(table)}").fetchone(),
            )
            for schema, table in tables
        ],
        "columns": con.execute(
            f"select schema_name, table_name, column_name, data_type from duckdb_columns() where {here} order by all"
        ).fetchall(),
        "views": con.execute(
            f"select schema_name, view_name from duckdb_views() where {here} and not internal order by all"
        ).fetchall(),
        "sequences": con.execute(
            f"select schema_name, sequence_name from duckdb_sequences() where {here} order by all"
        ).fetchall(),
        "macros": con.execute(
            f"select schema_name, function_name from duckdb_functions() where {here} and not internal "
            "and function_type in ('macro', 'table_macro') order by all"
        ).fetchall(),
        "indexes": con.execute(
            f"select schema_name, index_name from duckdb_indexes() where {here} order by all"
        ).fetchall(),
    }


def _remove(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def rewrite_warehouse(db: Path) -> Rewrite:
    """Step 3: copy the whole database into a new file and rename it over the original, under its write lock.

    The original stays open (locked) until the new file has replaced it, so no
    other writer slips in between; a reader that opens the path afterwards gets
    the new file. A check failed or an error leaves the original as it was.
    """
    started = time.perf_counter()
    target = db.resolve()
    partial = target.with_name(target.name + REWRITE_SUFFIX)
    partial_wal = partial.with_name(partial.name + ".wal")
    con = connect(db)  # waits out a reader or another writer, then holds the file
    try:
        _remove(partial, partial_wal)  # a killed rewrite's copy
        con.execute("checkpoint")  # the WAL into the file: closing the original later writes nothing
        bytes_before = target.stat().st_size
        (database,) = con.execute("select current_database()").fetchone()
        alias = f"forget_rewrite_{uuid.uuid4().hex[:12]}"
        con.execute(f"attach {sql_literal(str(partial))} as {quote(alias)}")
        try:
            con.execute(f"copy from database {quote(database)} to {quote(alias)}")
            original, copy = _inventory(con, database), _inventory(con, alias)
        finally:
            con.execute(f"detach {quote(alias)}")  # checkpoints the copy: no WAL left beside it
        if copy != original:
            differing = [part for part in original if original[part] != copy.get(part)]
            raise UserError(
                f"the rewritten copy of {db} differs from it ({', '.join(differing)}): the warehouse was left as it "
                "was (the rows are erased, but their bytes may remain); report this, then run forget again"
            )
        if partial_wal.exists():
            raise UserError(f"the rewritten copy of {db} left a WAL; the warehouse was left as it was")
        shutil.copymode(target, partial)
        fsync(partial)
        os.replace(partial, target)
        fsync(target.parent)
    except BaseException:
        _remove(partial, partial_wal)
        raise
    finally:
        con.close()
    return Rewrite(db, time.perf_counter() - started, bytes_before, target.stat().st_size)


def describe_result(result: ErasureResult, *, dry_run: bool) -> Iterator[str]:
    """The lines `forget` prints about step 1."""
    verb = "would delete" if dry_run else "deleted"
    for table, count in result.deleted.items():
        yield f"{table:<24} {verb} {count:,}"
    remove = "would remove" if dry_run else "removed"
    nouns = {"reviewed_by_user_id": "reviewed row(s)", "created_by": "row(s) it created"}
    for place, count in result.pseudonymised.items():
        table, column = place.rsplit(".", 1)
        noun = nouns.get(column, "row(s)")
        yield f"{table:<24} {remove} the id from {count:,} {noun} ({column})"
    for path, count in result.archives.items():
        if count:
            columns = ", ".join(FREE_TEXT_COLUMNS[ARCHIVED_TABLE])
            yield f"archive {path}: {remove} the id from {count:,} row(s) ({columns})"
    yield f"{len(result.archive_files)} archive file(s) checked"
    for path in result.removed_leftovers:
        yield f"removed the leftover temporary archive file {path}"
