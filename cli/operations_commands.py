"""`feedback-analytics build`, `publish`, `purge`, `forget` and `nightly`: what runs on the warehouse after ingest.

Each command parses its options, resolves the warehouse once and hands the
work to `operations/` (docs/operations.md has the safety rules).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import duckdb

from cli.options import (
    archive_option,
    db_option,
    existing_warehouse,
    parse_cli_as_of,
    target_option,
    warehouse_of,
)
from ingest.config import read_config
from ingest.sources import ingest_configured_sources
from operations.alerts.run import nightly_alerts_step
from operations.build import last_build_as_of, selects
from operations.erasure import changed_tables, combined, describe_result, erase_many, id_forms
from operations.erasure_ids import read_user_ids
from operations.erasure_rewrite import describe_rewrite, rewrite_warehouse, snapshot
from operations.erasure_verification import verify
from operations.nightly import run_nightly
from operations.retention import DEFAULT_MAX_SHARE, Purge, default_archive_dir, read_policies, read_purge_settings
from operations.serving import publish
from operations.targets import build_showing_progress
from warehouse.connection import connect
from warehouse.errors import UserError
from warehouse.location import refuse_what_is_no_warehouse

full_tests_option = click.option(
    "--full-tests",
    is_flag=True,
    help="Run the large models' data tests on every row, not only on the loads since the last build "
    "(always so with --full-refresh; docs/operations.md).",
)


@click.command("build", context_settings={"ignore_unknown_options": True})
@click.option(
    "--as-of",
    "as_of",
    default=None,
    help="Report as of this date (its end, UTC) or ISO-8601 timestamp (any offset; default: now).",
)
@click.option(
    "--unit-tests/--no-unit-tests",
    default=False,
    help="Also run the dbt unit tests (they check the SQL on fixed rows, not the data; the test suite runs them).",
)
@full_tests_option
@target_option
@db_option
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
def build(
    as_of: str | None, unit_tests: bool, full_tests: bool, target: str | None, db: str | None, dbt_args: tuple[str, ...]
) -> None:
    """Run `dbt build` on the warehouse with the project's profile and vars (extra args go to dbt)."""
    instant = parse_cli_as_of(as_of)
    warehouse = existing_warehouse(db, missing="run `feedback-analytics ingest ...` first")
    refuse_what_is_no_warehouse(warehouse.path)
    # a build of a selection keeps the warehouse's as-of unless one is given (macros/as_of/as_of.sql): read here,
    # once, before dbt starts, so no model reads marts.build_info while the selection may be rebuilding it
    build_as_of = (last_build_as_of(warehouse.path) or instant) if as_of is None and selects(dbt_args) else instant
    result = build_showing_progress(
        warehouse.path, build_as_of, list(dbt_args), unit_tests=unit_tests, target=target, full_tests=full_tests
    )
    if not result.ok:
        raise UserError(f"dbt build failed (exit {result.code}): see the dbt output above")


@click.command("publish")
@db_option
@click.option("--full", is_flag=True, help="Write the serving file from nothing instead of bringing it up to date.")
def publish_command(db: str | None, full: bool) -> None:
    """Publish the warehouse's marts to the serving file the dashboard, report, export and mf read.

    Every successful build publishes by itself (ours and a plain `dbt build`); this is for when a publish
    failed or was killed, which the readers then say. Incremental when it can be (docs/operations.md)."""
    path = existing_warehouse(db, missing="run `feedback-analytics ingest ...` and `build` first").path
    refuse_what_is_no_warehouse(path)
    try:
        done = publish(path, full=full)
    except (duckdb.Error, OSError) as exc:
        raise UserError(f"not published: {str(exc).splitlines()[0]}") from None
    if not done.relations:
        raise UserError(f"nothing published: {path} has no marts yet; run `feedback-analytics build --db {path}`")
    click.echo(f"{done.summary()} (the file the dashboard, report, export and mf read)")


