"""The serving file: what the dashboard reads, published atomically after each successful build.

The warehouse file has one writer at a time (ingest, purge, build, forget) and
DuckDB lets no other process read it meanwhile. Every reader of the numbers
(the dashboard, `report`, `export`, MetricFlow's `mf`) therefore reads a
file of its own, `<warehouse stem>.serving.duckdb` beside the warehouse
(`warehouse.location.serving_path`): every relation of the `marts` schema
(the marts, the `stored_*` and `retained_*` views) and one row of warehouse
status (`serving.publish_info`: when it was published, from which warehouse
and engine, when data last arrived, the raw tables), and the day digests of
the large relations as published (`serving.publish_digests`, for the next
incremental publish: operations/serving_days.py). Only `publish` writes the
file: an incremental publish trusts its digests, so a file changed by any
other hand is set right by `publish --full`.

The relations are the models under models/marts/ (a relation dbt no longer
builds, left behind by a removed or renamed model, is not published). A
mart table is copied as a table. A view whose model says `meta: {serving: view}`
(dbt_project.yml; the post-hook macros/publish/serving_view.sql writes it as
the view's comment, SERVING_VIEW) is kept a view, with the very SQL dbt
compiled for it: the `retained_*` views of analyzer events and turn reactions
read only their `stored_*` view, so no row is copied twice. Any other view,
and a flagged one whose SQL does not open in the serving file, is copied as
a table of its rows.

`publish` writes it under a temporary name beside the final one (in a new folder of unpredictable name), checkpoints
and fsyncs it, renames it over the old one (atomic on POSIX) and fsyncs the
folder: a reader opens the old file or the new one, never a half-written
one, and a reader already open keeps the old one until it detaches. A killed
publish leaves the old serving file intact and a temporary file that the next
publish removes. Publishes of one serving file take turns (`<serving>.lock`,
an flock). Nothing calls `publish` after a failed build.

A publish is incremental when it can be: the new file starts as a copy of the current serving file (a copy in
the kernel, in the same staging folder), the large row relations (BY_KEY) are brought up to date by difference
(only rows whose key is new, gone or whose row hash changed are deleted and inserted), every other relation is
dropped and copied whole, the kept views are recreated, the status row replaced; then checkpoint, fsync and
rename as above. It is a full one, written from nothing (`Publication.reason` says why), when there is no
serving file or it does not open, when it was published from another engine or by a version without the
status fields this one needs (INCREMENTAL_FIELDS), when raw.erasure_log grew since (an erased row's bytes
could survive in freed blocks of a copied file), when a published relation's columns or types changed, after
a `--full-refresh` build (the hook passes dbt's flag) and with `publish --full`.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import shutil
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from operations.serving_days import DIGESTS, changed_days, covers, digest, has_digests, on_changed_days, store_digests
from warehouse.build_record import last_build, unpublished_build, unpublished_message
from warehouse.connection import connect_unreplaced, limit_memory, lock_wait_seconds, wait_out_lock
from warehouse.durable import fsync
from warehouse.errors import UserError
from warehouse.location import serving_path
from warehouse.pause_points import pause_point
from warehouse.private_files import install, open_private, staging_folder
from warehouse.raw_tables import DATA_TABLES
from warehouse.sql import quote, sql_literal

TEMPORARY_MARK = ".publishing-"
# the warehouse, attached read-only (warehouse.location refuses a warehouse file of that name)
SOURCE = "published_from"
# the new serving file, attached while it is written (warehouse.location refuses a warehouse file of that name)
TARGET = "publishing_to"
MARTS = Path(__file__).resolve().parents[1] / "models" / "marts"
# the comment of a marts view published as a view (written by the post-hook macros/publish/serving_view.sql)
SERVING_VIEW = "serving: view"


# The large row relations (history-long; in the warehouse views but feedback_signals, all published as tables)
# that an incremental publish brings up to date by difference, each with its key (the column of its model's
# `primary_key` test): the rows whose key is new, gone, or whose row differs from the published one are deleted
# and inserted, nothing else is written. The difference is taken on the rows themselves, not on the logs, so a
# change no log names (the retention flags moving with the report instant, a reaction replaced by a later load, a
# purge) is carried too.
# Every other relation (the marts the build recomputes, a few thousand rows) is copied whole.
BY_KEY: dict[str, str] = {
    "feedback_signals": "signal_id",
    "stored_analyzer_events": "event_id",
    "stored_turn_reactions": "reaction_rn",
    "turn_reactions_active": "rn",
    "retained_session_feedback": "feedback_id",
    "retained_workspace_feedback": "feedback_id",
    "retained_workspace_sessions": "session_id",
    "retained_eval_runs": "eval_run_id",
}
# The relations the dashboard's conversation drill-down looks one conversation up in (dashboards/queries/
# conversations.py), stored in conversation order so DuckDB's zone maps skip every row group that cannot hold it
# (a full scan of the 2.5M stored reactions at scale 100 took 30 ms a query, 2 ms sorted). A copy sorts; an
# incremental publish appends its few changed rows after the sorted ones (a night's rows are a row group or two
# that every lookup reads), and the next full publish sorts them in.
SORTED_BY: dict[str, tuple[str, ...]] = {
    "stored_turn_reactions": ("tenant", "project", "conversation_id"),
    "turn_reactions_active": ("source_tenant_id", "project", "conversation_id"),
}
# the serving.publish_info columns an incremental publish needs from the file it starts from
INCREMENTAL_FIELDS = ("engine", "erasures", "published_by")
PUBLISHED_BY = "incremental-2"


@dataclass(frozen=True)
class Publication:
    """What a publish did: `rows` written (copied, or inserted by difference), `removed` (deleted by
    difference), `recomputed` relations copied whole; `mode` "full" (with `reason`) or "incremental"."""

    path: Path
    relations: int
    rows: int
    seconds: float
    mode: str = "full"
    reason: str = ""
    removed: int = 0
    recomputed: int = 0

    def summary(self) -> str:
        """What the output lines say: `published 48 marts (52,311 rows) to PATH in 1.2 s incrementally: 1,204
        rows removed, 12 relations recomputed`, or `... in full: <why>`."""
        how = (
            f"incrementally: {self.removed:,} rows removed, {self.recomputed} relations recomputed"
            if self.mode == "incremental"
            else f"in full: {self.reason}"
        )
        return f"published {self.relations} marts ({self.rows:,} rows) to {self.path} in {self.seconds:.1f} s {how}"


def _remove_temporaries(final: Path) -> None:
    """Temporary files of publishes that were killed (under the publish lock no other one is being written)."""
    for leftover in final.parent.glob(f"{final.name}{TEMPORARY_MARK}*"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
        else:  # a file an older version left, or a symlink: removed, never followed
            leftover.unlink(missing_ok=True)


@contextmanager
def _publish_lock(final: Path) -> Iterator[None]:
    """One publish at a time per serving file (a build and a `forget` may publish together): the later one
    reads the warehouse after the earlier one renamed its file, so the newest marts win."""
    with open(open_private(final.with_name(final.name + ".lock")), "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _names(con: duckdb.DuckDBPyConnection, schema: str, source: str) -> list[str]:
    rows = con.execute(
        "select table_name from information_schema.tables where table_catalog = ? and table_schema = ? "
        "order by table_name",
        [source, schema],
    ).fetchall()
    return [name for (name,) in rows]


def _serving_views(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, str]:
    """The warehouse's marts views flagged to be published as views: name -> CREATE VIEW statement."""
    rows = con.execute(
        "select view_name, sql from duckdb_views() where database_name = ? and schema_name = 'marts' and comment = ?",
        [source, SERVING_VIEW],
    ).fetchall()
    return dict(rows)


