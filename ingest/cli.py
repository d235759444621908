"""The `feedback-analytics` command line (also `python -m ingest`).

Exit codes: 0 success (a run that quarantined rows too: it says how many and
where to look), 1 failure, 2 usage error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ingest.load import LoadResult
from ingest.progress import LoadProgress
from warehouse.as_of import AsOfError, ReportInstant, is_date_only, parse_as_of
from warehouse.connection import connect, refuse_what_is_no_warehouse, resolve_db_path
from warehouse.errors import UserError

PROJECT_DIR = Path(__file__).resolve().parents[1]

db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="DuckDB warehouse file (default: $FEEDBACK_DB, else ./feedback.duckdb).",
)
quiet_option = click.option("--quiet", "-q", is_flag=True, help="Print only the totals; no progress.")


def _parse_as_of(value: str | None, *, refuse_future: bool = True) -> ReportInstant:
    """`--as-of` as one UTC instant (warehouse/as_of.py): a date is the end of that day, None is now.

    A future instant is refused (build, purge, nightly): a mistyped year would purge every row, or write a
    future `computed_as_of` into the history rollups. A date counts as future only from the next UTC day on."""
    try:
        instant = parse_as_of(value)
    except AsOfError as exc:
        raise click.BadParameter(str(exc), param_hint="--as-of") from None
    now = parse_as_of(None)
    if refuse_future and value is not None and (instant.day > now.day if is_date_only(value) else instant > now):
        raise UserError(
            f"--as-of {value} is later than now ({now.instant:%Y-%m-%d %H:%M:%S} UTC): "
            "give a past or present date or time",
            exit_code=2,
        )
    return instant


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="feedback-analytics")
def cli() -> None:
    """Feedback Analytics: land AI-agent feedback in DuckDB, model it with dbt, read it in Streamlit."""


# -- demo data -----------------------------------------------------------------
@cli.command("demo-data")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed: same seed, same bytes.")
@click.option("--scale", type=float, default=1.0, show_default=True, help="Volume multiplier (100 = ~10M signals).")
@click.option("--as-of", "as_of", default=None, help="Last day of the history (default: today, UTC).")
@quiet_option
def demo_data(out_dir: Path, seed: int, scale: float, as_of: str | None, quiet: bool) -> None:
    """Write a realistic, deterministic demo data set in every upstream format, plus OUT_DIR/sources.toml."""
    from ingest.demo_data import generate

    if scale <= 0:
        raise click.BadParameter("must be greater than 0", param_hint="--scale")
    day = _parse_as_of(as_of, refuse_future=False).day
    say = (lambda _msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    counts = generate(out_dir, seed=seed, scale=scale, as_of=day, progress=say)
    total = sum(counts.values())
    click.echo(f"wrote {total:,} records to {out_dir} (as of {day}); load them with:")
    click.echo(f"  feedback-analytics ingest --config {out_dir / 'sources.toml'}")


# -- ingest ----------------------------------------------------------------------
def _report(results: list[LoadResult], db: Path, quiet: bool, elapsed: float, *, hint: bool = True) -> None:
    if not quiet:
        for r in results:
            if r.skipped:
                click.echo(f"{r.table:<22} {r.uri}: unchanged since its last load, skipped")
            elif r.rows_read == 0:
                click.echo(f"{r.table:<22} {r.uri}: empty, nothing to load")
            else:
                click.echo(
                    f"{r.table:<22} {r.uri}: read {r.rows_read:,}, landed {r.loaded:,}, "
                    f"quarantined {r.quarantined:,}, duplicates {r.duplicates:,} ({r.seconds:.1f} s)"
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
        + f" in {elapsed:.1f} s ({rate:,.0f} rows/s) into {db}"
    )
    if bad and hint:
        click.echo(
            f"{bad:,} row(s) quarantined: list them (file, line, reason) with {_quarantine_command(results, db)}",
            err=True,
        )


def _quarantine_command(results: list[LoadResult], db: Path) -> str:
    loads = [r.load_id for r in results if r.quarantined and r.load_id]
    return f"`feedback-analytics quarantine --db {db}" + (f" --load {loads[0]}`" if len(loads) == 1 else "`")


def _run_ingest(db: str | None, quiet: bool, work: Callable[..., list[LoadResult]]) -> None:
    import time

    from ingest.load import unusable_inputs

    parent = click.get_current_context().parent  # `ingest --db X analyzer ...` counts too
    if parent is not None and parent.info_name == "ingest":
        db = db or parent.params.get("db")
        quiet = quiet or bool(parent.params.get("quiet"))
    path = resolve_db_path(db)
    started = time.perf_counter()
    con = connect(path)
    try:
        with LoadProgress(enabled=None if not quiet else False) as progress:
            results = work(con, progress)
        unusable = unusable_inputs(con, results)
    finally:
        con.close()
    _report(results, path, quiet, time.perf_counter() - started, hint=not unusable)
    if unusable:
        raise UserError("; ".join(unusable) + f" (its rows are quarantined: {_quarantine_command(results, path)})")


@cli.group("ingest", invoke_without_command=True)
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
    from ingest.config import read_config

    entries = read_config(config_file)

    def work(con: Any, progress: LoadProgress) -> list[LoadResult]:
        results: list[LoadResult] = []
        for entry in entries:
            results.extend(_ingest_one(con, entry.section, entry.path, entry.postgres_dsn, entry.no_snippets, progress))
        return results

    _run_ingest(db, quiet, work)


def _ingest_one(
    con: Any, section: str, path: Path | None, dsn: str | None, no_snippets: bool, progress: LoadProgress
) -> list[LoadResult]:
    from ingest.sources import ingest_source

    return ingest_source(con, section, path, dsn, no_snippets, progress)


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


def _path_or_postgres(section: str, what: str) -> Callable[..., None]:
    @click.argument("path", required=False, type=click.Path(path_type=Path))
    @click.option("--postgres", "dsn", metavar="DSN", help="Read the PostgreSQL table(s) at this libpq DSN/URL.")
    @db_option
    @quiet_option
    def command(path: Path | None, dsn: str | None, db: str | None, quiet: bool) -> None:
        if path is None and dsn is None:
            raise click.UsageError(f"give a PATH ({what}) or --postgres DSN")
        if path is not None and dsn is not None:
            raise click.UsageError(f"give a PATH ({what}) or --postgres DSN, not both: run the command once for each")
        if path is not None and not path.exists():
            raise UserError(f"{section.replace('_', ' ')} path {path} does not exist: check the path ({what})")
        _run_ingest(db, quiet, lambda con, progress: _ingest_one(con, section, path, dsn, False, progress))

    return command


ingest.command(
    "session-feedback", help="Session feedback: legacy SQLite file or JSONL export; or PostgreSQL `session_feedback`."
)(_path_or_postgres("session_feedback", "a .sqlite3 file or a .jsonl export"))
ingest.command(
    "reactions", help="Turn reactions: folder of JSON blobs or JSONL export; or PostgreSQL `conv_messages`."
)(_path_or_postgres("reactions", "a folder of JSON blobs or a .jsonl export"))
ingest.command("workspace", help="Workspace feedback, sessions, eval_runs: JSONL exports; or PostgreSQL tables.")(
    _path_or_postgres("workspace", "a folder of feedback/sessions/eval_runs .jsonl exports")
)


@cli.command("quarantine")
@click.option("--load", "load_id", metavar="LOAD_ID", help="Only this load (its id, or the first characters of it).")
@click.option("--source", "source_uri", metavar="TEXT", help="Only files or tables whose uri contains this text.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many rows.")
@db_option
def quarantine(load_id: str | None, source_uri: str | None, limit: int, db: str | None) -> None:
    """List the quarantined rows (file, line or key, reason), newest first; the raw text stays in raw.quarantine."""
    path = resolve_db_path(db)
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
        click.echo("no quarantined rows" + (" match" if load_id or source_uri else "") + f" in {path}")
        return
    for load, uri, line, key, reason in rows:
        where = f"line {line}" if line is not None else f"key {key}" if key is not None else "-"
        click.echo(f"{load[:12]}  {uri}  {where}: {reason}")
    if total > len(rows):
        click.echo(f"... {total - len(rows):,} more (--limit to see them)", err=True)


# -- build ------------------------------------------------------------------------
@cli.command("build", context_settings={"ignore_unknown_options": True})
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
@db_option
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
def build(as_of: str | None, unit_tests: bool, db: str | None, dbt_args: tuple[str, ...]) -> None:
    """Run `dbt build` on the warehouse with the project's profile and vars (extra args go to dbt)."""
    from operations.build import build_showing_progress

    instant = _parse_as_of(as_of)
    path = resolve_db_path(db)
    if not path.exists():
        raise UserError(f"warehouse {path} does not exist: run `feedback-analytics ingest ...` first")
    refuse_what_is_no_warehouse(path)
    code = build_showing_progress(path, instant.dbt_var, list(dbt_args), unit_tests=unit_tests)
    if code != 0:
        raise UserError(f"dbt build failed (exit {code}): see the dbt output above")