@click.command("purge")
@click.option(
    "--as-of",
    "as_of",
    default=None,
    help="Apply the policies as of this date or ISO-8601 timestamp (its UTC day; default: today, UTC).",
)
@click.option(
    "--dry-run", is_flag=True, help="Only print what each policy would do; the warehouse is opened read-only."
)
@click.option(
    "--yes",
    "confirmed",
    is_flag=True,
    help="Purge even when a policy would delete more than --max-share of its table (a first purge of a long backlog).",
)
@click.option(
    "--max-share",
    type=click.FloatRange(0, 1),
    default=None,
    help="A delete policy removing more than this share of its table's rows stops the purge first (default: 0.5).",
)
@archive_option
@db_option
def purge(
    as_of: str | None,
    dry_run: bool,
    confirmed: bool,
    max_share: float | None,
    archive_dir: Path | None,
    db: str | None,
) -> None:
    """Apply the retention policies (seeds/retention_policies.csv) to the raw tables."""
    day = parse_cli_as_of(as_of).day
    path = existing_warehouse(db, missing="nothing to purge").path
    con = connect(path, read_only=dry_run)
    try:
        results = Purge(
            con,
            day,
            archive_dir or default_archive_dir(path),
            dry_run,
            max_share=DEFAULT_MAX_SHARE if max_share is None else max_share,
            confirmed=confirmed,
        ).run(read_policies())
    finally:
        con.close()
    for line in purge_lines(results, dry_run):
        click.echo(line)
    if not dry_run and any(r.archived or r.deleted or r.deleted_from_archive for r in results):
        click.echo("the marts show this at the next build: run `feedback-analytics build` (the nightly does)")


def purge_lines(results: list[Any], dry_run: bool) -> list[str]:
    """One line per policy: rows moved to the archive, deleted from the table, deleted from the archive."""
    moved, deleted = ("would move", "would delete") if dry_run else ("moved", "deleted")
    lines = []
    for r in results:
        cutoff = "never purged" if r.cutoff is None else f"before {r.cutoff}"
        where = f" -> {r.archive_uri}" if r.archive_uri else ""
        lines.append(
            f"{r.policy:<24} raw.{r.table:<20} {cutoff:<18} {moved} {r.archived:,} to the archive, "
            f"{deleted} {r.deleted:,} from the table and {r.deleted_from_archive:,} from the archive{where}"
        )
    return lines


@click.command("forget")
@click.option("--user-id", help="The user id to erase everywhere.")
@click.option(
    "--user-ids-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Erase every id of this file (one per line) in one pass: one rebuild, one rewrite, one verification.",
)
@click.option("--dry-run", is_flag=True, help="Only count what would be erased.")
@click.option("--no-build", is_flag=True, help="Do not rebuild the marts afterwards.")
@db_option
def forget(user_id: str | None, user_ids_file: Path | None, dry_run: bool, no_build: bool, db: str | None) -> None:
    """Erase users from every raw table and the analyzer archive, rebuild, rewrite what held them so that none of
    their ids' bytes remain, verify; audit by hash, never an id in clear (docs/operations.md)."""
    if (user_id is None) == (user_ids_file is None):
        raise click.UsageError("give one of --user-id ID and --user-ids-file FILE")
    if user_id is not None and not user_id.strip():
        raise click.BadParameter("must not be empty", param_hint="--user-id")
    batch = read_user_ids(user_ids_file) if user_ids_file is not None else None
    user_ids = batch.ids if batch else [user_id or ""]
    warehouse = existing_warehouse(db, missing="nothing to erase")
    path = warehouse.path
    before = None if dry_run else snapshot(path)
    con = connect(path, read_only=dry_run)  # a dry run writes nothing
    try:
        results = erase_many(con, user_ids, dry_run=dry_run, archive_dir=default_archive_dir(path))
    finally:
        con.close()
    if batch:
        skipped = f", {batch.duplicates} repeated line(s) skipped" if batch.duplicates else ""
        click.echo(f"{len(user_ids)} user id(s) from {user_ids_file}{skipped}; counts over all of them:")
    for line in describe_result(combined(results), dry_run=dry_run):
        click.echo(line)
    nothing = "would be" if dry_run else "was"
    for index, result in enumerate(results):
        if not result.matched_nothing:
            continue
        if batch:  # by line and hash, not the id: the output may go to a log
            click.echo(f"line {batch.lines[index]} (sha256 {result.user_id_sha256[:12]}): no row matched the id")
        else:
            click.echo(
                f"no row matched the id {user_id!r}: nothing {nothing} erased "
                "(ids match exactly, case included; check the id)"
            )
    logged = "a real run records" if dry_run else "recorded"
    if batch:
        click.echo(f"{logged} one raw.erasure_log row per id, by sha256 (never the id)")
    else:
        click.echo(
            f"{'a real run records the request' if dry_run else 'request recorded'} in raw.erasure_log as "
            f"sha256 {results[0].user_id_sha256}"
        )
    failure = None
    if not dry_run and not no_build:  # also when nothing matched now: an earlier --no-build may have left models
        as_of = last_build_as_of(path)  # the report keeps its as-of: an erasure is no reason to move it
        click.echo(f"rebuilding the marts as of {as_of.dbt_var if as_of else 'now (no earlier build recorded)'}")
        rebuilt = build_showing_progress(path, as_of)
        if not rebuilt.ok:
            failure = (
                f"rows erased, but the rebuild failed (exit {rebuilt.code}): run `feedback-analytics build`, "
                "then forget"
            )
    if dry_run or before is None:
        click.echo(
            f"would rewrite what held the id(s) in {path} ({path.stat().st_size:,} bytes) and zero its free "
            "blocks, so that no freed block keeps erased bytes"
        )
    else:
        rewrite = rewrite_warehouse(path, changed_tables(results), before, id_forms(user_ids))
        click.echo(describe_rewrite(rewrite))
    remaining = verify(warehouse, user_ids, results[0].archive_files)
    ids = "the ids" if batch else "the id"
    click.echo(f"verification (every column and archive file decoded again in Python), rows still carrying {ids}:")
    for where, count in remaining.items():
        click.echo(f"  {where:<44} {count}")
    held = [where for where, count in remaining.items() if count]
    if not dry_run and held:
        if any(where.startswith(("raw.", "archive.")) for where in held) or not no_build:
            failure = (
                failure or f"{ids} {'are' if batch else 'is'} still in {', '.join(held)}: see the verification above"
            )
        else:
            click.echo(
                f"the dbt-built tables and the serving file still hold {ids} (--no-build): run "
                "`feedback-analytics build`, then forget again so that no file holds any of their bytes",
                err=True,
            )
    if failure:
        raise UserError(failure)