def _in_order(name: str) -> str:
    """The ORDER BY a relation is stored in (SORTED_BY), or ""."""
    return f" order by {', '.join(quote(column) for column in SORTED_BY[name])}" if name in SORTED_BY else ""


def _copy_rows(con: duckdb.DuckDBPyConnection, name: str, source: str) -> int:
    """A relation of the warehouse's marts as a table of its rows (in SORTED_BY's order where it names one); how
    many."""
    con.execute(
        f"create table marts.{quote(name)} as select * from {quote(source)}.marts.{quote(name)}{_in_order(name)}"
    )
    return con.execute(f"select count(*) from marts.{quote(name)}").fetchall()[0][0]


def mart_models(models: Path = MARTS) -> frozenset[str]:
    """The models of the project's marts layer (one `.sql` file each under models/marts/)."""
    return frozenset(path.stem for path in models.rglob("*.sql"))


def _columns(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, list[tuple[str, str]]]:
    """Every marts relation of `catalog`: its columns and their types, in order."""
    columns: dict[str, list[tuple[str, str]]] = {}
    for name, column, kind in con.execute(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_catalog = ? and table_schema = 'marts' order by table_name, ordinal_position",
        [catalog],
    ).fetchall():
        columns.setdefault(name, []).append((column, kind))
    return columns


