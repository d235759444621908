"""`feedback-analytics ingest ...` and `quarantine`: load sources into the raw tables, list what was set aside.

Exit codes: 0 success (also when rows were quarantined: the command says how
many and how to list them), 1 failure (an input nothing could be read from),
2 usage error.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from cli.options import db_option, quiet_option, warehouse_of
from ingest.config import read_config
from ingest.load import LoadResult, unusable_inputs
from ingest.progress import LoadProgress
from ingest.sources import ingest_entries, ingest_source
from warehouse.connection import connect
from warehouse.dsn import dsn_from
from warehouse.errors import UserError
from warehouse.printable import printable


def _report(results: list[LoadResult], db: Path, quiet: bool, elapsed: float, *, hint: bool = True) -> None:
    if not quiet:  # file names and paths are upstream text: escaped (warehouse/printable.py)
        for r in results:
            uri = printable(r.uri)
            if r.skipped:
                click.echo(f"{r.table:<22} {uri}: unchanged since its last load, skipped")
            elif r.rows_read == 0:
                click.echo(f"{r.table:<22} {uri}: empty, nothing to load")
            else:
                click.echo(
                    f"{r.table:<22} {uri}: read {r.rows_read:,}, landed {r.loaded:,}, "
                    f"quarantined {r.quarantined:,}, duplicates {r.duplicates:,} ({r.seconds:.1f} s)"
                )
    symlinks = sum(r.symlinks_skipped for r in results)
    if symlinks:
        click.echo(
            f"{symlinks} symlink(s) in the source folders skipped: symlinks are not followed "
            "(copy the file into the folder to load it)",
            err=True,
        )
    read = sum(r.rows_read for r in results)
    loaded = sum(r.loaded for r in results)
    bad = sum(r.quarantined for r in results)
    dups = sum(r.duplicates for r in results)
    skipped = sum(r.skipped for r in results)
    rate = read / elapsed if elapsed > 0 else 0
    click.echo(
        f"total: read {read:,}, landed {loaded:,}, quarantined {bad:,}, duplicates {dups:,}"
        + (f", {skipped} unchanged input(s) skipped" if skipped else "")
        + f" in {elapsed:.1f} s ({rate:,.0f} rows/s) into {printable(db)}"
    )
    if bad and hint:
        click.echo(
            f"{bad:,} row(s) quarantined: list them (file, line, reason) with {_quarantine_command(results, db)}",
            err=True,
        )


def _quarantine_command(results: list[LoadResult], db: Path) -> str:
    loads = [r.load_id for r in results if r.quarantined and r.load_id]
    return f"`feedback-analytics quarantine --db {printable(db)}" + (f" --load {loads[0]}`" if len(loads) == 1 else "`")


def _run_ingest(
    db: str | None, quiet: bool, work: Callable[..., list[LoadResult]], failures: list[str] | None = None
) -> None:
    """Run `work` on the warehouse and report; exit 1 naming each input that failed (`failures`, which `work`
    may fill: the sources of a config that failed while the others loaded) or of which nothing could land."""
    parent = click.get_current_context().parent  # `ingest --quiet analyzer ...` counts too
    if parent is not None and parent.info_name == "ingest":
        quiet = quiet or bool(parent.params.get("quiet"))
    path = warehouse_of(db).path
    started = time.perf_counter()
    con = connect(path)
    try:
        with LoadProgress(enabled=None if not quiet else False) as progress:
            results = work(con, progress)
        unusable = unusable_inputs(con, results)
    finally:
        con.close()
    failed = list(failures or [])
    _report(results, path, quiet, time.perf_counter() - started, hint=not unusable and not failed)
    if unusable:
        failed.append("; ".join(unusable) + f" (its rows are quarantined: {_quarantine_command(results, path)})")
    if failed:
        raise UserError(f"{len(failed)} source(s) failed: " + "; ".join(failed) if failures else failed[0])


@click.group("ingest", invoke_without_command=True)
@click.option(
    "--config", "config_file", type=click.Path(path_type=Path), help="Load every source named in a TOML file."
)
@db_option
@quiet_option
@click.pass_context
def ingest(ctx: click.Context, config_file: Path | None, db: str | None, quiet: bool) -> None:
    """Load feedback sources into the warehouse's raw schema (validated, idempotent)."""
    if ctx.invoked_subcommand is not None:
        if config_file:
            raise click.UsageError("--config loads every source itself: give it without a subcommand")
        return
    if config_file is None:
        click.echo(ctx.get_help())
        ctx.exit(2)
    entries = read_config(config_file)
    failures: list[str] = []

    def work(con: Any, progress: LoadProgress) -> list[LoadResult]:
        results, failed = ingest_entries(con, entries, progress)  # a source that fails stops no other
        failures.extend(failed)
        return results

    _run_ingest(db, quiet, work, failures)


def _ingest_one(
    con: Any,
    section: str,
    path: Path | None,
    dsn: str | None,
    no_snippets: bool,
    progress: LoadProgress,
    schemas: tuple[str, ...] = (),
) -> list[LoadResult]:
    return ingest_source(con, section, path, dsn, no_snippets, progress, schemas)


