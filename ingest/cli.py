"""The `feedback-analytics` command line (also `python -m ingest`).

Exit codes: 0 success (a run that quarantined rows too: it says how many and
where to look), 1 failure, 2 usage error.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ingest.errors import UserError
from ingest.load import LoadResult
from ingest.progress import LoadProgress
from ingest.warehouse import connect, resolve_db_path

PROJECT_DIR = Path(__file__).resolve().parents[1]

db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="DuckDB warehouse file (default: $FEEDBACK_DB, else ./feedback.duckdb).",
)
quiet_option = click.option("--quiet", "-q", is_flag=True, help="Print only the totals; no progress.")


def _parse_as_of(value: str | None) -> str | None:
    """Accept a date or an ISO timestamp; return it normalised for dbt."""
    if value is None:
        return None
    try:
        if len(value) == 10:
            return dt.date.fromisoformat(value).isoformat()
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).isoformat()
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD) or an ISO-8601 timestamp") from None


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
    day = dt.date.fromisoformat(_parse_as_of(as_of)[:10]) if as_of else dt.datetime.now(dt.UTC).date()
    say = (lambda _msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    counts = generate(out_dir, seed=seed, scale=scale, as_of=day, progress=say)
    total = sum(counts.values())
    click.echo(f"wrote {total:,} records to {out_dir} (as of {day}); load them with:")
    click.echo(f"  feedback-analytics ingest --config {out_dir / 'sources.toml'}")


# -- ingest ----------------------------------------------------------------------
def _report(results: list[LoadResult], db: Path, quiet: bool, elapsed: float) -> None:
    if not quiet:
        for r in results:
            if r.skipped:
                click.echo(f"{r.table:<22} {r.uri}: unchanged since its last load, skipped")
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
    if bad:
        click.echo(
            f"{bad:,} row(s) quarantined: see them with "
            f'duckdb {db} "select source_uri, line_number, reason from raw.quarantine order by quarantined_at desc"',
            err=True,
        )


def _run_ingest(db: str | None, quiet: bool, work: Callable[..., list[LoadResult]]) -> None:
    import time

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
    finally:
        con.close()
    _report(results, path, quiet, time.perf_counter() - started)


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


# -- build ------------------------------------------------------------------------
@cli.command("build", context_settings={"ignore_unknown_options": True})
@click.option("--as-of", "as_of", default=None, help="Report as of this date or ISO timestamp (default: now).")
@click.option(
    "--unit-tests/--no-unit-tests",
    default=False,
    help="Also run the dbt unit tests (they check the SQL on fixed rows, not the data; the test suite runs them).",
)
@db_option
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
def build(as_of: str | None, unit_tests: bool, db: str | None, dbt_args: tuple[str, ...]) -> None:
    """Run `dbt build` on the warehouse with the project's profile and vars (extra args go to dbt)."""
    from operations.build import dbt_build

    path = resolve_db_path(db)
    if not path.exists():
        raise UserError(f"warehouse {path} does not exist: run `feedback-analytics ingest ...` first")
    code, _ = dbt_build(path, _parse_as_of(as_of), list(dbt_args), unit_tests=unit_tests)
    if code != 0:
        raise UserError(f"dbt build failed (exit {code}): see the dbt output above")


# -- operations ---------------------------------------------------------------------
def _as_of_day(as_of: str | None) -> dt.date:
    parsed = _parse_as_of(as_of)
    return dt.date.fromisoformat(parsed[:10]) if parsed else dt.datetime.now(dt.UTC).date()


archive_option = click.option(
    "--archive-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where archived analyzer events go (default: $FEEDBACK_ARCHIVE_DIR, else <db>-archive/ beside the warehouse).",
)


def _purge(con: Any, db: Path, day: dt.date, archive_dir: Path | None, dry_run: bool) -> list[Any]:
    from operations.retention import Purge, default_archive_dir, read_policies

    return Purge(con, day, archive_dir or default_archive_dir(db), dry_run).run(read_policies())


@cli.command("purge")
@click.option("--as-of", "as_of", default=None, help="Apply the policies as of this day (default: today, UTC).")
@click.option("--dry-run", is_flag=True, help="Only print what each policy would archive and delete.")
@archive_option
@db_option
def purge(as_of: str | None, dry_run: bool, archive_dir: Path | None, db: str | None) -> None:
    """Apply the retention policies (seeds/retention_policies.csv) to the raw tables."""
    path = resolve_db_path(db)
    if not path.exists():
        raise UserError(f"warehouse {path} does not exist: nothing to purge")
    con = connect(path)
    try:
        results = _purge(con, path, _as_of_day(as_of), archive_dir, dry_run)
    finally:
        con.close()
    archived, deleted = ("would archive", "would delete") if dry_run else ("archived", "deleted")
    for r in results:
        cutoff = "never purged" if r.cutoff is None else f"before {r.cutoff}"
        where = f" -> {r.archive_uri}" if r.archive_uri else ""
        click.echo(
            f"{r.policy:<24} raw.{r.table:<20} {cutoff:<18} {archived} {r.archived:,}, {deleted} {r.deleted:,}{where}"
        )


@cli.command("forget")
@click.option("--user-id", required=True, help="The user id to erase everywhere.")
@click.option("--dry-run", is_flag=True, help="Only count what would be erased.")
@click.option("--no-build", is_flag=True, help="Do not rebuild the marts afterwards.")
@db_option
def forget(user_id: str, dry_run: bool, no_build: bool, db: str | None) -> None:
    """Erase one user's rows from every raw table, then rebuild; audit by hash, never the id in clear."""
    from operations.build import dbt_build
    from operations.erasure import forget as erase

    path = resolve_db_path(db)
    if not path.exists():
        raise UserError(f"warehouse {path} does not exist: nothing to erase")
    con = connect(path)
    try:
        result = erase(con, user_id, dry_run=dry_run)
    finally:
        con.close()
    verb = "would delete" if dry_run else "deleted"
    for table, count in result.deleted.items():
        click.echo(f"{table:<24} {verb} {count:,}")
    for table, count in result.pseudonymised.items():
        click.echo(f"{table:<24} {'would remove' if dry_run else 'removed'} the id from {count:,} reviewed row(s)")
    click.echo(f"request recorded in raw.erasure_log as sha256 {result.user_id_sha256}")
    if not dry_run and not no_build:
        code, _ = dbt_build(path, None)
        if code != 0:
            raise UserError(f"rows erased, but the rebuild failed (exit {code}): run `feedback-analytics build`")
    click.echo("verification, rows still carrying the id:")
    for where, count in result.remaining.items():
        click.echo(f"  {where:<40} {count}")


@cli.command("nightly")
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="Sources to ingest (TOML).")
@click.option("--as-of", "as_of", default=None, help="Purge and build as of this day (default: today, UTC).")
@click.option("--log-file", type=click.Path(dir_okay=False, path_type=Path), help="Default: <db>.nightly.log.")
@archive_option
@db_option
def nightly(
    config_file: Path | None, as_of: str | None, log_file: Path | None, archive_dir: Path | None, db: str | None
) -> None:
    """Ingest every configured source, purge, build: one lock, one summary line per step, a log file."""
    from operations.nightly import run_nightly

    path = resolve_db_path(db)
    failed = run_nightly(path, config_file, _as_of_day(as_of), log_file, archive_dir)
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
