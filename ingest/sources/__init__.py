"""One reader per source family: where its data lives and how it reaches `ingest.load`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingest.load import LoadOptions, LoadResult
from ingest.progress import LoadProgress


def ingest_source(
    con: Any,
    section: str,
    path: Path | None,
    dsn: str | None,
    no_snippets: bool,
    progress: LoadProgress,
) -> list[LoadResult]:
    """Land one source family from a path and/or a PostgreSQL DSN (a config section's entry)."""
    from ingest.sources.analyzer import ingest_analyzer
    from ingest.sources.reactions import ingest_reactions
    from ingest.sources.session_feedback import ingest_session_feedback
    from ingest.sources.workspace import ingest_workspace

    if section == "analyzer":
        options = LoadOptions(blank_fields=("user_message_snippet",) if no_snippets else ())
        return ingest_analyzer(con, [path], options, progress)
    readers = {
        "session_feedback": ingest_session_feedback,
        "reactions": ingest_reactions,
        "workspace": ingest_workspace,
    }
    return readers[section](con, path, dsn, LoadOptions(), progress)
