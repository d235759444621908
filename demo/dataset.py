"""The whole demo data set: every source under OUT, then OUT/sources.toml (`generate`).

The layout of OUT is in the package's docstring (`demo/__init__.py`); each source's module
says what it writes. Sources are written in a fixed order, each from its own random stream.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from demo.analyzer import write_analyzer_store
from demo.common import Progress, TimeFrame, connect, stream
from demo.reactions import write_reactions
from demo.session_feedback import write_session_feedback
from demo.sources_toml import write_sources_toml
from demo.workspace import write_workspace

HISTORY_DAYS = 200
# the sources `generate` writes, in its order; each from its own random stream, so writing one alone gives the
# same bytes as writing it among all (bench/scale.py generates and ingests one at a time)
SOURCES = ("analyzer", "session_feedback", "reactions", "workspace")

# Volumes at scale 1 (scaled linearly, with small floors so tiny scales stay meaningful).
BASE_VOLUMES: dict[str, int] = {
    "analyzer_events": 50_000,
    "session_feedback": 20_000,
    "turn_reactions": 25_000,
    "workspace_feedback": 5_000,
    "workspace_sessions": 3_000,
}
MIN_VOLUMES: dict[str, int] = {
    "analyzer_events": 600,
    "session_feedback": 800,
    "turn_reactions": 300,
    "workspace_feedback": 100,
    "workspace_sessions": 60,
}


def _volumes(scale: float, days: int = HISTORY_DAYS) -> dict[str, int]:
    share = scale * days / HISTORY_DAYS  # the volumes are those of the whole history
    return {name: max(MIN_VOLUMES[name], round(base * share)) for name, base in BASE_VOLUMES.items()}


def generate(
    out_dir: Path,
    *,
    seed: int = 42,
    scale: float = 1.0,
    as_of: dt.date,
    days: int = HISTORY_DAYS,
    progress: Progress | None = None,
    sources: tuple[str, ...] = SOURCES,
) -> dict[str, int]:
    """Write every source under out_dir plus out_dir/sources.toml; return counts per source.

    `days` below HISTORY_DAYS writes only the last `days` days, at the history's daily volume: new data
    for a warehouse that holds the days before (a nightly run's input). Give it another `seed`, or its
    records repeat the first ones of that seed and the ingest counts them as duplicates.

    `sources` (some of SOURCES) writes only those, byte for byte as among all, and a sources.toml naming them.

    Counts are clean records after deduplication (bad records excluded), keyed
    analyzer_events, session_feedback, turn_reactions, workspace_feedback,
    workspace_sessions, workspace_eval_runs.
    """
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    if not 1 <= days <= HISTORY_DAYS:
        raise ValueError(f"days must be between 1 and {HISTORY_DAYS}, got {days}")
    if not sources or set(sources) - set(SOURCES):
        raise ValueError(f"sources must be some of {', '.join(SOURCES)}, got {', '.join(sources) or 'none'}")
    report = progress or (lambda _message: None)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = TimeFrame(as_of=as_of, days=days)
    volumes = _volumes(scale, days)
    con = connect()
    try:
        counts: dict[str, int] = {}
        export_written = False
        if "analyzer" in sources:
            counts["analyzer_events"] = write_analyzer_store(
                con, out_dir / "analyzer" / "feedback-store", volumes["analyzer_events"],
                stream(seed, "analyzer"), frame, report,
            )  # fmt: skip
        if "session_feedback" in sources:
            counts["session_feedback"] = write_session_feedback(
                con, out_dir / "session-feedback", volumes["session_feedback"],
                stream(seed, "session_feedback"), frame, report,
            )  # fmt: skip
        if "reactions" in sources:
            counts["turn_reactions"], export_written = write_reactions(
                con, out_dir / "reactions", volumes["turn_reactions"],
                stream(seed, "reactions"), frame, report,
            )  # fmt: skip
        if "workspace" in sources:
            counts.update(
                write_workspace(con, out_dir / "workspace", volumes, stream(seed, "workspace"), frame, report)
            )
    finally:
        con.close()
    write_sources_toml(out_dir / "sources.toml", reactions_export=export_written, sources=sources)
    report(f"wrote {out_dir / 'sources.toml'}")
    return counts
