"""One reader per source family: where its data lives and how it reaches `ingest.load`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from ingest.load import LoadOptions, LoadResult
from ingest.progress import LoadProgress
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
) -> list[LoadResult]:
    """Land one source family from a path and/or a PostgreSQL DSN (a config section's entry); `schemas` narrows
    the reaction index to those schemas; `observed_at` is the instant the run stands for (LoadOptions)."""
    from ingest.sources.analyzer import ingest_analyzer
    from ingest.sources.reactions import ingest_reactions
    from ingest.sources.session_feedback import ingest_session_feedback
    from ingest.sources.workspace import ingest_workspace

    if section == "analyzer":
        options = LoadOptions(blank_fields=("user_message_snippet",) if no_snippets else ())
        return ingest_analyzer(con, [path], options, progress)
    if section == "reactions":
        return ingest_reactions(con, path, dsn, LoadOptions(observed_at=observed_at), progress, list(schemas) or None)
    readers = {
        "session_feedback": ingest_session_feedback,
        "workspace": ingest_workspace,
    }
    return readers[section](con, path, dsn, LoadOptions(), progress)


def ingest_configured_sources(db: Path, config_file: Path | None, observed_at: datetime | None = None) -> str:
    """Every source a config file names, unattended (the nightly's ingest step, `observed_at` its as_of): each
    load is atomic and a failing source does not stop the others; returns the summary line, or raises it with
    the failures."""
    from ingest.config import read_config
    from ingest.load import unusable_inputs
    from warehouse.connection import connect

    if config_file is None:
        return "skipped: no --config given"
    entries = read_config(config_file)
    results, failures = [], []
    con = connect(db)
    try:
        for entry in entries:  # each load is atomic: a failing source does not stop the others
            try:
                loaded = ingest_source(
                    con,
                    entry.section,
                    entry.path,
                    entry.postgres_dsn,
                    entry.no_snippets,
                    LoadProgress(enabled=False),
                    entry.schemas,
                    observed_at,
                )
            except UserError as exc:
                failures.append(f"{entry.section}: {exc}")
                continue
            results += loaded
            failures += [f"{entry.section}: {line}" for line in unusable_inputs(con, loaded)]
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
        raise UserError(counts + "; " + "; ".join(failures))
    return counts
