"""`feedback-analytics nightly`: ingest every configured source, purge, build, alerts; made to run unattended.

- One lock (`<warehouse>.nightly.lock`, an flock): a second run started while
  one is going does nothing and exits at once with EX_TEMPFAIL (75) and one
  line saying it was skipped (also in the log file), so that cron tells a
  skipped run from a failed one (1).
- The build publishes the marts to the serving file the dashboard reads
  (operations/serving.py) when it succeeds, and nothing when it fails.
- Every step runs even when an earlier one failed, because each is safe on
  its own (a load is atomic, a purge policy is atomic, a build reads what is
  there); the run then exits 1. One summary line per step, with counts and
  durations, to stdout and to the log file.
- Each run that took the lock is a row of raw.nightly_runs (operations/nightly_runs.py): `running`, its failed
  steps as they fail, then `ok` or `failed`; the alert rule nightly_failed reads it (docs/alerts.md).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TextIO

from operations.nightly_runs import NightlyRunRecord
from operations.retention import DEFAULT_MAX_SHARE, Purge, default_archive_dir, read_policies, read_purge_settings
from operations.targets import build_on_target
from warehouse.as_of import ReportInstant
from warehouse.connection import connect
from warehouse.errors import UserError
from warehouse.printable import printable
from warehouse.private_files import open_private

# sysexits.h: "temporary failure; the user is invited to retry" (os.EX_TEMPFAIL on Unix)
EX_TEMPFAIL = 75


class NightlySkipped(UserError):
    """Another nightly run holds the lock: this one did nothing (exit EX_TEMPFAIL, not a failure)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=EX_TEMPFAIL)


@dataclass
class StepResult:
    name: str
    ok: bool
    summary: str
    seconds: float


@contextmanager
def nightly_lock(db: Path) -> Iterator[Path]:
    """Hold `<db>.nightly.lock` for the run; fail at once if another run holds it."""
    lock_path = db.resolve().with_name(db.name + ".nightly.lock")
    handle = open(open_private(lock_path), "a+")  # noqa: SIM115 (held for the run, closed below)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise NightlySkipped(
            f"nightly skipped: another nightly run is in progress on {db} ({holder}, lock {lock_path}); "
            f"this run did nothing and exits {EX_TEMPFAIL} (EX_TEMPFAIL): the next run will do the work"
        ) from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} since {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S} UTC\n")
        handle.flush()
        yield lock_path
    finally:
        handle.seek(0)
        handle.truncate()
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


DETAIL = {"detail": True}  # `extra` of a record meant for the log file only (unless --verbose)


ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None]


class PrintableFormatter(logging.Formatter):
    """Every value put into a message (file names, upstream text, error messages) with its control characters
    shown as escapes (warehouse/printable.py): one record is one line that starts with its time and level."""

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.args, tuple):
            record.args = tuple(printable(arg) if isinstance(arg, str | Path) else arg for arg in record.args)
        record.msg = printable(record.msg) if not isinstance(record.msg, str) else record.msg
        return super().format(record)

    def formatException(self, ei: ExcInfo) -> str:  # noqa: N802 (logging's name)
        """A traceback keeps its lines, indented under the record; the text in them is escaped."""
        return "\n".join("    " + printable(line) for line in super().formatException(ei).splitlines())


class PrivateFileHandler(logging.FileHandler):
    """The log file created readable by its owner only (warehouse/private_files.py), never through a symlink."""

    def _open(self) -> TextIO:
        return open(open_private(Path(self.baseFilename)), "a", encoding=self.encoding, errors=self.errors)


def logger_for(log_file: Path, verbose: bool = False) -> logging.Logger:
    """Summary lines to stdout and the log file; detail (dbt's output) to the log file only."""
    logger = logging.getLogger("feedback_analytics.nightly")
    logger.handlers.clear()
    logger.setLevel(logging.INFO)
    logger.propagate = False
    formatter = PrintableFormatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%dT%H:%M:%SZ")
    formatter.converter = time.gmtime
    to_stdout, to_file = logging.StreamHandler(sys.stdout), PrivateFileHandler(log_file, encoding="utf-8")
    to_stdout.addFilter(lambda record: not getattr(record, "detail", False))
    for handler in (to_stdout, to_file):
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    return logger


