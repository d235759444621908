"""Source 3, analyzer events: the store folder of the coding-agent log analyzer, in its JSON-lines files.

Writes, under OUT/analyzer/feedback-store (upstream: the analyzer's store folder):

    feedback.jsonl                      the active file: the events of the last 90 days
    archive/feedback-YYYYMMDD.jsonl     older events, one file per weekly archive run
                                        (file date = run date)

One event a line, the fields of the analyzer contract (`warehouse.contracts.ANALYZER_EVENTS`)
in its order; `timestamp` is ISO-8601 Z text, with microseconds or without. The weekly archive
runs fall on as_of, as_of - 7 d, ...; the run on day D moved the events older than D - 90 d, so
the active file holds exactly the events of the last 90 days, plus:
- 40 events that also sit in the newest archive file (an archive run interrupted before it
  removed its last chunk from the active file): valid data, to deduplicate;
- one truncated JSON line (a writer killed mid-line), a few days before as_of: the bad record
  to quarantine.

Skills: `WORSENING_SKILL` corrects much more in the last 30 days than before, `IMPROVING_SKILL`
much less, `NEW_SKILL` only exists for the last 12 days (insufficient data for a trend); every
other skill is stable. Outcomes follow a low-discrepancy sequence per skill, so each window's
rate is close to the intended one even at small scale.

`write_analyzer_jsonl` writes one plain file of exactly n clean events (for the benchmark).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from demo.common import (
    DAY_US,
    SECOND_US,
    Progress,
    TimeFrame,
    categorical,
    categorical_by_row,
    connect,
    copy_jsonl,
    label_column,
    pick_in_groups,
    sample_times,
    stream,
    timestamp_column,
    uuid4s,
)
from warehouse.contracts import ANALYZER_EVENTS, CORRECTION_TYPES, DIMENSIONS, OUTCOMES

ACTIVE_DAYS = 90
ARCHIVE_EVERY_DAYS = 7
INTERRUPTED_ARCHIVE_EVENTS = 40
TREND_CHANGE_DAYS_AGO = 27
NEW_SKILL_DAYS_AGO = 12


@dataclass(frozen=True)
class Skill:
    """One analyzer skill: popularity, outcome shares and where its corrections land."""

    skill_id: str
    weight: float
    corrections: float  # share of correction outcomes
    partials: float  # share of partial outcomes
    dimension_weights: tuple[float, float, float, float, float, float, float]  # in the order of DIMENSIONS
    recent_corrections: float | None = None  # shares after the change TREND_CHANGE_DAYS_AGO
    recent_partials: float | None = None
    introduced_days_ago: int | None = None


WORSENING_SKILL = "cpp-expert"
IMPROVING_SKILL = "deslop"
NEW_SKILL = "api-designer"
SKILLS: tuple[Skill, ...] = (
    Skill("cpp-expert", 0.12, 0.10, 0.08, (6, 3, 1, 1, 0.5, 0.5, 1), 0.36, 0.14),
    Skill("deslop", 0.13, 0.32, 0.16, (2, 1, 1, 5, 0, 0.5, 1), 0.07, 0.07),
    Skill("python-refactor", 0.14, 0.12, 0.10, (3, 2, 2, 1, 0.3, 0.5, 1)),
    Skill("sql-optimizer", 0.09, 0.16, 0.08, (4, 1, 1, 4, 0.2, 0.3, 1)),
    Skill("test-writer", 0.10, 0.14, 0.12, (1, 6, 2, 0.5, 0, 0.3, 1)),
    Skill("doc-writer", 0.07, 0.06, 0.10, (3, 3, 0.5, 2, 0, 0.2, 1)),
    Skill("commit-message", 0.08, 0.05, 0.04, (5, 1, 0.5, 1, 0, 0.3, 1)),
    Skill("code-review", 0.10, 0.18, 0.12, (2, 4, 2, 1, 1, 0.5, 1)),
    Skill("rust-expert", 0.05, 0.20, 0.10, (5, 2, 2, 1, 0.5, 0.3, 1)),
    Skill("k8s-helper", 0.04, 0.22, 0.08, (2, 2, 4, 1, 2, 0.5, 1)),
    Skill("security-audit", 0.03, 0.15, 0.10, (1, 3, 1, 0.5, 6, 0.3, 1)),
    Skill("api-designer", 0.03, 0.25, 0.10, (3, 3, 1, 1, 1, 2, 1), introduced_days_ago=NEW_SKILL_DAYS_AGO),
)

# Correction snippets by dimension (keywords as the reference classifier matches them).
CORRECTION_SNIPPETS: dict[str, tuple[str, ...]] = {
    "accuracy": (
        "not right, should use const ref...",
        "wrong, the naming doesn't follow our style guide",
        "不对,命名不符合规范",
        "incorrect format: use snake_case here",
        "错了,格式不对,请用 const ref",
        "no, that's a typo in the header guard",
    ),
    "coverage": (
        "wrong, you forgot the error path",
        "incomplete: missing tests for the empty input",
        "不对,漏了边界条件",
        "redo it, it's missing the migration",
    ),
    "reliability": (
        "try again, the output is inconsistent with last time",
        "重新来,结果不稳定",
        "wrong again, same bug as before",
    ),
    "efficiency": (
        "too verbose, redo it shorter",
        "wrong approach, this is way too slow",
        "换个方案,太慢了",
        "冗余太多,重新来",
    ),
    "security": (
        "no, never log the token",
        "wrong: the secret is hard-coded",
        "不对,密钥不能写在代码里",
        "incorrect, credentials must come from the vault",
    ),
    "trigger_quality": (
        "wrong skill, this shouldn't trigger for SQL files",
        "不该触发这个技能",
        "no, wrong skill: I asked for a review, not a rewrite",
    ),
    "unknown": (
        "no, that's not what I meant",
        "nope, revert that",
        "不对",
        "hmm, no. Let's undo",
        "non, ce n'est pas ça 😕",
    ),
}
PARTIAL_SNIPPETS = (
    "looks good but the naming is off",
    "可以,但是格式不对",
    "ok but you missed the docs",
    "lgtm, however it's a bit verbose",
    "c'est presque ça, mais il manque un test",
)
EXPLICIT_ACCEPTANCE_SNIPPETS = (
    "lgtm",
    "looks good, thanks!",
    "好的",
    "可以",
    "对的,就这样",
    "parfait, merci 👍",
    "correct 👍",
)
IMPLICIT_ACCEPTANCE_SNIPPETS = (
    "now let's move on to the parser module",
    "接下来处理日志模块的部分吧",
    "great, next add the CLI flag for verbosity",
    "déployons ça sur l'environnement de recette",
    (
        "Next, wire the same validation into the ingest path for the reactions export, keep "
        "the quarantine reasons identical to the blob reader, and add a regression test that "
        "feeds a truncated line and an over-confident machine reaction through both readers"
    )[:200],
)
TOOL_LISTS: tuple[tuple[str, ...], ...] = (
    (),
    ("Read",),
    ("Read", "Edit"),
    ("Read", "Edit", "Bash"),
    ("Grep", "Read"),
    ("Bash",),
    ("Write",),
    ("Read", "Write", "Bash"),
    ("Glob", "Grep", "Read", "Edit"),
    ("WebFetch",),
    ("Edit", "Bash"),
)
TOOL_LIST_WEIGHTS = (0.12, 0.14, 0.2, 0.14, 0.1, 0.06, 0.05, 0.06, 0.07, 0.02, 0.04)

# How each field of the contract is written from the columns of `_analyzer_table` (DuckDB formats them).
ANALYZER_EXPRESSIONS: dict[str, str] = {
    "event_id": "left(sha256(invocation_uuid || ':' || skill_id), 16)",
    "timestamp": (
        "case when has_fraction then strftime(ts, '%Y-%m-%dT%H:%M:%S.%fZ') else strftime(ts, '%Y-%m-%dT%H:%M:%SZ') end"
    ),
    "session_id": "session_id",
    "skill_id": "skill_id::varchar",
    "invocation_uuid": "invocation_uuid",
    "outcome": "outcome::varchar",
    "confidence": "confidence",
    "correction_type": "correction_type::varchar",
    "user_message_snippet": "user_message_snippet::varchar",
    "turns_to_feedback": "turns_to_feedback",
    "ai_tools_used": "ai_tools_used",
    "dimension_hint": "dimension_hint::varchar",
}
# One JSON object per event: the contract's fields, in its order.
ANALYZER_SELECT = ", ".join(f'{ANALYZER_EXPRESSIONS[name]} as "{name}"' for name in ANALYZER_EVENTS.columns)


def _analyzer_table(rng: np.random.Generator, n: int, frame: TimeFrame) -> pa.Table:
    """n analyzer events in time order, as Arrow columns (formatting is left to DuckDB)."""
    ts = sample_times(rng, n, frame)
    has_fraction = rng.random(n) < 0.3
    ts = np.where(has_fraction, ts, ts - ts % SECOND_US)
    order = np.argsort(ts, kind="stable")
    ts, has_fraction = ts[order], has_fraction[order]

    skill = _assign_skills(rng, ts, frame)
    outcome = _assign_outcomes(rng, skill, ts, frame)
    is_correction, is_partial, is_acceptance = outcome == 0, outcome == 1, outcome == 2
    explicit = rng.random(n) < 0.45
    confidence = np.select([is_correction, is_partial, explicit], [0.9, 0.7, 0.8], default=0.6)
    correction_type = np.where(is_partial, 3, categorical(rng, n, (0.6, 0.15, 0.25)))
    dimension_weights = np.array([s.dimension_weights for s in SKILLS], dtype=float)
    dimension = categorical_by_row(rng, dimension_weights[skill])
    snippet = _analyzer_snippets(rng, outcome, dimension, explicit)
    new_session = rng.random(n) < 0.35
    if n:
        new_session[0] = True
    session_index = np.cumsum(new_session) - 1
    session_ids = uuid4s(rng, int(new_session.sum()))
    tools = categorical(rng, n, TOOL_LIST_WEIGHTS)
    tool_lists = pa.array([list(t) for t in TOOL_LISTS], pa.list_(pa.string()))
    return pa.table(
        {
            "seq": np.arange(n, dtype=np.int64),
            "ts": timestamp_column(ts),
            "has_fraction": has_fraction,
            "session_id": session_ids.take(pa.array(session_index)),
            "skill_id": label_column(skill, [s.skill_id for s in SKILLS]),
            "invocation_uuid": uuid4s(rng, n),
            "outcome": label_column(outcome, OUTCOMES),
            "confidence": confidence,
            "correction_type": label_column(correction_type, CORRECTION_TYPES, null=is_acceptance),
            "user_message_snippet": label_column(*snippet),
            "turns_to_feedback": categorical(rng, n, (0.68, 0.2, 0.12)).astype(np.int64) + 1,
            "ai_tools_used": tool_lists.take(pa.array(tools)),
            "dimension_hint": label_column(dimension, DIMENSIONS, null=is_acceptance),
        }
    )


def _assign_skills(rng: np.random.Generator, ts: np.ndarray, frame: TimeFrame) -> np.ndarray:
    """Skill per event by popularity; a skill only exists after it was introduced."""
    weights = np.array([s.weight for s in SKILLS])
    skill = categorical(rng, len(ts), weights)
    for index, spec in enumerate(SKILLS):
        if spec.introduced_days_ago is None:
            continue
        too_early = (skill == index) & (ts < frame.days_ago_us(spec.introduced_days_ago))
        older = np.where(np.arange(len(SKILLS)) == index, 0.0, weights)
        skill[too_early] = categorical(rng, int(too_early.sum()), older)
    return skill


def _assign_outcomes(rng: np.random.Generator, skill: np.ndarray, ts: np.ndarray, frame: TimeFrame) -> np.ndarray:
    """0 correction, 1 partial, 2 acceptance.

    Draws follow a golden-ratio sequence per skill (events in time order), so the share of
    each outcome in any window of a skill's events is close to the intended one.
    """
    n_skills = len(SKILLS)
    order = np.argsort(skill, kind="stable")
    counts = np.bincount(skill, minlength=n_skills)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.empty(len(skill), dtype=np.int64)
    rank[order] = np.arange(len(skill)) - np.repeat(starts, counts)
    offsets = rng.random(n_skills)
    u = (rank * 0.6180339887498949 + offsets[skill]) % 1.0

    corrections = np.array([s.corrections for s in SKILLS])[skill]
    partials = np.array([s.partials for s in SKILLS])[skill]
    changed = ts >= frame.days_ago_us(TREND_CHANGE_DAYS_AGO)
    for index, spec in enumerate(SKILLS):
        if spec.recent_corrections is None or spec.recent_partials is None:
            continue
        recent = changed & (skill == index)
        corrections[recent] = spec.recent_corrections
        partials[recent] = spec.recent_partials
    return np.where(u < corrections, 0, np.where(u < corrections + partials, 1, 2))


def _analyzer_snippets(
    rng: np.random.Generator, outcome: np.ndarray, dimension: np.ndarray, explicit: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    groups = [CORRECTION_SNIPPETS[d] for d in DIMENSIONS]
    groups += [PARTIAL_SNIPPETS, EXPLICIT_ACCEPTANCE_SNIPPETS, IMPLICIT_ACCEPTANCE_SNIPPETS]
    n_dims = len(DIMENSIONS)
    group = np.where(
        outcome == 0, dimension, np.where(outcome == 1, n_dims, np.where(explicit, n_dims + 1, n_dims + 2))
    )
    indices, pool = pick_in_groups(rng, group, groups)
    privacy_mode = rng.random(len(outcome)) < 0.1  # --no-snippets runs write ""
    pool.append("")
    return np.where(privacy_mode, len(pool) - 1, indices), pool


def _archive_run(ts: np.ndarray, frame: TimeFrame) -> np.ndarray:
    """-1 for the active file, else k for the archive run on as_of - 7k days."""
    cutoff = frame.days_ago_us(ACTIVE_DAYS)
    run = (cutoff - ts - 1) // (ARCHIVE_EVERY_DAYS * DAY_US)
    return np.where(ts >= cutoff, -1, run)


def write_analyzer_store(
    con: duckdb.DuckDBPyConnection,
    store: Path,
    n: int,
    rng: np.random.Generator,
    frame: TimeFrame,
    report: Progress,
) -> int:
    """Active file, weekly archive files, interrupted-run duplicates and one truncated line."""
    table = _analyzer_table(rng, n + 1, frame)  # one extra event becomes the truncated line
    ts = table.column("ts").to_numpy().view(np.int64)
    run = _archive_run(ts, frame)
    active = np.flatnonzero(run == -1)
    truncated_seq = int(active[int(len(active) * 0.97)]) if len(active) else n
    newest_run = np.flatnonzero(run == 0)
    also_active = np.zeros(n + 1, dtype=bool)
    also_active[newest_run[-INTERRUPTED_ARCHIVE_EVENTS:]] = True
    con.register(
        "analyzer_arrow",
        table.append_column("archive_run", pa.array(run)).append_column("also_active", pa.array(also_active)),
    )
    archive = store / "archive"
    archive.mkdir(parents=True, exist_ok=True)
    for stale in archive.glob("feedback-*.jsonl"):
        stale.unlink()
    for k in sorted(int(r) for r in np.unique(run[run >= 0])):
        run_date = frame.as_of - dt.timedelta(days=ARCHIVE_EVERY_DAYS * k)
        copy_jsonl(
            con,
            f"select {ANALYZER_SELECT} from analyzer_arrow where archive_run = {k} order by seq",
            archive / f"feedback-{run_date:%Y%m%d}.jsonl",
        )
    _write_active_file(con, store / "feedback.jsonl", truncated_seq)
    report(f"analyzer: {n:,} events, {len(np.unique(run))} files in {store}")
    return n


def _write_active_file(con: duckdb.DuckDBPyConnection, path: Path, truncated_seq: int) -> None:
    """Events of the last 90 days (plus the interrupted run's leftovers), one line cut short."""
    head = f"(archive_run = -1 or also_active) and seq < {truncated_seq}"
    copy_jsonl(con, f"select {ANALYZER_SELECT} from analyzer_arrow where {head} order by seq", path)
    tail_path = path.with_name(path.name + ".tail")
    tail = f"archive_run = -1 and seq >= {truncated_seq}"
    copy_jsonl(con, f"select {ANALYZER_SELECT} from analyzer_arrow where {tail} order by seq", tail_path)
    with tail_path.open("rb") as source, path.open("ab") as target:
        first = source.readline().decode("utf-8")
        if first:
            target.write(first[: int(len(first) * 0.55)].encode("utf-8") + b"\n")
        for chunk in iter(lambda: source.read(1 << 20), b""):
            target.write(chunk)
    tail_path.unlink()


def write_analyzer_jsonl(path: Path, n_events: int, *, seed: int = 42, as_of: dt.date, days: int = 200) -> None:
    """One analyzer JSONL file of exactly n_events clean events over `days` days before as_of."""
    if n_events < 0 or days < 1:
        raise ValueError("n_events must be >= 0 and days >= 1")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = TimeFrame(as_of=as_of, days=days)
    con = connect()
    try:
        con.register("analyzer_arrow", _analyzer_table(stream(seed, "analyzer"), n_events, frame))
        copy_jsonl(con, f"select {ANALYZER_SELECT} from analyzer_arrow order by seq", path)
    finally:
        con.close()
