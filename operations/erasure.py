"""`feedback-analytics forget --user-id ID | --user-ids-file FILE`: erase users from the warehouse and its archive.

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

1. `erase_many` (`erase` for one id): everything above for every id in one
   transaction, each id's request logged in `raw.erasure_log` by its SHA-256,
   never the id itself. Each big table is read once for the whole batch.
2. (the command line rebuilds the dbt models, so they lose the ids too)
3. `rewrite_warehouse` (operations/erasure_rewrite.py): DuckDB keeps deleted
   rows' bytes in their row groups and in freed blocks, so the tables that
   held an id are written again and every free block of the file is zeroed;
   the whole file is copied when that cannot be done safely.
4. `verify` (operations/erasure_verification.py): every text, JSON, list and
   blob column of every table, and every archive file, decoded again in Python
   (the json module, `re`, pyarrow) rather than with the SQL that erased: the
   count of rows still carrying one of the ids.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from operations.retention import ARCHIVE_PREFIX, archive_files, logged_archives
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
# characters that make the id part of a longer id when they touch it (RE2 and Python spellings)
_ID_CHARACTERS_RE2 = r"\pL\pN_@-"
ID_CHARACTERS_PY = r"\w@-"
NUMBER_PATTERN = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


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
# Every query takes all the ids at once: the id columns are joined with the list of ids, the free text and JSON
# strings are matched with one RE2 alternation of them, so a big table is read once however many ids there are.
# Only the rows that matched are then attributed to the id(s) they hold (for the per-id counts of the log).
_IDS = "(select unnest($ids) as user_id, unnest($words) as word, unnest($bytes_words) as bytes_word)"


def _re2_literal(text: str) -> str:
    """`text` as an RE2 pattern that matches it literally (every character but ASCII letters and digits escaped)."""
    return "".join(ch if ch.isascii() and ch.isalnum() else f"\\x{{{ord(ch):x}}}" for ch in text)


def _word_pattern(*texts: str) -> str:
    """RE2: any of `texts` as a whole word, not touching a character that would make it part of a longer id."""
    alternation = "|".join(_re2_literal(text) for text in texts)
    return f"(^|[^{_ID_CHARACTERS_RE2}])({alternation})([^{_ID_CHARACTERS_RE2}]|$)"


def _holds_id(word: str, number: str) -> str:
    """A json_tree node (its columns under `node.`) that is an id: a key or string holding `word`, or a number
    equal to one (`number`: the condition on `node.atom`)."""
    return f"""(
    (node.type = 'VARCHAR' and regexp_matches(node.value ->> '$', {word}))
    or (node.type not in ('VARCHAR', 'OBJECT', 'ARRAY', 'BOOLEAN', 'NULL') and {number})
    or (node.key is not null and node.fullkey <> node.path || '[' || node.key || ']'
        and regexp_matches(node.key, {word}))
)"""


_ANY_NUMBER = f"""(node.atom::varchar in (select user_id from {_IDS})
        or try_cast(node.atom::varchar as double) in (select try_cast(user_id as double) from {_IDS}))"""
_NODE_HOLDS_AN_ID = _holds_id("$any_word", _ANY_NUMBER)
_NODE_HOLDS_THIS_ID = _holds_id(
    "ids.word",
    "(node.atom::varchar = ids.user_id or try_cast(node.atom::varchar as double) = try_cast(ids.user_id as double))",
)
# The string literals of a text that is not JSON (a closing quote may be missing: a cut line), decoded.
_LITERALS = r"""list_transform(
    regexp_extract_all({text}, '"((?:[^"\\]|\\.)*)("|$)', 1),
    lambda body: try(json_extract_string('"' || body || '"', '$'))
)"""


def _quarantine_hits_sql(lines: str) -> str:
    """(row id, user id) of the quarantined `lines` (row_id, raw_text, raw_bytes) that carry one of the ids: the
    lines are found with the alternation, then paired with the ids they hold."""
    literals = _LITERALS.format(text="raw_text")
    holds_word = f"""(
        (raw_text is not null and not json_valid(raw_text)
            and (regexp_matches(raw_text, {{word}})
                or len(list_filter({literals}, lambda literal: regexp_matches(literal, {{word}}))) > 0))
        or (raw_bytes is not null and regexp_matches(cast(raw_bytes as varchar), {{bytes_word}}))
    )"""
    return f"""
        with lines as materialized (select * from {lines}),

        documents as materialized (select row_id, raw_text from lines where json_valid(raw_text)),

        nodes as materialized (
            select documents.row_id, node.*
            from documents, json_tree(documents.raw_text) as node
            where {_NODE_HOLDS_AN_ID}
        ),

        in_text as materialized (
            select * from lines where {holds_word.format(word="$any_word", bytes_word="$any_bytes_word")}
        )

        select distinct node.row_id, ids.user_id from nodes as node, {_IDS} as ids where {_NODE_HOLDS_THIS_ID}
        union
        select in_text.row_id, ids.user_id from in_text, {_IDS} as ids
        where {holds_word.format(word="ids.word", bytes_word="ids.bytes_word")}
    """


def _json_columns(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    rows = con.execute(
        "select table_name, column_name from duckdb_columns() "
        "where database_name = current_database() and schema_name = 'raw' and data_type = 'JSON' order by all"
    ).fetchall()
    return [(table, column) for table, column in rows if table in DATA_TABLES]


def _run(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[Any]:
    """`sql` with the parameters it names."""
    named = {name: value for name, value in params.items() if re.search(rf"\${name}\b", sql)}
    return con.execute(sql, named).fetchall()


def _json_nodes(con: duckdb.DuckDBPyConnection, table: str, column: str, params: dict[str, Any]) -> list[Any]:
    """(row id, path, is a key, user id) of every JSON node holding one of the ids in raw.table.column."""
    return _run(
        con,
        f"""
        with nodes as materialized (
            select base.rowid as row_id, node.*
            from raw.{table} as base, json_tree(base.{quote(column)}) as node
            where base.{quote(column)} is not null and {_NODE_HOLDS_AN_ID}
        )

        select node.row_id, node.fullkey, node.key is not null and regexp_matches(node.key, $any_word)
            and node.fullkey <> node.path || '[' || node.key || ']', ids.user_id
        from nodes as node, {_IDS} as ids
        where {_NODE_HOLDS_THIS_ID}
        """,
        params,
    )


def _scrub_json(con: duckdb.DuckDBPyConnection, table: str, column: str, params: dict[str, Any]) -> None:
    """Null every JSON value holding an id and remove every member keyed by one."""
    for _attempt in range(5):  # a removed member can shift what a second pass finds; normally one pass
        nodes = _json_nodes(con, table, column, params)
        if not nodes:
            return
        paths: dict[int, tuple[set[str], set[str]]] = {}
        for row_id, path, is_key, _user in nodes:
            values, keys = paths.setdefault(row_id, (set(), set()))
            (keys if is_key else values).add(path)
        for row_id, (values, keys) in paths.items():
            expression = quote(column)
            for path in sorted(values):
                expression = f"json_replace({expression}, {sql_literal(path)}, 'null'::json)"
            for path in sorted(keys, key=len, reverse=True):  # the deepest first
                expression = f"json_remove({expression}, {sql_literal(path)})"
            try:
                con.execute(f"update raw.{table} set {quote(column)} = {expression} where rowid = ?", [row_id])
            except duckdb.Error:  # a path DuckDB cannot address: the document goes rather than the id stays
                con.execute(f"update raw.{table} set {quote(column)} = null where rowid = ?", [row_id])
    raise UserError(f"raw.{table}.{column}: an id is still in a JSON document after 5 passes; nothing was erased")


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


def _erase_from_archive(
    con: duckdb.DuckDBPyConnection, path: Path, params: dict[str, Any], *, dry_run: bool
) -> dict[str, int]:
    """Null the free text naming any of the users in one archive file (rewritten, fsynced, renamed, only when it
    holds one); rows changed per user id."""
    source = sql_literal(str(path))
    present = {row[0] for row in con.execute(f"describe select * from read_parquet({source})").fetchall()}
    columns = [c for c in FREE_TEXT_COLUMNS[ARCHIVED_TABLE] if c in present]
    if not columns:
        return {}
    naming = " or ".join(f"regexp_matches({quote(c)}, $any_word)" for c in columns)
    per_id = " or ".join(f"regexp_matches(hits.{quote(c)}, ids.word)" for c in columns)
    hits = f"select {', '.join(map(quote, columns))} from read_parquet({source}) where {naming}"
    per_user = f"select ids.user_id, count(*) from ({hits}) as hits, {_IDS} as ids where {per_id} group by 1"
    counts = dict(_run(con, per_user, params))
    if not counts or dry_run:
        return counts
    replaced = ", ".join(
        f"case when regexp_matches({quote(c)}, {sql_literal(params['any_word'])}) then null else {quote(c)} end "
        f"as {quote(c)}"
        for c in columns
    )
    partial = path.with_name(path.name + ".tmp")
    kept = f"select * replace ({replaced}) from read_parquet({source})"
    con.execute(f"copy ({kept}) to {sql_literal(str(partial))} (format parquet, compression zstd)")
    shutil.copymode(path, partial)
    fsync(partial)
    partial.replace(path)
    fsync(path.parent)
    return counts


def _ids_params(con: duckdb.DuckDBPyConnection, user_ids: list[str]) -> dict[str, Any]:
    rendered = [con.execute("select cast(encode(?) as varchar)", [user_id]).fetchall()[0][0] for user_id in user_ids]
    return {
        "ids": user_ids,
        "words": [_word_pattern(user_id) for user_id in user_ids],
        "bytes_words": [_word_pattern(text) for text in rendered],
        "any_word": _word_pattern(*user_ids),
        "any_bytes_word": _word_pattern(*rendered),
    }


def _tally(results: dict[str, ErasureResult], counts: Iterable[tuple[str, int]], place: str, kind: str) -> None:
    """Add (user id, rows) to each user's `kind` ('deleted' or 'pseudonymised') count of `place`."""
    for user_id, count in counts:
        tally = getattr(results[user_id], kind)
        tally[place] = tally.get(place, 0) + count