def run_step(name: str, work: Callable[[], str], logger: logging.Logger) -> StepResult:
    """Run one step; a failure is logged and reported, never raised."""
    started = time.perf_counter()
    try:
        summary = work()
        ok = True
    except UserError as exc:
        summary, ok = f"failed: {exc}", False
    except Exception as exc:  # an unattended job reports and goes on to the next safe step
        logger.exception("%s: unexpected error", name, extra=DETAIL)
        summary, ok = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", False
    seconds = time.perf_counter() - started
    result = StepResult(name, ok, summary, seconds)
    (logger.info if ok else logger.error)("%-7s %s (%.1f s)", name, summary, seconds)
    return result


def _purge_step(db: Path, day: dt.date, archive_dir: Path | None, config_file: Path | None) -> str:
    settings = read_purge_settings(config_file)
    con = connect(db)
    try:
        results = Purge(
            con,
            day,
            archive_dir or default_archive_dir(db),
            dry_run=False,
            max_share=DEFAULT_MAX_SHARE if settings.max_share is None else settings.max_share,
            confirmed=settings.confirmed,
        ).run(read_policies())
    finally:
        con.close()
    return (
        f"{len(results)} policies: moved {sum(r.archived for r in results):,} to the archive, "
        f"deleted {sum(r.deleted for r in results):,} from the tables "
        f"and {sum(r.deleted_from_archive for r in results):,} from the archive"
    )


def _build_step(
    db: Path, as_of: ReportInstant, logger: logging.Logger, verbose: bool, target: str | None, full_tests: bool
) -> str:
    """The build, dbt's lines to the log file as they come (and to stdout with --verbose); the summary from the
    build's result. The large models' data tests read the new loads, every row with `full_tests`
    (operations/data_test_scope.py)."""

    def sink(line: str) -> None:  # one record per line: each starts with the time and level
        if line.strip():
            logger.info("dbt: %s", line.rstrip("\n"), extra=DETAIL)
        if verbose:
            sys.stdout.write(line)
            sys.stdout.flush()

    logger.info("dbt output:", extra=DETAIL)
    result = build_on_target(db, as_of, sink=sink, target=target, full_tests=full_tests)
    if not result.ok:
        raise UserError(f"dbt build exited {result.code}: {result.summary} (nothing published)")
    done = result.published
    return result.summary + (
        f"; published {done.relations} marts ({done.rows:,} rows)" if done and done.relations else ""
    )


def run_nightly(
    db: Path,
    config_file: Path | None,
    as_of: ReportInstant,
    log_file: Path | None,
    archive_dir: Path | None,
    *,
    ingest: Callable[[], str],
    verbose: bool = False,
    target: str | None = None,
    alerts: Callable[[logging.Logger], str] | None = None,
    full_tests: bool = False,
) -> list[str]:
    """Ingest, purge, build under the lock, all as of one instant; returns the names of the steps that failed.

    `ingest` loads every source the config names and returns its summary line (the command line passes
    ingest's `ingest_configured_sources`: operations do not reach into ingest). `alerts`, when given, is the last
    step: it delivers the alert marts' state changes (operations/alerts/run.py, `nightly_alerts_step`) and
    returns its summary line, raising a UserError when a delivery failed; it never undoes a data step.
    `full_tests`: the build's data tests read every row, not only the new loads' (the weekly run)."""
    log_path = log_file or db.resolve().with_name(db.name + ".nightly.log")
    with ExitStack() as held:
        try:
            held.enter_context(nightly_lock(db))
        except NightlySkipped as skipped:
            logger = logger_for(log_path)  # the log file says so too: "what did last night's run do?"
            logger.warning("%s", skipped, extra=DETAIL)  # the CLI prints the error line: not twice on a terminal
            for handler in logger.handlers:
                handler.close()
            raise
        logger = logger_for(log_path)
        logger.info(
            "nightly run on %s as of %s, data tests on %s",
            db,
            as_of,
            "every row" if full_tests else "the new loads",
            extra=DETAIL,
        )
        started = time.perf_counter()
        record = NightlyRunRecord(db, as_of, logger)  # raw.nightly_runs (operations/nightly_runs.py)
        record.start()
        steps = [
            record.step(run_step("ingest", ingest, logger)),
            record.step(run_step("purge", lambda: _purge_step(db, as_of.day, archive_dir, config_file), logger)),
            record.step(run_step("build", lambda: _build_step(db, as_of, logger, verbose, target, full_tests), logger)),
        ]
        if alerts is not None:  # last, also after a failed step: on the last published serving file
            steps.append(run_step("alerts", lambda: alerts(logger), logger))
        failed = [step.name for step in steps if not step.ok]
        record.finish(failed)
        logger.info(
            "nightly %s in %.1f s", "failed: " + ", ".join(failed) if failed else "ok", time.perf_counter() - started
        )
        for handler in logger.handlers:
            handler.close()
    return failed
