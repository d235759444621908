"""Which build the warehouse's marts come from, readable without opening the warehouse file.

Every successful dbt build of the DuckDB warehouse (ours or a plain `dbt build`: the dbt-duckdb plugin
operations/dbt_plugin.py, called from the project's `on-run-end` hook) records its dbt invocation id, when it
finished and its as-of in a small private file beside the warehouse (`<stem>.build.json`), and only then
publishes; the serving file's `serving.publish_info.build_id` names the build it was published from. A
reader (dashboard, `report`, `export`) compares the two: when they differ, a newer build than the one it
shows exists (its publish failed, was killed, or a path built without publishing) and `publish_hint` says
how to publish it. A writer may hold the warehouse meanwhile: this file is read, never the warehouse.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path

from warehouse.private_files import install, temporary_beside

SUFFIX = ".build.json"


@dataclass(frozen=True)
class BuildRecord:
    build_id: str
    finished_at: dt.datetime | None
    as_of: str | None


def record_path(db: str | os.PathLike[str]) -> Path:
    """`<stem>.build.json` beside the warehouse file."""
    path = Path(db)
    stem = path.name[: -len(".duckdb")] if path.name.endswith(".duckdb") else path.name
    return path.with_name(stem + SUFFIX)


def record_build(db: str | os.PathLike[str], build_id: str, as_of: str | None) -> BuildRecord:
    """Record a build whose marts the warehouse now holds (written under a temporary name, then renamed)."""
    finished = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    final = record_path(db)
    temporary = temporary_beside(final, "recording")
    try:
        temporary.write_text(
            json.dumps({"build_id": build_id, "finished_at": finished.isoformat(), "as_of": as_of or None}) + "\n",
            encoding="utf-8",
        )
        install(temporary, final)
    finally:
        temporary.unlink(missing_ok=True)
    return BuildRecord(build_id, finished, as_of or None)


def last_build(db: str | os.PathLike[str]) -> BuildRecord | None:
    """The last recorded build, or None (none recorded, or an unreadable record)."""
    try:
        data = json.loads(record_path(db).read_text(encoding="utf-8"))
        finished = data.get("finished_at")
        return BuildRecord(
            str(data["build_id"]),
            dt.datetime.fromisoformat(finished) if isinstance(finished, str) else None,
            data.get("as_of") if isinstance(data.get("as_of"), str) else None,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def unpublished_build(db: str | os.PathLike[str], published_build_id: str | None) -> BuildRecord | None:
    """The recorded build when the serving file was not published from it (a newer build exists), else None."""
    record = last_build(db)
    return record if record is not None and record.build_id != published_build_id else None


def publish_hint(db: str | os.PathLike[str]) -> str:
    """The one command that publishes the warehouse's marts."""
    return f"feedback-analytics publish --db {Path(db)}"


def unpublished_message(db: str | os.PathLike[str], record: BuildRecord, *, with_path: bool = True) -> str:
    """One sentence for readers: a newer build exists than what they show, and how to publish it
    (`with_path=False`: the command without the warehouse's path, for pages that show no file paths)."""
    when = f" (finished {record.finished_at:%Y-%m-%d %H:%M} UTC)" if record.finished_at else ""
    command = publish_hint(db) if with_path else "feedback-analytics publish --db WAREHOUSE_FILE"
    return (
        f"A newer build of the warehouse exists{when} than the one shown here: it is not published yet. "
        f"Whoever runs the builds publishes it with `{command}`."
    )