def _erasures(con: duckdb.DuckDBPyConnection, source: str) -> int:
    """How many erasures the warehouse logged (raw.erasure_log, dry runs included: a count that only grows)."""
    if "erasure_log" not in _names(con, "raw", source):
        return 0
    return con.execute(f"select count(*) from {quote(source)}.raw.erasure_log").fetchall()[0][0]


def _why_full(con: duckdb.DuckDBPyConnection, final: Path, source: str, engine: str, tables: Collection[str]) -> str:
    """Why the serving file `final` cannot be brought up to date from catalog `source` by difference; "" when it
    can (it was published by this version and engine, no erasure since, the same columns and types)."""
    if not final.exists():
        return "no serving file yet"
    try:
        previous = duckdb.connect(str(final), read_only=True)
    except duckdb.Error:
        return "the serving file does not open"
    try:
        try:
            cursor = previous.execute("select * from serving.publish_info")
            fields = [column[0] for column in cursor.description or []]
            row = cursor.fetchone()
        except duckdb.Error:
            return "the serving file has no publish_info"
        info = dict(zip(fields, row or (), strict=False))
        if any(field not in info for field in INCREMENTAL_FIELDS) or info["published_by"] != PUBLISHED_BY:
            return "the serving file was published by an older version"
        if info["engine"] != engine:
            return f"the serving file was published from {info['engine']}"
        if info["erasures"] != _erasures(con, source):
            return "an erasure since the last publish"
        (catalog,) = previous.execute("select current_database()").fetchall()[0]
        published, built = _columns(previous, catalog), _columns(con, source)
    finally:
        previous.close()
    changed = sorted(name for name in tables if name in published and published[name] != built.get(name))
    return f"the columns of {changed[0]} changed" if changed else ""


def _create_views(con: duckdb.DuckDBPyConnection, views: dict[str, str], kept: Collection[str], source: str) -> int:
    """The flagged views, kept views (see the module's note); rows copied for those whose SQL does not open."""
    pending = sorted(kept)
    while pending:  # views over views: create each once what it reads exists
        created = []
        for name in pending:
            try:
                con.execute(views[name])
            except duckdb.CatalogException:
                continue
            created.append(name)
        if not created:  # what they read is not published (not a mart, or not in `marts`): copy the rows instead
            return sum(_copy_rows(con, name, source) for name in pending)
        pending = [name for name in pending if name not in created]
    return 0


def _difference(con: duckdb.DuckDBPyConnection, name: str, key: str, source: str) -> tuple[int, int]:
    """Bring the published table `name` (current catalog) to the warehouse's rows: the rows whose key is new,
    gone or whose row hashes differently are deleted and inserted; (rows inserted, rows deleted). The keys are
    compared only within the days whose rows differ (BY_DAY, `changed_days`). Rows are compared by a 64-bit
    hash of the whole row (DuckDB's `hash` of the row as a struct), days by their row count and the XOR of
    those hashes hashed again: a changed row whose hash equals its old one's, or changed rows of one day whose
    rehashed hashes XOR to their old ones', the ways a change could be missed, have a chance near 2^-64 per
    changed row or day."""
    built, served, column = f"{quote(source)}.marts.{quote(name)}", f"marts.{quote(name)}", quote(key)
    keeps = has_digests(con)  # the file keeps digests: the served side's are read there, the new ones stored
    digests = f"select day, row_count, digest from {DIGESTS} where relation = {sql_literal(name)}"
    added = removed = 0
    try:
        if changed_days(con, name, built, served, served_digests=digests if keeps and covers(con, name) else None):

            def rows_of_changed_days(relation: str, alias: str) -> str:
                return (
                    f"select {alias}.{column} as changed_key, hash({alias}) as row_hash from {relation} as {alias} "
                    f"where {on_changed_days(con, name, alias)}"
                )

            con.execute(
                "create or replace temp table publish_changed as "
                "select coalesce(built.changed_key, served.changed_key) as changed_key "
                f"from ({rows_of_changed_days(built, 'built_row')}) as built "
                f"full join ({rows_of_changed_days(served, 'served_row')}) as served "
                "on built.changed_key = served.changed_key where built.row_hash is distinct from served.row_hash"
            )
            changed = "(select changed_key from temp.publish_changed)"
            # a changed key's rows are of changed days on both sides (a row that moved changed both its days)
            on_days = on_changed_days(con, name, "changed_row")
            (removed,) = con.execute(
                f"delete from {served} as changed_row where {on_days} and changed_row.{column} in {changed}"
            ).fetchall()[0]
            (added,) = con.execute(
                f"insert into {served} select * from {built} as changed_row "
                f"where {on_days} and changed_row.{column} in {changed}{_in_order(name)}"
            ).fetchall()[0]
        if keeps:
            store_digests(con, name, "from temp.publish_built_days")
    finally:
        for temporary in ("publish_changed", "publish_days", "publish_built_days"):
            con.execute(f"drop table if exists temp.{temporary}")
    return added, removed


