"""OUT/sources.toml: a ready `feedback-analytics ingest --config` file naming every source the demo wrote.

TOML, paths relative to the file's folder; the reactions export is listed only when it was
written. The PostgreSQL entry is a comment: a DSN comes from an environment variable, never
from the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

HEADER = """\
# Sources of the demo data set, written by `feedback-analytics demo-data`.
# Load everything with: feedback-analytics ingest --config <this file>
# Paths are relative to the folder of this file.
"""

SECTIONS = {
    "analyzer": """
# Analyzer store: the active feedback.jsonl plus archive/feedback-YYYYMMDD.jsonl
[[analyzer]]
path = "analyzer/feedback-store"
""",
    "session_feedback": """
# Session feedback: the legacy SQLite file (older records) ...
[[session_feedback]]
path = "session-feedback/session_feedback.sqlite3"

# ... and the JSON-lines export (newer records; a few hundred overlap, same id)
[[session_feedback]]
path = "session-feedback/session_feedback_export.jsonl"

# A PostgreSQL source takes its DSN from an environment variable, never from this file:
# [[session_feedback]]
# postgres_dsn_env = "SESSION_FEEDBACK_PG_DSN"
""",
    "reactions": """
# Turn reactions: one JSON blob per artifact, <tenant>/<project>/<conversation>/<file>.json
[[reactions]]
path = "reactions/blobs"
""",
    "workspace": """
# Workspace: feedback.jsonl, sessions.jsonl (golden sessions and replays), eval_runs.jsonl
[[workspace]]
path = "workspace"
""",
}
REACTIONS_EXPORT = """
# Older reactions, exported as JSON lines (one envelope per line):
[[reactions]]
path = "reactions/reactions_export.jsonl"
"""


def write_sources_toml(path: Path, *, reactions_export: bool, sources: Iterable[str] = tuple(SECTIONS)) -> None:
    """The file naming `sources` (keys of SECTIONS, written in SECTIONS' order)."""
    chosen = set(sources)
    text = HEADER
    for name, section in SECTIONS.items():
        if name in chosen:
            text += section + (REACTIONS_EXPORT if name == "reactions" and reactions_export else "")
    path.write_text(text, encoding="utf-8")