# -- operations ---------------------------------------------------------------------
archive_option = click.option(
    "--archive-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where archived analyzer events go (default: $FEEDBACK_ARCHIVE_DIR, "
    "else <db name>-archive/analyzer_events/ beside the warehouse file).",
)


@cli.command("purge")
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
    from operations.retention import DEFAULT_MAX_SHARE, Purge, default_archive_dir, read_policies

    day = _parse_as_of(as_of).day
    path = resolve_db_path(db)
    if not path.exists():
        raise UserError(f"warehouse {path} does not exist: nothing to purge")
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


@cli.command("forget")
@click.option("--user-id", required=True, help="The user id to erase everywhere.")
@click.option("--dry-run", is_flag=True, help="Only count what would be erased.")
@click.option("--no-build", is_flag=True, help="Do not rebuild the marts afterwards.")
@db_option
def forget(user_id: str, dry_run: bool, no_build: bool, db: str | None) -> None:
    """Erase one user from every raw table and the analyzer archive, rebuild, rewrite the file so that none of
    the id's bytes remain, verify; audit by hash, never the id in clear (docs/operations.md)."""
    from operations.build import build_showing_progress, last_build_as_of
    from operations.erasure import describe_result, erase, rewrite_warehouse, verify
    from operations.retention import default_archive_dir

    if not user_id.strip():
        raise click.BadParameter("must not be empty", param_hint="--user-id")
    path = resolve_db_path(db)
    if not path.exists():
        raise UserError(f"warehouse {path} does not exist: nothing to erase")
    con = connect(path, read_only=dry_run)  # a dry run writes nothing
    try:
        result = erase(con, user_id, dry_run=dry_run, archive_dir=default_archive_dir(path))
    finally:
        con.close()
    for line in describe_result(result, dry_run=dry_run):
        click.echo(line)
    if result.matched_nothing:
        click.echo(
            f"no row matched the id {user_id!r}: nothing {'would be' if dry_run else 'was'} erased "
            "(ids match exactly, case included; check the id)"
        )
    if dry_run:
        click.echo(f"a real run records the request in raw.erasure_log as sha256 {result.user_id_sha256}")
    else:
        click.echo(f"request recorded in raw.erasure_log as sha256 {result.user_id_sha256}")
    failure = None
    if not dry_run and not no_build:  # also when nothing matched now: an earlier --no-build may have left models
        as_of = last_build_as_of(path)  # the report keeps its as-of: an erasure is no reason to move it
        click.echo(f"rebuilding the marts as of {as_of or 'now (no earlier build recorded)'}")
        code = build_showing_progress(path, as_of)
        if code != 0:
            failure = f"rows erased, but the rebuild failed (exit {code}): run `feedback-analytics build`, then forget"
    if dry_run:
        click.echo(f"would rewrite {path} ({path.stat().st_size:,} bytes) so that no freed block keeps erased bytes")
    else:
        rewrite = rewrite_warehouse(path)
        click.echo(
            f"rewrote {rewrite.path}: {rewrite.bytes_before:,} -> {rewrite.bytes_after:,} bytes in "
            f"{rewrite.seconds:.1f} s (a fresh copy: no freed block keeps erased bytes)"
        )
    remaining = verify(path, user_id, result.archive_files)
    click.echo("verification (every column and archive file decoded again in Python), rows still carrying the id:")
    for where, count in remaining.items():
        click.echo(f"  {where:<44} {count}")
    held = [where for where, count in remaining.items() if count]
    if not dry_run and held:
        if any(where.startswith(("raw.", "archive.")) for where in held) or not no_build:
            failure = failure or f"the id is still in {', '.join(held)}: see the verification above"
        else:
            click.echo(
                "the dbt-built tables still hold the id (--no-build): run `feedback-analytics build`, "
                "then forget again so that the rewritten file holds none of its bytes",
                err=True,
            )
    if failure:
        raise UserError(failure)