def _update(
    con: duckdb.DuckDBPyConnection, names: list[str], kept: Collection[str], source: str
) -> tuple[int, int, int]:
    """Bring a copy of the last serving file (current catalog) up to date: BY_KEY relations by difference, every
    other one copied whole; (rows written, rows removed, relations recomputed). Views are recreated after."""
    for (view,) in con.execute(
        "select view_name from duckdb_views() where database_name = current_database() and schema_name = 'marts'"
    ).fetchall():
        con.execute(f"drop view marts.{quote(view)}")
    tables = [name for name in names if name not in kept]
    published = set(_names(con, "marts", TARGET))
    for name in sorted(published - set(tables)):
        con.execute(f"drop table marts.{quote(name)}")
    written = removed = recomputed = 0
    for name in tables:
        if name in BY_KEY and name in published:
            added, gone = _difference(con, name, BY_KEY[name], source)
            written, removed = written + added, removed + gone
            pause_point("publish-incremental-relation")
        else:
            con.execute(f"drop table if exists marts.{quote(name)}")
            written, recomputed = written + _copy_rows(con, name, source), recomputed + 1
            if name in BY_KEY:
                store_digests(con, name, digest(name, f"marts.{quote(name)}", "copied_row"))
    if has_digests(con):  # the digests of relations no longer published as tables go with them
        con.execute(f"delete from {DIGESTS} where not list_contains(?, relation)", [[t for t in tables if t in BY_KEY]])
    return written, removed, recomputed


def _copy(con: duckdb.DuckDBPyConnection, names: list[str], kept: Collection[str], source: str) -> int:
    """The marts relations of the warehouse, catalog `source` of `con` (see the module's note), into `con`'s
    current catalog, a new file; rows copied (the kept views are created after)."""
    con.execute("create schema marts")
    rows = sum(_copy_rows(con, name, source) for name in names if name not in kept)
    for name in sorted(BY_KEY.keys() & set(names) - set(kept)):
        store_digests(con, name, digest(name, f"marts.{quote(name)}", "copied_row"))
    return rows


def _status(con: duckdb.DuckDBPyConnection, engine: str, relations: int, source: str, build_id: str | None) -> None:
    """The one row of serving.publish_info, replacing the one copied from the last serving file."""
    raw = _names(con, "raw", source)
    last_loaded = (
        con.execute(f"select max(finished_at) from {quote(source)}.raw.load_manifest").fetchall()[0][0]
        if "load_manifest" in raw
        else None
    )
    (path,) = con.execute("select path from duckdb_databases() where database_name = ?", [source]).fetchall()[0]
    con.execute("create schema if not exists serving")
    con.execute("drop table if exists serving.publish_info")
    con.execute(
        """
        create table serving.publish_info as
        select ?::timestamp as published_at, ?::varchar as warehouse, ?::varchar as engine,
               ?::timestamp as last_loaded_at, ?::varchar[] as raw_tables, ?::integer as relations,
               ?::varchar as build_id, ?::bigint as erasures, ?::varchar as published_by
        """,
        [
            dt.datetime.now(dt.UTC).replace(tzinfo=None),
            str(path),
            engine,
            last_loaded,
            sorted(t for t in raw if t in DATA_TABLES or t == "load_manifest"),
            relations,
            build_id,
            _erasures(con, source),
            PUBLISHED_BY,
        ],
    )


