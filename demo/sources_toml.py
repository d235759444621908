"""OUT/sources.toml: a ready `feedback-analytics ingest --config` file naming every source the demo wrote.

TOML, paths relative to the file's folder; the reactions export is listed only when it was
written. The PostgreSQL entry is a comment: a DSN comes from an environment variable, never
from the file.
"""

from __future__ import annotations

from pathlib import Path


def write_sources_toml(path: Path, *, reactions_export: bool) -> None:
    export = (
        "\n# Older reactions, exported as JSON lines (one envelope per line):\n"
        '[[reactions]]\npath = "reactions/reactions_export.jsonl"\n'
        if reactions_export
        else ""
    )
    path.write_text(
        f"""\
# Sources of the demo data set, written by `feedback-analytics demo-data`.
# Load everything with: feedback-analytics ingest --config <this file>
# Paths are relative to the folder of this file.

# Analyzer store: the active feedback.jsonl plus archive/feedback-YYYYMMDD.jsonl
[[analyzer]]
path = "analyzer/feedback-store"

# Session feedback: the legacy SQLite file (older records) ...
[[session_feedback]]
path = "session-feedback/session_feedback.sqlite3"

# ... and the JSON-lines export (newer records; a few hundred overlap, same id)
[[session_feedback]]
path = "session-feedback/session_feedback_export.jsonl"

# A PostgreSQL source takes its DSN from an environment variable, never from this file:
# [[session_feedback]]
# postgres_dsn_env = "SESSION_FEEDBACK_PG_DSN"

# Turn reactions: one JSON blob per artifact, <tenant>/<project>/<conversation>/<file>.json
[[reactions]]
path = "reactions/blobs"
{export}
# Workspace: feedback.jsonl, sessions.jsonl (golden sessions and replays), eval_runs.jsonl
[[workspace]]
path = "workspace"
""",
        encoding="utf-8",
    )