@cli.command("nightly")
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="Sources to ingest (TOML).")
@click.option(
    "--as-of", "as_of", default=None, help="Purge and build as of this date or ISO-8601 timestamp (default: now, UTC)."
)
@click.option("--log-file", type=click.Path(dir_okay=False, path_type=Path), help="Default: <db>.nightly.log.")
@click.option("--verbose", "-v", is_flag=True, help="Also show dbt's output live (it always goes to the log file).")
@archive_option
@db_option
def nightly(
    config_file: Path | None,
    as_of: str | None,
    log_file: Path | None,
    verbose: bool,
    archive_dir: Path | None,
    db: str | None,
) -> None:
    """Ingest every configured source, purge, build: one lock, one summary line per step, a log file."""
    from operations.nightly import run_nightly

    instant = _parse_as_of(as_of)
    path = resolve_db_path(db)
    failed = run_nightly(path, config_file, instant, log_file, archive_dir, verbose=verbose)
    if failed:
        raise UserError(f"nightly step(s) failed: {', '.join(failed)} (see the log)")


# -- dashboard ----------------------------------------------------------------------
@cli.command("dashboard")
@click.option("--port", type=int, default=8501, show_default=True, help="Port to serve the dashboard on.")
@db_option
def dashboard(port: int, db: str | None) -> None:
    """Start the Streamlit dashboard on the same DuckDB file (read-only, short-lived connections)."""
    path = resolve_db_path(db).resolve()
    env = {
        **os.environ,
        "FEEDBACK_DB": str(path),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_DIR), os.environ.get("PYTHONPATH")])),
    }
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(PROJECT_DIR / "dashboards" / "app.py"),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        "viewer",
    ]
    click.echo(f"dashboard on http://localhost:{port} (warehouse {path}); stop it with Ctrl-C", err=True)
    # replace this process: a scheduler's SIGTERM then reaches Streamlit itself, leaving no orphan
    os.execve(sys.executable, command, env)


def main() -> None:
    try:
        code = cli.main(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except UserError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted: the load in progress was rolled back", err=True)
        sys.exit(130)
    sys.exit(0)