def erase(con: duckdb.DuckDBPyConnection, user_id: str, *, dry_run: bool, archive_dir: Path) -> ErasureResult:
    """Step 1 for one id (erase_many)."""
    return erase_many(con, [user_id], dry_run=dry_run, archive_dir=archive_dir)[0]


def erase_many(
    con: duckdb.DuckDBPyConnection, user_ids: list[str], *, dry_run: bool, archive_dir: Path
) -> list[ErasureResult]:
    """Step 1: erase (or, dry, count) the users everywhere, in one transaction, and log each request by hash;
    one result per id, in the order given (ids distinct). Every archive file and leftover is on the first."""
    if not user_ids or any(not user_id.strip() for user_id in user_ids):
        raise UserError("the user id to erase is empty: an empty id would match every text")
    if len(set(user_ids)) != len(user_ids):
        raise ValueError("the user ids to erase must be distinct")
    results = {user_id: ErasureResult(hashlib.sha256(user_id.encode()).hexdigest()) for user_id in user_ids}
    for result in results.values():  # every place appears in every result, with 0 where the id is not
        for table, columns in USER_COLUMNS.items():
            for column, action in columns:
                if action == "delete":
                    result.deleted[f"raw.{table}"] = 0
                else:
                    result.pseudonymised[f"raw.{table}.{column}"] = 0
        result.pseudonymised.update({f"raw.{t}.{c}": 0 for t, c in _json_columns(con)})
        result.pseudonymised.update({f"raw.{t}.{c}": 0 for t, cs in FREE_TEXT_COLUMNS.items() for c in cs})
        result.deleted["raw.quarantine"] = 0
    params = _ids_params(con, user_ids)
    con.execute("begin transaction")
    try:
        for table, columns in USER_COLUMNS.items():
            for column, action in columns:
                where = f"{quote(column)} in (select user_id from {_IDS})"
                per_user = f"select {quote(column)}, count(*) from raw.{table} where {where} group by 1"
                counts = _run(con, per_user, params)
                place = f"raw.{table}" if action == "delete" else f"raw.{table}.{column}"
                _tally(results, counts, place, "deleted" if action == "delete" else "pseudonymised")
                if counts and not dry_run:
                    change = "delete from" if action == "delete" else "update"
                    assign = "" if action == "delete" else f" set {quote(column)} = null"
                    _run(con, f"{change} raw.{table}{assign} where {where}", params)
        for table, column in _json_columns(con):
            nodes = _json_nodes(con, table, column, params)
            rows = {(row_id, user) for row_id, _path, _key, user in nodes}
            _tally(results, Counter(user for _row, user in rows).items(), f"raw.{table}.{column}", "pseudonymised")
            if nodes and not dry_run:
                _scrub_json(con, table, column, params)
        for table, columns in FREE_TEXT_COLUMNS.items():
            for column in columns:
                pairs = _run(
                    con,
                    f"""
                    with hits as materialized (
                        select rowid as row_id, {quote(column)} as text from raw.{table}
                        where regexp_matches({quote(column)}, $any_word)
                    )

                    select hits.row_id, ids.user_id from hits, {_IDS} as ids where regexp_matches(hits.text, ids.word)
                    """,
                    params,
                )
                _tally(results, Counter(user for _row, user in pairs).items(), f"raw.{table}.{column}", "pseudonymised")
                if pairs and not dry_run:
                    con.execute(
                        f"update raw.{table} set {quote(column)} = null where rowid in (select unnest($rows))",
                        {"rows": sorted({row for row, _user in pairs})},
                    )
        lines = "(select rowid as row_id, raw_text, raw_bytes from raw.quarantine)"
        pairs = _run(con, _quarantine_hits_sql(lines), params)
        _tally(results, Counter(user for _row, user in pairs).items(), "raw.quarantine", "deleted")
        if pairs and not dry_run:
            con.execute(
                "delete from raw.quarantine where rowid in (select unnest($rows))",
                {"rows": sorted({row for row, _user in pairs})},
            )
        first = results[user_ids[0]]
        first.archive_files = archive_paths(con, archive_dir)
        for path in first.archive_files:
            for user_id, count in _erase_from_archive(con, path, params, dry_run=dry_run).items():
                results[user_id].archives[str(path)] = count
        if not dry_run:
            for path in _leftovers(first.archive_files, archive_dir):
                path.unlink()
                first.removed_leftovers.append(path)
        if dry_run:  # a dry run only counts, on a read-only connection: it writes nothing, not even the log
            con.execute("commit")
            return [results[user_id] for user_id in user_ids]
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        con.executemany(
            "insert into raw.erasure_log values (?, ?, ?, ?, ?, ?, ?)",
            [
                [
                    uuid.uuid4().hex,
                    result.user_id_sha256,
                    now,
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
                ]
                for result in (results[user_id] for user_id in user_ids)
            ],
        )
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return [results[user_id] for user_id in user_ids]


def combined(results: list[ErasureResult]) -> ErasureResult:
    """The counts of several ids' results added up (for one summary), under the first one's hash."""
    total = ErasureResult(results[0].user_id_sha256)
    for result in results:
        for mine, theirs in ((total.deleted, result.deleted), (total.pseudonymised, result.pseudonymised)):
            for place, count in theirs.items():
                mine[place] = mine.get(place, 0) + count
        for path, count in result.archives.items():
            total.archives[path] = total.archives.get(path, 0) + count
    total.archive_files, total.removed_leftovers = results[0].archive_files, results[0].removed_leftovers
    return total


def changed_tables(results: list[ErasureResult]) -> set[tuple[str, str]]:
    """(schema, table) of every table the erasure deleted or changed a row of (its log included)."""
    total = combined(results)
    places = [place for place, count in (*total.deleted.items(), *total.pseudonymised.items()) if count]
    return {("raw", place.split(".")[1]) for place in places} | {("raw", "erasure_log")}


def id_forms(user_ids: list[str]) -> list[bytes]:
    """The bytes the ids are most often stored as: their UTF-8 text and the body of their ASCII JSON literal."""
    return sorted({form for user_id in user_ids for form in (user_id.encode(), json.dumps(user_id)[1:-1].encode())})


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