@ingest.command("analyzer")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--no-snippets", is_flag=True, help="Drop user_message_snippet at ingest (privacy mode).")
@db_option
@quiet_option
def ingest_analyzer_cmd(paths: tuple[Path, ...], no_snippets: bool, db: str | None, quiet: bool) -> None:
    """Analyzer events: feedback.jsonl files or feedback-store folders (active file plus archive/)."""
    for path in paths:
        if not path.exists():
            raise UserError(
                f"analyzer path {path} does not exist: pass a feedback.jsonl file or a feedback-store folder"
            )
    _run_ingest(
        db,
        quiet,
        lambda con, progress: [r for p in paths for r in _ingest_one(con, "analyzer", p, None, no_snippets, progress)],
    )


def _path_or_postgres(section: str, what: str, *, schemas: bool = False) -> Callable[..., None]:
    schema_option = click.option(
        "--schema",
        "schema_names",
        multiple=True,
        metavar="NAME",
        help="Only this index schema (kdcube_<tenant>_<project>; repeat for more). Default: every one.",
    )

    @click.argument("path", required=False, type=click.Path(path_type=Path))
    @click.option(
        "--postgres",
        "dsn",
        metavar="env:NAME|DSN",
        help="Read the PostgreSQL table(s) at the libpq DSN/URL held by the environment variable NAME (preferred: "
        "a command line is readable by every local user), or at this DSN.",
    )
    @db_option
    @quiet_option
    def command(
        path: Path | None, dsn: str | None, db: str | None, quiet: bool, schema_names: tuple[str, ...] = ()
    ) -> None:
        if path is None and dsn is None:
            raise click.UsageError(f"give a PATH ({what}) or --postgres DSN")
        if path is not None and dsn is not None:
            raise click.UsageError(f"give a PATH ({what}) or --postgres DSN, not both: run the command once for each")
        if path is not None and not path.exists():
            raise UserError(f"{section.replace('_', ' ')} path {path} does not exist: check the path ({what})")
        if schema_names and dsn is None:
            raise click.UsageError("--schema names schemas of the reaction index: give it with --postgres DSN")
        if dsn is not None:
            dsn = dsn_from(dsn)
        _run_ingest(
            db, quiet, lambda con, progress: _ingest_one(con, section, path, dsn, False, progress, schema_names)
        )

    return schema_option(command) if schemas else command


ingest.command(
    "session-feedback", help="Session feedback: legacy SQLite file or JSONL export; or PostgreSQL `session_feedback`."
)(_path_or_postgres("session_feedback", "a .sqlite3 file or a .jsonl export"))
ingest.command(
    "reactions",
    help="Turn reactions: the conversation store's blob tree or a JSONL export (history); or the index "
    "(`conv_messages` of every kdcube_<tenant>_<project> schema: which reactions are active).",
)(_path_or_postgres("reactions", "a folder of JSON blobs or a .jsonl export", schemas=True))
ingest.command("workspace", help="Workspace feedback, sessions, eval_runs: JSONL exports; or PostgreSQL tables.")(
    _path_or_postgres("workspace", "a folder of feedback/sessions/eval_runs .jsonl exports")
)


@click.command("quarantine")
@click.option("--load", "load_id", metavar="LOAD_ID", help="Only this load (its id, or the first characters of it).")
@click.option("--source", "source_uri", metavar="TEXT", help="Only files or tables whose uri contains this text.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many rows.")
@db_option
def quarantine(load_id: str | None, source_uri: str | None, limit: int, db: str | None) -> None:
    """List the quarantined rows (file, line or key, reason), newest first; the raw text stays in raw.quarantine."""
    path = warehouse_of(db).path
    con = connect(path, read_only=True)
    try:
        rows = con.execute(
            """
            select load_id, source_uri, line_number, record_key, reason
            from raw.quarantine
            where ($load is null or starts_with(load_id, $load))
              and ($source is null or contains(source_uri, $source))
            order by quarantined_at desc, source_uri, line_number nulls last, record_key
            limit $limit
            """,
            {"load": load_id, "source": source_uri, "limit": limit},
        ).fetchall()
        (total,) = con.execute(
            "select count(*) from raw.quarantine where ($load is null or starts_with(load_id, $load))"
            " and ($source is null or contains(source_uri, $source))",
            {"load": load_id, "source": source_uri},
        ).fetchall()[0]
    finally:
        con.close()
    if not rows:
        click.echo("no quarantined rows" + (" match" if load_id or source_uri else "") + f" in {printable(path)}")
        return
    for load, uri, line, key, reason in rows:  # upstream text, escaped: one row is one line, no escape sequence
        where = f"line {line}" if line is not None else f"key {printable(key)}" if key is not None else "-"
        click.echo(f"{load[:12]}  {printable(uri)}  {where}: {printable(reason)}")
    if total > len(rows):
        click.echo(f"... {total - len(rows):,} more (--limit to see them)", err=True)
