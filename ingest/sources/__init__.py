"""One reader per source family: where its data lives and how it reaches `ingest.load`."""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import Any

from ingest.config import SourceEntry, read_config
from ingest.line_limits import LineLimits
from ingest.load import LoadOptions, LoadResult, unusable_inputs
from ingest.progress import LoadProgress
from ingest.sources.analyzer import ingest_analyzer
from ingest.sources.reactions import ingest_reactions
from ingest.sources.session_feedback import ingest_session_feedback
from ingest.sources.workspace import ingest_workspace
from warehouse.connection import connect
from warehouse.errors import UserError


def ingest_source(
    con: Any,
    section: str,
    path: Path | None,
    dsn: str | None,
    no_snippets: bool,
    progress: LoadProgress,
    schemas: tuple[str, ...] = (),
    observed_at: datetime | None = None,
    limits: LineLimits | None = None,
) -> list[LoadResult]:
    """Land one source family from a path and/or a PostgreSQL DSN (a config section's entry); `schemas` narrows
    the reaction index to those schemas; `observed_at` is the instant the run stands for, `limits` the bounds of
    a JSON-lines line (LoadOptions)."""
    limits = limits or LineLimits()
    if section == "analyzer":
        options = LoadOptions(blank_fields=("user_message_snippet",) if no_snippets else (), limits=limits)
        return ingest_analyzer(con, [path], options, progress)
    if section == "reactions":
        return ingest_reactions(
            con, path, dsn, LoadOptions(observed_at=observed_at, limits=limits), progress, list(schemas) or None
        )
    readers = {
        "session_feedback": ingest_session_feedback,
        "workspace": ingest_workspace,
    }
    return readers[section](con, path, dsn, LoadOptions(limits=limits), progress)


def ingest_entries(
    con: Any, entries: list[SourceEntry], progress: LoadProgress, observed_at: datetime | None = None
) -> tuple[list[LoadResult], list[str]]:
    """Every source of a config, each on its own: one that fails (a one-line error, or anything unexpected:
    its load in progress rolled back) is named among the failures, and the sources after it still load."""
    results: list[LoadResult] = []
    failures: list[str] = []
    for entry in entries:
        if entry.problem:
            failures.append(f"{entry.name}: {entry.problem}")
            continue
        try:
            results += ingest_source(
                con,
                entry.section,
                entry.path,
                entry.postgres_dsn,
                entry.no_snippets,
                progress,
                entry.schemas,
                observed_at,
                entry.limits,
            )
        except UserError as exc:
            failures.append(f"{entry.name}: {exc}")
        except Exception as exc:  # noqa: BLE001 - one source's failure, whatever it is, must not stop the others
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            failures.append(f"{entry.name}: failed: {type(exc).__name__}: {first}")
            with suppress(Exception):
                con.execute("rollback")  # a transaction the failure left open (none: DuckDB says so)
    return results, failures


def ingest_configured_sources(db: Path, config_file: Path | None, observed_at: datetime | None = None) -> str:
    """Every source a config file names, unattended (the nightly's ingest step, `observed_at` its as_of): each
    load is atomic and a failing source does not stop the others; returns the summary line, or raises it with
    the failures."""
    if config_file is None:
        return "skipped: no --config given"
    entries = read_config(config_file)
    con = connect(db)
    try:
        results, failures = ingest_entries(con, entries, LoadProgress(enabled=False), observed_at)
        failures += unusable_inputs(con, results)
    finally:
        con.close()
    counts = (
        f"{len(results)} input(s): read {sum(r.rows_read for r in results):,}, "
        f"landed {sum(r.loaded for r in results):,}, quarantined {sum(r.quarantined for r in results):,}, "
        f"duplicates {sum(r.duplicates for r in results):,}, {sum(r.skipped for r in results)} unchanged"
    )
    symlinks = sum(r.symlinks_skipped for r in results)
    if symlinks:
        counts += f", {symlinks} symlink(s) skipped (not followed)"
    if failures:
        raise UserError(counts + "; failed: " + "; ".join(failures))
    return counts