@click.command("nightly")
@click.option(
    "--config",
    "config_file",
    # read and checked whole before any step (check_nightly_config): one line for every reason it cannot be used
    type=click.Path(readable=False, path_type=Path),
    help="Sources to ingest, the [purge] settings and the [alerts] channels (TOML); checked before any step runs.",
)
@click.option(
    "--as-of", "as_of", default=None, help="Purge and build as of this date or ISO-8601 timestamp (default: now, UTC)."
)
@click.option("--log-file", type=click.Path(dir_okay=False, path_type=Path), help="Default: <db>.nightly.log.")
@click.option("--verbose", "-v", is_flag=True, help="Also show dbt's output live (it always goes to the log file).")
@full_tests_option
@archive_option
@target_option
@db_option
def nightly(
    config_file: Path | None,
    as_of: str | None,
    log_file: Path | None,
    verbose: bool,
    full_tests: bool,
    archive_dir: Path | None,
    target: str | None,
    db: str | None,
) -> None:
    """Ingest every configured source, purge, build, deliver alerts ([alerts]): one lock, one summary line per
    step, a log file. The alerts step runs last, also after a failed step (on the last published marts).

    Exit codes: 0 every step ok, 1 a step failed, 2 a usage error (a bad option, a missing, unreadable or invalid
    --config: nothing ran), 75 skipped because another nightly run holds the lock (EX_TEMPFAIL)."""
    instant = parse_cli_as_of(as_of)
    warehouse = warehouse_of(db)
    path = warehouse.path
    if config_file is not None:
        check_nightly_config(config_file)
    failed = run_nightly(
        path,
        config_file,
        instant,
        log_file,
        archive_dir,
        ingest=lambda: ingest_configured_sources(path, config_file, instant.instant),
        alerts=lambda logger: nightly_alerts_step(warehouse, config_file, logger),
        verbose=verbose,
        target=target,
        full_tests=full_tests,
    )
    if failed:
        raise UserError(f"nightly step(s) failed: {', '.join(failed)} (see the log)")


def check_nightly_config(config_file: Path) -> None:
    """The whole config (its sources for ingest, its [purge] table) read before any step, lock or log file: a
    missing, unreadable or invalid file is a usage error (exit 2) and the run does nothing at all, rather than
    failing its ingest and purge and still building."""
    try:
        read_config(config_file)
        read_purge_settings(config_file)
    except UserError as exc:
        raise UserError(f"{exc} (nightly: nothing ran)", exit_code=2) from None