def publish(
    db: Path, *, engine: str = "duckdb", marts: Collection[str] | None = None, full: bool = False
) -> Publication:
    """Publish the warehouse's marts and status to its serving file (see the module's note); a warehouse
    without marts publishes nothing (`relations` 0) and leaves the serving file as it was. `marts`: the
    relations to publish, by default the project's marts models (`mart_models`). The serving file names the
    build its marts come from (warehouse/build_record.py), the last one recorded beside the warehouse.
    Incremental when it can be (see the module's note), in full with `full` (`publish --full`).

    Locks are taken in one order everywhere, the warehouse first (here read-only, waiting out a writer), then
    the publish lock, so this never waits on a build that publishes from inside dbt (`publish_in_connection`)."""
    started = time.perf_counter()
    con = duckdb.connect()
    try:
        con.execute("set TimeZone = 'UTC'")
        limit_memory(con, db)
        wait_out_lock(
            lambda: con.execute(f"attach {sql_literal(str(db.resolve()))} as {SOURCE} (read_only)"),
            db,
            wait_seconds=lock_wait_seconds(),
        )
        record = last_build(db)
        forced = "--full" if full else ""
        return _publish(con, SOURCE, db, engine, marts, record.build_id if record else None, started, forced)
    finally:
        con.close()


def publish_in_connection(
    con: duckdb.DuckDBPyConnection,
    build_id: str,
    *,
    engine: str = "duckdb",
    marts: Collection[str] | None = None,
    full_refresh: bool = False,
) -> Publication:
    """`publish` from a connection that has the warehouse open as its current catalog, e.g. dbt's own (the
    plugin operations/dbt_plugin.py, at the end of a successful `dbt build`): what that process committed is
    what is published, the same way, under the same lock; in full after a `--full-refresh` build."""
    started = time.perf_counter()
    cursor = con.cursor()
    try:
        (source,) = cursor.execute("select current_database()").fetchall()[0]
        (path,) = cursor.execute("select path from duckdb_databases() where database_name = ?", [source]).fetchall()[0]
        forced = "--full-refresh" if full_refresh else ""
        return _publish(cursor, source, Path(path), engine, marts, build_id, started, forced)
    finally:
        cursor.close()


def _publish(
    con: duckdb.DuckDBPyConnection,
    source: str,
    db: Path,
    engine: str,
    marts: Collection[str] | None,
    build_id: str | None,
    started: float,
    forced: str,
) -> Publication:
    """From catalog `source` of `con` (the warehouse `db`) into a new serving file, renamed over the old: a
    copy of the old one brought up to date, or (`forced` says why, or `_why_full`) one written from nothing."""
    final = serving_path(db)
    wanted = mart_models() if marts is None else marts
    names = [name for name in _names(con, "marts", source) if name in wanted]
    if not names:  # e.g. a warehouse without marts yet: the serving file stays as it was
        return Publication(final, 0, 0, time.perf_counter() - started)
    views = _serving_views(con, source)
    kept = {name for name in views if name in names}
    with _publish_lock(final):
        _remove_temporaries(final)
        reason = forced or _why_full(con, final, source, engine, [name for name in names if name not in kept])
        # in a new folder of unpredictable name: a symlink planted at a guessable name is never written through
        with staging_folder(final, f"{final.name}{TEMPORARY_MARK}") as temporary:
            if not reason:  # a copy in the kernel (copy_file_range / sendfile), under the lock nothing writes it
                shutil.copyfile(final, temporary)
            (current,) = con.execute("select current_database()").fetchall()[0]
            con.execute(f"attach {sql_literal(str(temporary))} as {TARGET}")
            try:
                con.execute(f"use {TARGET}")
                if reason:
                    rows, removed, recomputed = _copy(con, names, kept, source), 0, 0
                else:
                    rows, removed, recomputed = _update(con, names, kept, source)
                rows += _create_views(con, views, kept, source)
                _status(con, engine, len(names), source, build_id)
                con.execute(f"checkpoint {TARGET}")
            finally:
                con.execute(f"use {quote(current)}")
                con.execute(f"detach {TARGET}")
            fsync(temporary)
            pause_point("publish-before-rename")
            install(temporary, final)
            fsync(final.parent)
    mode = "full" if reason else "incremental"
    return Publication(final, len(names), rows, time.perf_counter() - started, mode, reason, removed, recomputed)


def published_build_id(db: Path) -> str | None:
    """The build the serving file was published from (serving.publish_info.build_id); None when there is no
    serving file or it names none (published by an older version)."""
    final = serving_path(db)
    if not final.exists():
        return None
    try:
        con = connect_unreplaced(final)
    except (duckdb.Error, UserError):
        return None
    try:
        rows = con.execute("select build_id from serving.publish_info").fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()
    return rows[0][0] if rows else None


def unpublished_note(db: Path) -> str:
    """For readers on a command line: a sentence when the warehouse holds a newer build than its serving file
    (warehouse/build_record.py), naming the command that publishes it; "" otherwise."""
    record = unpublished_build(db, published_build_id(db))
    return unpublished_message(db, record) if record else ""
