"""The serving file: what the dashboard reads, published atomically after each successful build.

The warehouse file has one writer at a time (ingest, purge, build, forget) and
DuckDB lets no other process read it meanwhile. Every reader of the numbers
(the dashboard, `report`, `export`, MetricFlow's `mf`) therefore reads a
file of its own, `<warehouse stem>.serving.duckdb` beside the warehouse
(`warehouse.location.serving_path`): every relation of the `marts` schema
(the marts, the `stored_*` and `retained_*` views) and one row of warehouse
status (`serving.publish_info`: when it was published, from which warehouse
and engine, when data last arrived, the raw tables).

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

from warehouse.build_record import last_build, unpublished_build, unpublished_message
from warehouse.connection import limit_memory, lock_wait_seconds, wait_out_lock
from warehouse.durable import fsync
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


@dataclass(frozen=True)
class Publication:
    path: Path
    relations: int
    rows: int
    seconds: float


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


def _copy_rows(con: duckdb.DuckDBPyConnection, name: str, source: str) -> int:
    """A relation of the warehouse's marts as a table of its rows; how many."""
    con.execute(f"create table marts.{quote(name)} as select * from {quote(source)}.marts.{quote(name)}")
    return con.execute(f"select count(*) from marts.{quote(name)}").fetchall()[0][0]


def mart_models(models: Path = MARTS) -> frozenset[str]:
    """The models of the project's marts layer (one `.sql` file each under models/marts/)."""
    return frozenset(path.stem for path in models.rglob("*.sql"))


def _copy(
    con: duckdb.DuckDBPyConnection, engine: str, marts: Collection[str], source: str, build_id: str | None
) -> tuple[int, int]:
    """The marts relations of the warehouse, catalog `source` of `con` (see the module's note), and the status
    row, into `con`'s current catalog; (relations, rows copied)."""
    names = [name for name in _names(con, "marts", source) if name in marts]
    views = _serving_views(con, source)
    kept = {name for name in views if name in names}
    con.execute("create schema marts")
    rows = 0
    for name in names:
        if name not in kept:
            rows += _copy_rows(con, name, source)
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
            rows += sum(_copy_rows(con, name, source) for name in pending)
            break
        pending = [name for name in pending if name not in created]
    raw = _names(con, "raw", source)
    last_loaded = (
        con.execute(f"select max(finished_at) from {quote(source)}.raw.load_manifest").fetchall()[0][0]
        if "load_manifest" in raw
        else None
    )
    (path,) = con.execute("select path from duckdb_databases() where database_name = ?", [source]).fetchall()[0]
    con.execute("create schema serving")
    con.execute(
        """
        create table serving.publish_info as
        select ?::timestamp as published_at, ?::varchar as warehouse, ?::varchar as engine,
               ?::timestamp as last_loaded_at, ?::varchar[] as raw_tables, ?::integer as relations,
               ?::varchar as build_id
        """,
        [
            dt.datetime.now(dt.UTC).replace(tzinfo=None),
            str(path),
            engine,
            last_loaded,
            sorted(t for t in raw if t in DATA_TABLES or t == "load_manifest"),
            len(names),
            build_id,
        ],
    )
    return len(names), rows


def publish(db: Path, *, engine: str = "duckdb", marts: Collection[str] | None = None) -> Publication:
    """Publish the warehouse's marts and status to its serving file (see the module's note); a warehouse
    without marts publishes nothing (`relations` 0) and leaves the serving file as it was. `marts`: the
    relations to publish, by default the project's marts models (`mart_models`). The serving file names the
    build its marts come from (warehouse/build_record.py), the last one recorded beside the warehouse.

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
        return _publish(con, SOURCE, db, engine, marts, record.build_id if record else None, started)
    finally:
        con.close()


def publish_in_connection(
    con: duckdb.DuckDBPyConnection, build_id: str, *, engine: str = "duckdb", marts: Collection[str] | None = None
) -> Publication:
    """`publish` from a connection that has the warehouse open as its current catalog, e.g. dbt's own (the
    plugin operations/dbt_plugin.py, at the end of a successful `dbt build`): what that process committed is
    what is published, the same way, under the same lock."""
    started = time.perf_counter()
    cursor = con.cursor()
    try:
        (source,) = cursor.execute("select current_database()").fetchall()[0]
        (path,) = cursor.execute("select path from duckdb_databases() where database_name = ?", [source]).fetchall()[0]
        return _publish(cursor, source, Path(path), engine, marts, build_id, started)
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
) -> Publication:
    """Copy from catalog `source` of `con` (the warehouse `db`) into a new serving file, renamed over the old."""
    final = serving_path(db)
    with _publish_lock(final):
        _remove_temporaries(final)
        # in a new folder of unpredictable name: a symlink planted at a guessable name is never written through
        with staging_folder(final, f"{final.name}{TEMPORARY_MARK}") as temporary:
            (current,) = con.execute("select current_database()").fetchall()[0]
            con.execute(f"attach {sql_literal(str(temporary))} as {TARGET}")
            try:
                con.execute(f"use {TARGET}")
                relations, rows = _copy(con, engine, mart_models() if marts is None else marts, source, build_id)
                con.execute(f"checkpoint {TARGET}")
            finally:
                con.execute(f"use {quote(current)}")
                con.execute(f"detach {TARGET}")
            if not relations:  # e.g. a warehouse without marts yet: the serving file stays as it was
                return Publication(final, 0, 0, time.perf_counter() - started)
            fsync(temporary)
            pause_point("publish-before-rename")
            install(temporary, final)
            fsync(final.parent)
    return Publication(final, relations, rows, time.perf_counter() - started)


def published_build_id(db: Path) -> str | None:
    """The build the serving file was published from (serving.publish_info.build_id); None when there is no
    serving file or it names none (published by an older version)."""
    final = serving_path(db)
    if not final.exists():
        return None
    try:
        con = duckdb.connect(str(final), read_only=True)
    except duckdb.Error:
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
