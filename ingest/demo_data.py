"""Deterministic, realistic demo data for every source, in the upstream formats.

`generate(out_dir, seed=..., scale=..., as_of=...)` writes, under OUT:

    analyzer/feedback-store/feedback.jsonl                     analyzer events of the last 90 days
    analyzer/feedback-store/archive/feedback-YYYYMMDD.jsonl    older events, one file per weekly
                                                               archive run (file date = run date)
    session-feedback/session_feedback.sqlite3                  legacy SQLite table (older records)
    session-feedback/session_feedback_export.jsonl             JSON-lines export (newer records)
    reactions/blobs/<tenant>/<project>/<conversation>/<artifact>.json
                                                               one reaction envelope per file
    reactions/reactions_export.jsonl                           only when there are more reactions
                                                               than blob files we write (scale > ~1.2)
    workspace/feedback.jsonl, sessions.jsonl, eval_runs.jsonl  workspace rows, nested JSON as objects
    sources.toml                                               a ready `ingest --config` file

Time frame: the history covers the 200 whole days before `as_of`; every timestamp is
strictly before `as_of` 00:00 UTC, so nothing is "after as_of" whichever time of that day
a report uses. The analyzer's weekly archive runs fall on as_of, as_of - 7 d, ...; the run
on day D moved the events older than D - 90 d, so the active file holds exactly the events
of the last 90 days (plus the interrupted-run duplicates below).

Deliberately bad records, exactly these three, for the ingest to quarantine:
1. analyzer: one truncated JSON line in the active file `feedback.jsonl` (a writer killed
   mid-line), a few days before as_of.
2. session feedback: one line of the JSON-lines export whose `session_id_opaque` is the raw
   thread id "alice-s1" instead of its SHA-256.
3. reactions: one blob whose `payload.reaction.confidence` is 1.5.

Deliberate quirks that are valid data (to deduplicate or interpret, not to quarantine):
- 40 analyzer events sit in both the newest archive file and the active file (an archive
  run interrupted before it removed its last chunk from the active file).
- 300 session feedback records sit in both the SQLite file and the export (same `id`).
- reactions: users who replace their reaction on a turn (later `ts`), users who clear it
  (`reaction` null), additive machine reactions with confidences on both sides of 0.70
  (including exactly 0.70 and 0.69), ~3% of envelopes tagged with the legacy
  "kind:turn.log.reaction", ~5% without a `track:` tag, pretty-printed and compact files.
- analyzer skills: `WORSENING_SKILL` corrects much more in the last 30 days than before,
  `IMPROVING_SKILL` much less, `NEW_SKILL` only exists for the last 12 days (insufficient
  data for a trend); every other skill is stable. Outcomes follow a low-discrepancy
  sequence per skill, so each window's rate is close to the intended one even at small scale.
- evals: 3 golden sets x 8 golden sessions, 3 agent configs, 10 weekly runs; cells that
  regress on the latest run, get fixed on it, flip-flop (flaky), improve early, always fail.

Counts returned per source are the clean records after deduplication (what the raw tables
should hold after ingest); the bad records above are not counted.

Determinism: every random draw comes from numpy Generators seeded from `seed` (one stream
per source); every file is written in an explicit order (DuckDB `COPY ... ORDER BY`, sorted
Python lists), so the same seed, scale and as_of give byte-identical files. The workspace
tenant ids are not drawn: each is the uuid5 of the tenant's name (`demo_tenant_id`), the same
for every seed, and `seeds/tenants.csv` maps them and the reactions' tenant names to one tenant.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

Progress = Callable[[str], None]

SECOND_US = 1_000_000
MINUTE_US = 60 * SECOND_US
HOUR_US = 60 * MINUTE_US
DAY_US = 24 * HOUR_US
EPOCH = dt.datetime(1970, 1, 1)
ISO_US = "%Y-%m-%dT%H:%M:%S.%fZ"

HISTORY_DAYS = 200
ACTIVE_DAYS = 90
ARCHIVE_EVERY_DAYS = 7
INTERRUPTED_ARCHIVE_EVENTS = 40
SQLITE_EXPORT_OVERLAP = 300
SQLITE_MIGRATION_DAYS_AGO = 45
BLOB_FILES_ALL_UP_TO = 30_000  # up to this many reactions, every reaction is a blob file
BLOB_FILE_CAP = 20_000  # beyond it, this many blob files and the rest in the export
TREND_CHANGE_DAYS_AGO = 27
NEW_SKILL_DAYS_AGO = 12

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

TENANTS: dict[str, tuple[str, ...]] = {
    "acme": ("support", "codegen", "docs"),
    "globex": ("support", "sales"),
    "initech": ("codegen", "analytics"),
    "umbrella": ("research", "support"),
}
TENANT_WEIGHTS = (0.4, 0.25, 0.2, 0.15)
# The workspace names a tenant by a uuid, the reactions by its name. The demo's workspace uuids are
# derived from the name (uuid5 in this namespace), the same for every --seed, so the seed
# seeds/tenants.csv can map both to one tenant.
DEMO_TENANT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "feedback-analytics:demo-data:tenants")
BUNDLES: dict[str, str] = {
    "support": "support.assistant",
    "codegen": "with.codegen",
    "docs": "docs.qa",
    "sales": "sales.copilot",
    "analytics": "analytics.sql",
    "research": "research.agent",
}
NAMED_USERS = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter",
)  # fmt: skip

# ---------------------------------------------------------------------------------------
# Analyzer vocabulary
# ---------------------------------------------------------------------------------------

DIMENSIONS = (
    "accuracy", "coverage", "reliability", "efficiency", "security", "trigger_quality", "unknown",
)  # fmt: skip
OUTCOMES = ("correction", "partial", "acceptance")
CORRECTION_TYPES = ("rejection", "revert", "redo", "partial")


@dataclass(frozen=True)
class Skill:
    """One analyzer skill: popularity, outcome shares and where its corrections land."""

    skill_id: str
    weight: float
    corrections: float  # share of correction outcomes
    partials: float  # share of partial outcomes
    dimension_weights: tuple[float, float, float, float, float, float, float]
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
    Skill("api-designer", 0.03, 0.25, 0.10, (3, 3, 1, 1, 1, 2, 1), introduced_days_ago=12),
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

# ---------------------------------------------------------------------------------------
# Reactions and workspace vocabulary
# ---------------------------------------------------------------------------------------

REACTIONS = ("ok", "not_ok", "neutral")
USER_COMMENTS: dict[str, tuple[str, ...]] = {
    "ok": (
        "Great explanation!",
        "Ah the previous diagram also worked fine. It was my issue.",
        "Parfait, exactement ce qu'il fallait 👌",
        "很好,谢谢",
        "That fixed it.",
    ),
    "not_ok": (
        "The SQL is wrong, it ignores the date filter",
        "不对,这个数字是错的",
        "Ça ne compile pas.",
        "Wrong customer: I asked about Globex",
    ),
    "neutral": ("ok", "Hmm, partially useful.", "Je vais vérifier.", "还行吧"),
}
MACHINE_COMMENTS: dict[str, tuple[str, ...]] = {
    "ok": ("User said: 'thanks, that works'", "User said: '好的,明白了'"),
    "not_ok": ("User said: 'no, that's not it'", "Detected frustration: 'this is still wrong 😤'"),
    "neutral": ("User said: 'I'll check later'", "User said: 'bon, on verra'"),
}

SOURCE_TYPES = ("chat", "response", "extraction", "tool", "session", "observation")
SOURCE_TYPE_WEIGHTS = (0.42, 0.16, 0.12, 0.1, 0.1, 0.1)
SOURCE_TYPE_LINK_SHARE = (0.7, 0.3, 0.2, 0.8, 1.0, 0.5)  # share linked to a session
RATINGS = ("positive", "negative", "neutral")
RATING_WEIGHTS_BY_SOURCE_TYPE = (
    (0.55, 0.35, 0.10),
    (0.20, 0.70, 0.10),
    (0.0, 1.0, 0.0),
    (0.30, 0.50, 0.20),
    (0.0, 1.0, 0.0),
    (0.25, 0.55, 0.20),
)
FEEDBACK_STATUSES = ("pending", "reviewed", "applied", "dismissed")
FEEDBACK_COMMENTS: dict[str, tuple[str, ...]] = {
    "positive": ("Exactly the comps I needed", "Très clair, merci", "回答准确", "Nice summary 🎉"),
    "negative": (
        "Valuation is off by 10x",
        "Wrong entity: Société Générale, not Generali",
        "数据来源不对",
        "It ignored the fiscal year",
        "Tool call failed silently",
    ),
    "neutral": ("Fine, a bit long", "Bof, passable", "一般"),
}
REVIEW_NOTES: dict[str, tuple[str, ...]] = {
    "reviewed": ("Looked at it, no pattern yet", "Waiting for a second signal"),
    "applied": (
        "Captured as correction: use fiscal-year revenue",
        "Added lesson about 'Société Générale' entity naming",
        "Updated agent prompt: cite the source filing",
        "Retry applied with feedback instruction",
    ),
    "dismissed": ("Duplicate of earlier feedback", "User error, dismissed", "Noise: one-off typo"),
}
FIELD_NAMES = ("valuation", "revenue", "ebitda", "sector", "deal_stage", "headcount")
REJECTED_VALUES = ("€12,5 M", "$4.82M", "Société Générale", "n/a", "上海", "1.2x")
TOOL_SLUGS = ("hubspot.create_contact", "sec.fetch_filing", "web.search", "sql.query")
FAILURE_REASONS = ("timeout", "tool_error", "max_steps_exceeded", "llm_refusal")
SESSION_TYPES = ("agent", "chat", "response", "tool", "mixed")
SESSION_TYPE_WEIGHTS = (0.3, 0.4, 0.12, 0.12, 0.06)
SESSION_STATUSES = ("completed", "failed", "running", "cancelled")
SESSION_STATUS_WEIGHTS = (0.86, 0.07, 0.02, 0.05)
SESSION_TRIGGERS = ("ui", "api", "schedule", "heartbeat")
AGENT_NAMES = ("assistant", "extractor", "researcher", "ops-bot")


@dataclass(frozen=True)
class GoldenSet:
    """A named set of golden sessions of one session type, in one tenant."""

    name: str
    session_type: str
    tenant: str
    dimensions: tuple[str, ...]


GOLDEN_SETS: tuple[GoldenSet, ...] = (
    GoldenSet("pe-extraction", "response", "acme", ("valuation", "revenue", "sector", "deal_stage")),
    GoldenSet("chat-smoke", "chat", "acme", ("tool_calls", "tool_args", "final_message", "entities_created")),
    GoldenSet("tool-accuracy", "tool", "globex", ("output", "entity_mutations")),
)
GOLDEN_PER_SET = 8
EVAL_AGENTS = ("baseline", "candidate-prompt-v2", "candidate-model-swap")
EVAL_RUNS = 10
# Pass (P) / fail (F) per weekly run, oldest first, for the cells that are not always passing.
CELL_PATTERNS: dict[tuple[str, int, str], str] = {
    ("pe-extraction", 2, "baseline"): "PPPPPPPPPF",  # regresses on the latest run
    ("pe-extraction", 5, "candidate-prompt-v2"): "FFFFFFFFFP",  # fixed on the latest run
    ("pe-extraction", 3, "candidate-model-swap"): "PFPFPFPFPP",  # flaky
    ("chat-smoke", 6, "candidate-prompt-v2"): "PPPPPPPPPF",  # regresses on the latest run
    ("chat-smoke", 0, "candidate-model-swap"): "FFFPPPPPPP",  # fixed a while ago
    ("chat-smoke", 1, "candidate-model-swap"): "FFFPPPPPPP",
    ("chat-smoke", 2, "candidate-model-swap"): "FFFFPPPPPP",
    ("tool-accuracy", 7, "candidate-model-swap"): "FFFFFFFFFF",  # always fails
    ("tool-accuracy", 1, "candidate-prompt-v2"): "PFFPPPPPPP",
}
GOLDEN_MESSAGES = (
    "Compare the last three PE deals in healthcare by EV/EBITDA",
    "Extrais la valorisation et le chiffre d'affaires de ce mémo",
    "帮我总结这家公司的融资历史",
    "Add the contacts from this email thread to HubSpot",
    "What changed in Globex's 10-K risk factors this year?",
    "Draft a follow-up to Zoë about the Q3 pipeline",
    "List open deals over $5M with no activity in 30 days",
    "Fetch the latest SEC filing for Initech and extract revenue",
)
DIVERGENCE_VALUES: dict[str, tuple[str, str]] = {
    "valuation": ("€120M", "€12M"),
    "revenue": ("$48.2M", "$4.82M"),
    "sector": ("Fintech", "Banking"),
    "deal_stage": ("LOI", "Due diligence"),
    "tool_calls": ("crm.search, crm.update", "crm.search"),
    "tool_args": ("{'limit': 50}", "{'limit': 5}"),
    "final_message": ("mentions the Q3 pipeline", "no mention of the Q3 pipeline"),
    "entities_created": ("2 contacts", "0 contacts"),
    "output": ("12 rows", "0 rows"),
    "entity_mutations": ("deal.stage updated", "no mutation"),
}


# ---------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------


def generate(
    out_dir: Path,
    *,
    seed: int = 42,
    scale: float = 1.0,
    as_of: dt.date,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Write every source under out_dir plus out_dir/sources.toml; return counts per source.

    Counts are clean records after deduplication (bad records excluded), keyed
    analyzer_events, session_feedback, turn_reactions, workspace_feedback,
    workspace_sessions, workspace_eval_runs.
    """
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    report = progress or (lambda _message: None)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = TimeFrame(as_of=as_of, days=HISTORY_DAYS)
    volumes = _volumes(scale)
    con = _connect()
    try:
        counts: dict[str, int] = {}
        counts["analyzer_events"] = _write_analyzer_store(
            con, out_dir / "analyzer" / "feedback-store", volumes["analyzer_events"],
            _stream(seed, "analyzer"), frame, report,
        )  # fmt: skip
        counts["session_feedback"] = _write_session_feedback(
            con, out_dir / "session-feedback", volumes["session_feedback"],
            _stream(seed, "session_feedback"), frame, report,
        )  # fmt: skip
        counts["turn_reactions"], export_written = _write_reactions(
            con, out_dir / "reactions", volumes["turn_reactions"],
            _stream(seed, "reactions"), frame, report,
        )  # fmt: skip
        counts.update(_write_workspace(con, out_dir / "workspace", volumes, _stream(seed, "workspace"), frame, report))
    finally:
        con.close()
    _write_sources_toml(out_dir / "sources.toml", reactions_export=export_written)
    report(f"wrote {out_dir / 'sources.toml'}")
    return counts


def write_analyzer_jsonl(path: Path, n_events: int, *, seed: int = 42, as_of: dt.date, days: int = 200) -> None:
    """One analyzer JSONL file of exactly n_events clean events over `days` days before as_of."""
    if n_events < 0 or days < 1:
        raise ValueError("n_events must be >= 0 and days >= 1")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = TimeFrame(as_of=as_of, days=days)
    con = _connect()
    try:
        con.register("analyzer_arrow", _analyzer_table(_stream(seed, "analyzer"), n_events, frame))
        _copy_jsonl(con, f"select {ANALYZER_SELECT} from analyzer_arrow order by seq", path)
    finally:
        con.close()


# ---------------------------------------------------------------------------------------
# Time, randomness and string columns
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeFrame:
    """The history: `days` whole days ending just before `as_of` 00:00 UTC."""

    as_of: dt.date
    days: int

    @property
    def end_us(self) -> int:
        return (self.as_of - EPOCH.date()).days * DAY_US

    @property
    def start_us(self) -> int:
        return self.end_us - self.days * DAY_US

    def days_ago_us(self, days: float) -> int:
        return self.end_us - int(days * DAY_US)


def _stream(seed: int, source: str) -> np.random.Generator:
    """An independent random stream per source, derived from the seed."""
    return np.random.default_rng([seed, zlib.crc32(source.encode())])


def _volumes(scale: float) -> dict[str, int]:
    return {name: max(MIN_VOLUMES[name], round(base * scale)) for name, base in BASE_VOLUMES.items()}


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("set preserve_insertion_order = true")
    con.execute("set enable_progress_bar = false")
    con.execute("set TimeZone = 'UTC'")
    return con


def _day_weights(frame: TimeFrame) -> np.ndarray:
    """Relative volume per day: fewer events on weekends, slow growth over the history."""
    first = frame.as_of - dt.timedelta(days=frame.days)
    weekday_factor = np.array([1.0, 1.0, 1.0, 1.0, 0.95, 0.35, 0.3])
    weekdays = np.array([(first + dt.timedelta(days=i)).weekday() for i in range(frame.days)])
    growth = 0.75 + 0.5 * np.arange(frame.days) / max(frame.days - 1, 1)
    return weekday_factor[weekdays] * growth


def _sample_times(
    rng: np.random.Generator,
    n: int,
    frame: TimeFrame,
    *,
    skip_last_days: int = 0,
    hour_mean: float = 14.0,
    hour_sd: float = 3.5,
) -> np.ndarray:
    """n sorted UTC timestamps (epoch microseconds) with weekday seasonality."""
    weights = _day_weights(frame)
    if skip_last_days:
        weights[-skip_last_days:] = 0.0
    day = rng.choice(frame.days, size=n, p=weights / weights.sum()).astype(np.int64)
    hours = rng.normal(hour_mean, hour_sd, n) % 24.0
    within_day = np.minimum((hours * HOUR_US).astype(np.int64), DAY_US - 1)
    return np.sort(frame.start_us + day * DAY_US + within_day)


def _categorical(rng: np.random.Generator, n: int, weights: Sequence[float]) -> np.ndarray:
    p = np.asarray(weights, dtype=float)
    return rng.choice(len(p), size=n, p=p / p.sum())


def _categorical_by_row(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One draw per row from that row's own weights (rows x categories)."""
    cumulative = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    u = rng.random(len(weights))[:, None]
    return np.minimum((u > cumulative).sum(axis=1), weights.shape[1] - 1)


def _labels(indices: np.ndarray, pool: Sequence[str], null: np.ndarray | None = None) -> pa.Array:
    """A string column as a dictionary over a small pool (null where `null` is true)."""
    codes = pa.array(np.asarray(indices, dtype=np.int32), mask=null)
    return pa.DictionaryArray.from_arrays(codes, pa.array(list(pool), pa.string()))


def _pick_in_groups(
    rng: np.random.Generator, group: np.ndarray, groups: Sequence[Sequence[str]]
) -> tuple[np.ndarray, list[str]]:
    """For each row, a uniform pick within its group; returns indices into the flat pool."""
    flat = [text for texts in groups for text in texts]
    sizes = np.array([len(texts) for texts in groups])
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    within = (rng.random(len(group)) * sizes[group]).astype(np.int64)
    return offsets[group] + within, flat


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_BASE36 = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def _strings_from_chars(chars: np.ndarray) -> pa.Array:
    """(n, width) ASCII bytes to a string column, without a Python loop."""
    n, width = chars.shape
    data = np.ascontiguousarray(chars, dtype=np.uint8)
    offsets = np.arange(n + 1, dtype=np.int64) * width
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def _hex_chars(raw: np.ndarray) -> np.ndarray:
    chars = np.empty((raw.shape[0], raw.shape[1] * 2), dtype=np.uint8)
    chars[:, 0::2] = _HEX[raw >> 4]
    chars[:, 1::2] = _HEX[raw & 0x0F]
    return chars


def _uuid4_chars(rng: np.random.Generator, n: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    hexed = _hex_chars(raw)
    chars = np.full((n, 36), ord("-"), dtype=np.uint8)
    for start, stop, src in ((0, 8, 0), (9, 13, 8), (14, 18, 12), (19, 23, 16), (24, 36, 20)):
        chars[:, start:stop] = hexed[:, src : src + stop - start]
    return chars


def _uuid4s(rng: np.random.Generator, n: int) -> pa.Array:
    """n random version-4 UUIDs as text."""
    return _strings_from_chars(_uuid4_chars(rng, n))


def _uuid4_list(rng: np.random.Generator, n: int) -> list[str]:
    return _uuid4s(rng, n).to_pylist()


def _prefixed_chars(prefix: str, body: np.ndarray) -> np.ndarray:
    head = np.broadcast_to(np.frombuffer(prefix.encode(), dtype=np.uint8), (len(body), len(prefix)))
    return np.hstack([head, body])


def _hex_ids(rng: np.random.Generator, n: int, prefix: str, n_chars: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n, (n_chars + 1) // 2), dtype=np.uint8)
    return _prefixed_chars(prefix, _hex_chars(raw)[:, :n_chars])


def _base36_chars(values: np.ndarray, width: int) -> np.ndarray:
    values = values.astype(np.uint64).copy()
    chars = np.empty((len(values), width), dtype=np.uint8)
    for position in range(width - 1, -1, -1):
        chars[:, position] = _BASE36[(values % np.uint64(36)).astype(np.int64)]
        values //= np.uint64(36)
    return chars


def _timestamps(us: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    return pa.array(np.asarray(us, dtype=np.int64).view("datetime64[us]"), mask=null)


def _iso(us: int) -> str:
    return (EPOCH + dt.timedelta(microseconds=int(us))).strftime(ISO_US)


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _copy_jsonl(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> None:
    """Newline-delimited JSON, UTF-8 as is, rows in the query's order."""
    target = str(path).replace("'", "''")
    con.execute(f"copy ({query}) to '{target}' (format json)")


# ---------------------------------------------------------------------------------------
# Source 3: analyzer events
# ---------------------------------------------------------------------------------------

ANALYZER_SELECT = """
    left(sha256(invocation_uuid || ':' || skill_id), 16) as event_id,
    case when has_fraction then strftime(ts, '%Y-%m-%dT%H:%M:%S.%fZ')
         else strftime(ts, '%Y-%m-%dT%H:%M:%SZ') end as "timestamp",
    session_id,
    skill_id::varchar as skill_id,
    invocation_uuid,
    outcome::varchar as outcome,
    confidence,
    correction_type::varchar as correction_type,
    user_message_snippet::varchar as user_message_snippet,
    turns_to_feedback,
    ai_tools_used,
    dimension_hint::varchar as dimension_hint
"""


def _analyzer_table(rng: np.random.Generator, n: int, frame: TimeFrame) -> pa.Table:
    """n analyzer events in time order, as Arrow columns (formatting is left to DuckDB)."""
    ts = _sample_times(rng, n, frame)
    has_fraction = rng.random(n) < 0.3
    ts = np.where(has_fraction, ts, ts - ts % SECOND_US)
    order = np.argsort(ts, kind="stable")
    ts, has_fraction = ts[order], has_fraction[order]

    skill = _assign_skills(rng, ts, frame)
    outcome = _assign_outcomes(rng, skill, ts, frame)
    is_correction, is_partial, is_acceptance = outcome == 0, outcome == 1, outcome == 2
    explicit = rng.random(n) < 0.45
    confidence = np.select([is_correction, is_partial, explicit], [0.9, 0.7, 0.8], default=0.6)
    correction_type = np.where(is_partial, 3, _categorical(rng, n, (0.6, 0.15, 0.25)))
    dimension_weights = np.array([s.dimension_weights for s in SKILLS], dtype=float)
    dimension = _categorical_by_row(rng, dimension_weights[skill])
    snippet = _analyzer_snippets(rng, outcome, dimension, explicit)
    new_session = rng.random(n) < 0.35
    if n:
        new_session[0] = True
    session_index = np.cumsum(new_session) - 1
    session_ids = _uuid4s(rng, int(new_session.sum()))
    tools = _categorical(rng, n, TOOL_LIST_WEIGHTS)
    tool_lists = pa.array([list(t) for t in TOOL_LISTS], pa.list_(pa.string()))
    return pa.table(
        {
            "seq": np.arange(n, dtype=np.int64),
            "ts": _timestamps(ts),
            "has_fraction": has_fraction,
            "session_id": session_ids.take(pa.array(session_index)),
            "skill_id": _labels(skill, [s.skill_id for s in SKILLS]),
            "invocation_uuid": _uuid4s(rng, n),
            "outcome": _labels(outcome, OUTCOMES),
            "confidence": confidence,
            "correction_type": _labels(correction_type, CORRECTION_TYPES, null=is_acceptance),
            "user_message_snippet": _labels(*snippet),
            "turns_to_feedback": _categorical(rng, n, (0.68, 0.2, 0.12)).astype(np.int64) + 1,
            "ai_tools_used": tool_lists.take(pa.array(tools)),
            "dimension_hint": _labels(dimension, DIMENSIONS, null=is_acceptance),
        }
    )


def _assign_skills(rng: np.random.Generator, ts: np.ndarray, frame: TimeFrame) -> np.ndarray:
    """Skill per event by popularity; a skill only exists after it was introduced."""
    weights = np.array([s.weight for s in SKILLS])
    skill = _categorical(rng, len(ts), weights)
    for index, spec in enumerate(SKILLS):
        if spec.introduced_days_ago is None:
            continue
        too_early = (skill == index) & (ts < frame.days_ago_us(spec.introduced_days_ago))
        older = np.where(np.arange(len(SKILLS)) == index, 0.0, weights)
        skill[too_early] = _categorical(rng, int(too_early.sum()), older)
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
    indices, pool = _pick_in_groups(rng, group, groups)
    privacy_mode = rng.random(len(outcome)) < 0.1  # --no-snippets runs write ""
    pool.append("")
    return np.where(privacy_mode, len(pool) - 1, indices), pool


def _archive_run(ts: np.ndarray, frame: TimeFrame) -> np.ndarray:
    """-1 for the active file, else k for the archive run on as_of - 7k days."""
    cutoff = frame.days_ago_us(ACTIVE_DAYS)
    run = (cutoff - ts - 1) // (ARCHIVE_EVERY_DAYS * DAY_US)
    return np.where(ts >= cutoff, -1, run)


def _write_analyzer_store(
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
        _copy_jsonl(
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
    _copy_jsonl(con, f"select {ANALYZER_SELECT} from analyzer_arrow where {head} order by seq", path)
    tail_path = path.with_name(path.name + ".tail")
    tail = f"archive_run = -1 and seq >= {truncated_seq}"
    _copy_jsonl(con, f"select {ANALYZER_SELECT} from analyzer_arrow where {tail} order by seq", tail_path)
    with tail_path.open("rb") as source, path.open("ab") as target:
        first = source.readline().decode("utf-8")
        if first:
            target.write(first[: int(len(first) * 0.55)].encode("utf-8") + b"\n")
        for chunk in iter(lambda: source.read(1 << 20), b""):
            target.write(chunk)
    tail_path.unlink()


# ---------------------------------------------------------------------------------------
# Source 1: session feedback
# ---------------------------------------------------------------------------------------

SOURCES = ("cli_end", "cli_exit", "api_end")
LABELS = ("positive", "negative", "skip")
LABEL_WEIGHTS_BY_SOURCE = ((0.70, 0.18, 0.12), (0.55, 0.15, 0.30), (0.78, 0.17, 0.05))
RAW_THREAD_ID = "alice-s1"

SESSION_FEEDBACK_DDL = """
CREATE TABLE session_feedback (
    insertion_order INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    session_id_opaque TEXT NOT NULL,
    user_id_or_null TEXT,
    recorded_at TEXT NOT NULL,
    recorded_date TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('positive','negative','skip')),
    turn_count_at_end INTEGER NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('cli_end','cli_exit','api_end')),
    schema_version INTEGER NOT NULL DEFAULT 1,
    value TEXT NOT NULL
)
"""

SESSION_FEEDBACK_VIEW = f"""
create or replace view session_feedback_records as
select
    seq,
    in_sqlite,
    in_export,
    id,
    case when is_bad then '{RAW_THREAD_ID}' else sha256(thread_id) end as session_id_opaque,
    case when is_bad then 'alice' else user_id::varchar end as user_id_or_null,
    strftime(ts, '%Y-%m-%dT%H:%M:%S.%fZ') as recorded_at,
    label::varchar as label,
    turn_count_at_end,
    source::varchar as source,
    1 as schema_version
from session_feedback_arrow
"""
SESSION_FEEDBACK_FIELDS = (
    "id, session_id_opaque, user_id_or_null, recorded_at, label, turn_count_at_end, source, schema_version"
)
SESSION_FEEDBACK_VALUE = "to_json({" + ", ".join(f"'{f}': {f}" for f in SESSION_FEEDBACK_FIELDS.split(", ")) + "})"


def _user_pool(rng: np.random.Generator, n: int) -> list[str]:
    """Named users first (they show up in every source), then generated ids."""
    generated = _strings_from_chars(_hex_ids(rng, max(n - len(NAMED_USERS), 0), "user-", 6))
    return list(NAMED_USERS[:n]) + generated.to_pylist()


def _session_feedback_table(rng: np.random.Generator, n: int, frame: TimeFrame) -> pa.Table:
    ts = _sample_times(rng, n, frame, hour_mean=16.0, hour_sd=4.0)
    n_threads = max(1, int(n * 0.75))
    is_cli = rng.random(n_threads) < 0.68
    cli_ids = _strings_from_chars(_hex_ids(rng, n_threads, "local-", 12))
    web_ids = _strings_from_chars(_prefixed_chars("web-", _base36_chars(rng.integers(0, 36**8, n_threads), 8)))
    users = _user_pool(rng, max(len(NAMED_USERS), n // 25))
    thread_user = rng.integers(0, len(users), n_threads)
    incognito = rng.random(n_threads) < 0.15

    thread = rng.integers(0, n_threads, n)
    thread_ids = pc.if_else(pa.array(is_cli), cli_ids, web_ids).take(pa.array(thread))
    source = np.where(is_cli[thread], (rng.random(n) >= 0.62).astype(np.int64), 2)
    turns = np.clip(1 + rng.lognormal(np.log(8.0), 0.8, n).astype(np.int64), 1, 60)
    label_weights = np.array(LABEL_WEIGHTS_BY_SOURCE)[source]
    short = turns <= 3  # very short sessions skip more often
    label_weights[short] += np.array([-0.12, 0.0, 0.12])
    label = _categorical_by_row(rng, label_weights)
    return pa.table(
        {
            "seq": np.arange(n, dtype=np.int64),
            "ts": _timestamps(ts),
            "id": _uuid4s(rng, n),
            "thread_id": thread_ids,
            "user_id": _labels(thread_user[thread], users, null=incognito[thread]),
            "label": _labels(label, LABELS),
            "turn_count_at_end": turns,
            "source": _labels(source, SOURCES),
        }
    )


def _write_session_feedback(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    n: int,
    rng: np.random.Generator,
    frame: TimeFrame,
    report: Progress,
) -> int:
    """Older records in the legacy SQLite file, newer ones in the JSON-lines export."""
    table = _session_feedback_table(rng, n + 1, frame)  # one extra becomes the bad line
    ts = table.column("ts").to_numpy().view(np.int64)
    split = int(np.searchsorted(ts, frame.days_ago_us(SQLITE_MIGRATION_DAYS_AGO)))
    split = min(split, max(n + 1 - SQLITE_EXPORT_OVERLAP - 2, 0))
    sqlite_end = min(split + SQLITE_EXPORT_OVERLAP, n + 1)
    bad = (sqlite_end + n + 1) // 2 if sqlite_end < n + 1 else n
    seq = np.arange(n + 1)
    table = (
        table.append_column("is_bad", pa.array(seq == bad))
        .append_column("in_sqlite", pa.array(seq < sqlite_end))
        .append_column("in_export", pa.array(seq >= split))
    )
    con.register("session_feedback_arrow", table)
    con.execute(SESSION_FEEDBACK_VIEW)
    folder.mkdir(parents=True, exist_ok=True)
    _write_session_feedback_sqlite(con, folder / "session_feedback.sqlite3")
    _copy_jsonl(
        con,
        f"select {SESSION_FEEDBACK_FIELDS} from session_feedback_records where in_export order by seq",
        folder / "session_feedback_export.jsonl",
    )
    report(
        f"session feedback: {n:,} records ({sqlite_end:,} in SQLite, {n + 1 - split:,} in the "
        f"export, {sqlite_end - split} in both)"
    )
    return n


def _write_session_feedback_sqlite(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    path.unlink(missing_ok=True)
    rows = con.execute(
        f"""
        select id, session_id_opaque, user_id_or_null, recorded_at, left(recorded_at, 10),
               label, turn_count_at_end, source, schema_version, {SESSION_FEEDBACK_VALUE}::varchar
        from session_feedback_records where in_sqlite order by seq
        """
    )
    db = sqlite3.connect(path)
    try:
        db.execute("pragma journal_mode = delete")
        db.execute("pragma synchronous = off")
        db.execute(SESSION_FEEDBACK_DDL)
        insert = (
            "insert into session_feedback (id, session_id_opaque, user_id_or_null, recorded_at, "
            "recorded_date, label, turn_count_at_end, source, schema_version, value) "
            "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        while batch := rows.fetchmany(50_000):
            db.executemany(insert, batch)
        db.commit()
    finally:
        db.close()


# ---------------------------------------------------------------------------------------
# Source 2: turn reactions
# ---------------------------------------------------------------------------------------

USER_TYPES = ("privileged", "registered", "anonymous")
TRACKS = ("A", "B", "C")
ORIGINS = ("user", "machine")

REACTIONS_VIEW = """
create or replace view reaction_envelopes as
with base as (
    select
        *,
        'turn_' || turn_ms || '_' || turn_suffix as turn_id,
        strftime(ts, '%Y-%m-%dT%H:%M:%S.%fZ') as ts_iso,
        'artifact-' || strftime(ts, '%Y-%m-%dT%H-%M-%S-%f') || '-' || seq as artifact_name
    from reactions_arrow
)
select
    seq,
    in_blob,
    pretty,
    tenant::varchar || '/' || project::varchar || '/' || conversation_id || '/'
        || artifact_name || '.json' as blob_path,
    tenant::varchar as tenant,
    project::varchar as project,
    user_id::varchar as user_id,
    case when has_track_tag
        then [tag_kind, 'turn:' || turn_id, 'origin:' || origin::varchar, 'track:' || track_id::varchar]
        else [tag_kind, 'turn:' || turn_id, 'origin:' || origin::varchar]
    end as tags,
    {
        'reaction': {
            'turn_id': turn_id,
            'text': text::varchar,
            'confidence': confidence,
            'ts': ts_iso,
            'reaction': reaction::varchar,
            'origin': origin::varchar
        },
        'meta': {
            'rn': 'ef:' || tenant::varchar || ':' || project::varchar || ':' || conversation_id
                || ':' || turn_id || ':artifact:' || artifact_name,
            'turn_id': turn_id,
            'track_id': track_id::varchar,
            'user_type': user_type::varchar,
            'kind': 'turn.log.reaction'
        },
        'conversation_id': conversation_id,
        'bundle_id': bundle_id::varchar
    } as payload
from base
"""


@dataclass(frozen=True)
class Conversations:
    """Conversation attributes, one entry per conversation."""

    tenant: np.ndarray
    project: np.ndarray  # index into PROJECT_KEYS
    user: np.ndarray
    start_us: np.ndarray
    turn_gap_us: np.ndarray
    n_turns: np.ndarray
    track: np.ndarray
    ids: pa.Array


PROJECT_KEYS: tuple[tuple[str, str], ...] = tuple(
    (tenant, project) for tenant, projects in TENANTS.items() for project in projects
)


def _conversations(rng: np.random.Generator, n: int, frame: TimeFrame) -> Conversations:
    tenant = _categorical(rng, n, TENANT_WEIGHTS)
    first_project = np.cumsum([0] + [len(p) for p in TENANTS.values()])[:-1]
    n_projects = np.array([len(p) for p in TENANTS.values()])
    project = first_project[tenant] + (rng.random(n) * n_projects[tenant]).astype(np.int64)
    return Conversations(
        tenant=tenant,
        project=project,
        user=rng.integers(0, max(len(NAMED_USERS), n // 4), n),
        # start at least a day before as_of: turn, reaction and replacement delays stay < 24 h
        start_us=rng.permutation(_sample_times(rng, n, frame, skip_last_days=1)),
        turn_gap_us=rng.integers(40, 300, n) * SECOND_US,
        n_turns=np.minimum(1 + rng.geometric(0.15, n), 20),
        track=_categorical(rng, n, (0.5, 0.3, 0.2)),
        ids=_uuid4s(rng, n),
    )


@dataclass
class ReactionRows:
    """Reaction artifacts as parallel arrays (before they become an Arrow table)."""

    conversation: np.ndarray
    turn: np.ndarray
    is_user: np.ndarray
    reaction: np.ndarray  # index into REACTIONS, 3 = null (clear)
    confidence: np.ndarray
    ts: np.ndarray
    text: np.ndarray  # index into the comment pool, -1 = null

    def concat(self, other: ReactionRows) -> ReactionRows:
        return ReactionRows(*(np.concatenate([a, b]) for a, b in zip(self.arrays(), other.arrays(), strict=True)))

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.conversation, self.turn, self.is_user, self.reaction, self.confidence,
                self.ts, self.text)  # fmt: skip

    def take(self, index: np.ndarray) -> ReactionRows:
        return ReactionRows(*(a[index] for a in self.arrays()))


def _comment_pool() -> tuple[list[str], np.ndarray, np.ndarray]:
    """All reaction comments in one pool, with offsets and sizes by (origin, reaction)."""
    pool: list[str] = []
    offsets = np.zeros((len(ORIGINS), len(REACTIONS)), dtype=np.int64)
    sizes = np.zeros((len(ORIGINS), len(REACTIONS)), dtype=np.int64)
    for origin, comments in enumerate((USER_COMMENTS, MACHINE_COMMENTS)):
        for reaction, name in enumerate(REACTIONS):
            offsets[origin, reaction], sizes[origin, reaction] = len(pool), len(comments[name])
            pool.extend(comments[name])
    return pool, offsets, sizes


def _comments(rng: np.random.Generator, is_user: np.ndarray, reaction: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Index of a fitting comment for a `share` of the reactions, -1 (no text) otherwise and for clears."""
    _, offsets, sizes = _comment_pool()
    origin = np.where(is_user, 0, 1)
    known = np.minimum(reaction, len(REACTIONS) - 1)
    within = (rng.random(len(reaction)) * sizes[origin, known]).astype(np.int64)
    has_text = (rng.random(len(reaction)) < share) & (reaction < len(REACTIONS))
    return np.where(has_text, offsets[origin, known] + within, -1)


def _primary_reactions(rng: np.random.Generator, n: int, conversations: Conversations) -> ReactionRows:
    conversation = rng.integers(0, len(conversations.tenant), n)
    turn = (rng.random(n) * conversations.n_turns[conversation]).astype(np.int64)
    is_user = rng.random(n) < 0.62
    reaction = np.where(is_user, _categorical(rng, n, (0.62, 0.23, 0.15)), _categorical(rng, n, (0.45, 0.4, 0.15)))
    machine_confidence = np.round(rng.uniform(0.4, 0.99, n), 2)
    pinned = rng.random(n)
    machine_confidence = np.where(pinned < 0.04, 0.70, machine_confidence)
    machine_confidence = np.where((pinned >= 0.04) & (pinned < 0.07), 0.69, machine_confidence)
    turn_at = conversations.start_us[conversation] + turn * conversations.turn_gap_us[conversation]
    delay = np.where(
        is_user,
        np.minimum(rng.exponential(3 * MINUTE_US, n), HOUR_US),
        rng.integers(30 * SECOND_US, 10 * MINUTE_US, n),
    ).astype(np.int64)
    return ReactionRows(
        conversation=conversation,
        turn=turn,
        is_user=is_user,
        reaction=reaction,
        confidence=np.where(is_user, 1.0, machine_confidence),
        ts=turn_at + delay,
        text=_comments(rng, is_user, reaction, np.where(is_user, 0.35, 0.8)),
    )


def _follow_ups(rng: np.random.Generator, primary: ReactionRows) -> ReactionRows:
    """Later user reactions on the same turn: replacements (7%) and clears (3%)."""
    draw = rng.random(len(primary.ts))
    replaced = np.flatnonzero(primary.is_user & (draw < 0.07))
    cleared = np.flatnonzero(primary.is_user & (draw >= 0.07) & (draw < 0.10))
    later = primary.take(np.concatenate([replaced, cleared]))
    n_replaced = len(replaced)
    shift = 1 + rng.integers(0, 2, len(later.ts))
    later.reaction = np.where(np.arange(len(later.ts)) < n_replaced, (later.reaction + shift) % 3, 3)
    # 1 minute to 18 hours later, log-uniform
    later.ts = later.ts + np.exp(rng.uniform(np.log(MINUTE_US), np.log(18 * HOUR_US), len(later.ts))).astype(np.int64)
    later.text = _comments(rng, later.is_user, later.reaction, np.full(len(later.ts), 0.4))
    return later


def _blob_conversations(rows: ReactionRows, conversations: Conversations) -> np.ndarray:
    """Which conversations are blob folders: all, or the newest up to BLOB_FILE_CAP reactions."""
    n_conversations = len(conversations.tenant)
    if len(rows.ts) <= BLOB_FILES_ALL_UP_TO:
        return np.ones(n_conversations, dtype=bool)
    per_conversation = np.bincount(rows.conversation, minlength=n_conversations)
    newest_first = np.argsort(-conversations.start_us, kind="stable")
    within_cap = np.cumsum(per_conversation[newest_first]) <= BLOB_FILE_CAP
    chosen = np.zeros(n_conversations, dtype=bool)
    chosen[newest_first[within_cap]] = True
    return chosen


def _with_bad_blob(rng: np.random.Generator, rows: ReactionRows, in_blob: np.ndarray) -> tuple[ReactionRows, int]:
    """Append one machine reaction with confidence 1.5 in a blob conversation."""
    candidates = np.flatnonzero(in_blob[rows.conversation])
    source = int(candidates[rng.integers(0, len(candidates))])
    bad = rows.take(np.array([source]))
    bad.is_user = np.array([False])
    bad.reaction = np.array([1])
    bad.confidence = np.array([1.5])
    bad.ts = bad.ts + 1_000
    bad.text = np.array([-1])
    return rows.concat(bad), len(rows.ts)


def _reactions_table(rng: np.random.Generator, n_target: int, frame: TimeFrame) -> tuple[pa.Table, int]:
    """Reaction artifacts in time order and the number of clean ones."""
    conversations = _conversations(rng, max(4, n_target // 5), frame)
    primary = _primary_reactions(rng, round(n_target / 1.062), conversations)
    rows = primary.concat(_follow_ups(rng, primary))
    in_blob_conversation = _blob_conversations(rows, conversations)
    rows, bad_index = _with_bad_blob(rng, rows, in_blob_conversation)
    if rows.ts.max() >= frame.end_us:
        raise AssertionError("reaction timestamps must stay before as_of")
    order = np.argsort(rows.ts, kind="stable")
    rows = rows.take(order)
    is_bad = order == bad_index
    n = len(rows.ts)
    conv = rows.conversation
    tenant_names = list(TENANTS)
    projects = [project for _, project in PROJECT_KEYS]
    turn_ms = (conversations.start_us[conv] + rows.turn * conversations.turn_gap_us[conv]) // 1000
    turn_hash = (conv.astype(np.uint64) * np.uint64(1_000_003) + rows.turn.astype(np.uint64)) * np.uint64(
        0x9E3779B97F4A7C15
    )
    users = _user_pool(rng, int(conversations.user.max()) + 1)
    user = conversations.user[conv]
    comment_pool, _, _ = _comment_pool()
    table = pa.table(
        {
            "seq": np.arange(n, dtype=np.int64),
            "in_blob": in_blob_conversation[conv],
            "pretty": rng.random(n) < 0.4,
            "tenant": _labels(conversations.tenant[conv], tenant_names),
            "project": _labels(conversations.project[conv], projects),
            "user_id": _labels(user, users),
            "user_type": _labels(np.where(user % 5 == 0, 0, np.where(user % 10 == 7, 2, 1)), USER_TYPES),
            "conversation_id": conversations.ids.take(pa.array(conv)),
            "bundle_id": _labels(conversations.project[conv], [BUNDLES[p] for p in projects]),
            "turn_ms": turn_ms,
            "turn_suffix": _strings_from_chars(_base36_chars(turn_hash >> np.uint64(20), 6)),
            "track_id": _labels(conversations.track[conv], TRACKS),
            "tag_kind": np.where(rng.random(n) < 0.03, "kind:turn.log.reaction", "artifact:turn.log.reaction"),
            "has_track_tag": rng.random(n) >= 0.05,
            "origin": _labels(np.where(rows.is_user, 0, 1), ORIGINS),
            "reaction": _labels(np.minimum(rows.reaction, 2), REACTIONS, null=rows.reaction == 3),
            "confidence": rows.confidence,
            "ts": _timestamps(rows.ts),
            "text": _labels(np.maximum(rows.text, 0), comment_pool, null=rows.text < 0),
            "is_bad": is_bad,
        }
    )
    return table, n - 1


def _write_reactions(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    n_target: int,
    rng: np.random.Generator,
    frame: TimeFrame,
    report: Progress,
) -> tuple[int, bool]:
    """Blob files (pretty or compact) and, at large scale, a JSON-lines export."""
    table, n_clean = _reactions_table(rng, n_target, frame)
    con.register("reactions_arrow", table)
    con.execute(REACTIONS_VIEW)
    blobs = folder / "blobs"
    for stale in sorted(blobs.rglob("*.json")) if blobs.exists() else []:
        stale.unlink()
    n_files = _write_reaction_blobs(con, blobs)
    export = folder / "reactions_export.jsonl"
    export_written = n_files < len(table)
    if export_written:
        _copy_jsonl(
            con,
            "select tenant, project, user_id, tags, payload from reaction_envelopes where not in_blob order by seq",
            export,
        )
    else:
        export.unlink(missing_ok=True)
    report(f"reactions: {n_clean:,} artifacts, {n_files:,} blob files")
    return n_clean, export_written


def _write_reaction_blobs(con: duckdb.DuckDBPyConnection, blobs: Path) -> int:
    rows = con.execute(
        "select blob_path, pretty, to_json({'tenant': tenant, 'project': project, "
        "'user_id': user_id, 'tags': tags, 'payload': payload})::varchar "
        "from reaction_envelopes where in_blob order by seq"
    ).fetchall()
    made: set[Path] = set()
    for blob_path, pretty, envelope in rows:
        path = blobs / blob_path
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        text = json.dumps(json.loads(envelope), ensure_ascii=False, indent=2) if pretty else envelope
        path.write_text(text + "\n", encoding="utf-8")
    return len(rows)


# ---------------------------------------------------------------------------------------
# Source 4: workspace feedback, sessions, golden sessions, replays and eval runs
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workspace:
    """Stable identities of the workspace: tenants, users, agents."""

    tenant_ids: dict[str, str]
    users: dict[str, list[str]]  # the first two users of a tenant are its admins
    agents: dict[str, list[str]]  # one per AGENT_NAMES; the first is the eval baseline
    eval_agents: dict[str, dict[str, str]]  # tenant -> eval config label -> agent id
    review_agent: str
    entities: dict[str, list[str]]


def demo_tenant_id(tenant: str) -> str:
    """The workspace tenant id (a uuid) of a demo tenant: uuid5 of its name, whatever the seed."""
    return str(uuid.uuid5(DEMO_TENANT_NAMESPACE, tenant))


def _workspace_identities(rng: np.random.Generator) -> Workspace:
    tenant_ids = {tenant: demo_tenant_id(tenant) for tenant in TENANTS}
    # The tenant ids used to be drawn here: draw as many uuids still, so that every identity drawn
    # after them (users, agents, entities) stays what it was for a given seed.
    _uuid4_list(rng, len(TENANTS))
    users = {tenant: _uuid4_list(rng, 12) for tenant in TENANTS}
    agents = {tenant: _uuid4_list(rng, len(AGENT_NAMES)) for tenant in TENANTS}
    eval_agents = {
        tenant: dict(zip(EVAL_AGENTS, [agents[tenant][0], *_uuid4_list(rng, 2)], strict=True)) for tenant in TENANTS
    }
    return Workspace(
        tenant_ids=tenant_ids,
        users=users,
        agents=agents,
        eval_agents=eval_agents,
        review_agent=_uuid4_list(rng, 1)[0],
        entities={tenant: _uuid4_list(rng, 40) for tenant in TENANTS},
    )


SESSION_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("tenant_id", pa.string()),
        ("agent_id", pa.string()),
        ("session_type", pa.string()),
        ("status", pa.string()),
        ("created_at", pa.timestamp("us")),
        ("completed_at", pa.timestamp("us")),
        ("metadata", pa.string()),
    ]
)
FEEDBACK_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("tenant_id", pa.string()),
        ("source_type", pa.string()),
        ("rating", pa.string()),
        ("comment", pa.string()),
        ("session_id", pa.string()),
        ("entity_id", pa.string()),
        ("agent_id", pa.string()),
        ("context", pa.string()),
        ("status", pa.string()),
        ("reviewed_by_agent_id", pa.string()),
        ("reviewed_by_user_id", pa.string()),
        ("reviewed_at", pa.timestamp("us")),
        ("review_notes", pa.string()),
        ("created_by", pa.string()),
        ("created_at", pa.timestamp("us")),
    ]
)
EVAL_RUN_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("tenant_id", pa.string()),
        ("name", pa.string()),
        ("set_name", pa.string()),
        ("agent_id", pa.string()),
        ("triggered_by", pa.string()),
        ("started_at", pa.timestamp("us")),
        ("completed_at", pa.timestamp("us")),
        ("golden_session_count", pa.int64()),
        ("passed_count", pa.int64()),
        ("failed_count", pa.int64()),
        ("results", pa.string()),
        ("created_by", pa.string()),
    ]
)
ISO_SQL = "'%Y-%m-%dT%H:%M:%S.%fZ'"


def _write_workspace(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    volumes: dict[str, int],
    rng: np.random.Generator,
    frame: TimeFrame,
    report: Progress,
) -> dict[str, int]:
    folder.mkdir(parents=True, exist_ok=True)
    ids = _workspace_identities(rng)
    sessions, session_tenant = _ordinary_sessions(rng, volumes["workspace_sessions"], ids, frame)
    evals = _evals(rng, ids, frame)
    feedback = _workspace_feedback(rng, volumes["workspace_feedback"], sessions, session_tenant, ids, frame)
    feedback = pa.concat_tables([feedback, _replay_failure_feedback(rng, evals, ids, frame)])
    all_sessions = pa.concat_tables([sessions, pa.Table.from_pylist(evals.golden + evals.replays, SESSION_SCHEMA)])
    eval_runs = pa.Table.from_pylist(evals.runs, EVAL_RUN_SCHEMA)
    _write_rows(con, all_sessions, "metadata", "created_at", folder / "sessions.jsonl")
    _write_rows(con, feedback, "context", "created_at", folder / "feedback.jsonl")
    _write_rows(con, eval_runs, "results", "started_at", folder / "eval_runs.jsonl")
    counts = {
        "workspace_feedback": len(feedback),
        "workspace_sessions": len(all_sessions),
        "workspace_eval_runs": len(eval_runs),
    }
    report(
        f"workspace: {counts['workspace_feedback']:,} feedback rows, "
        f"{counts['workspace_sessions']:,} sessions ({len(evals.golden)} golden, "
        f"{len(evals.replays)} replays), {counts['workspace_eval_runs']} eval runs"
    )
    return counts


def _write_rows(con: duckdb.DuckDBPyConnection, table: pa.Table, json_column: str, order_by: str, path: Path) -> None:
    """Rows in time order; timestamps as ISO-8601 Z text, the JSON column as a nested object."""
    columns = []
    for field in table.schema:
        if field.name == json_column:
            columns.append(f"{field.name}::json as {field.name}")
        elif pa.types.is_timestamp(field.type):
            columns.append(f"strftime({field.name}, {ISO_SQL}) as {field.name}")
        else:
            columns.append(field.name)
    times = table.column(order_by).to_numpy(zero_copy_only=False).astype("datetime64[us]")
    position = np.empty(len(table), dtype=np.int64)
    position[np.argsort(times.view(np.int64), kind="stable")] = np.arange(len(table))
    con.register("workspace_rows", table.append_column("seq", pa.array(position)))
    _copy_jsonl(con, f"select {', '.join(columns)} from workspace_rows order by seq", path)
    con.unregister("workspace_rows")


def _ordinary_sessions(
    rng: np.random.Generator, n: int, ids: Workspace, frame: TimeFrame
) -> tuple[pa.Table, np.ndarray]:
    """Everyday sessions and the tenant (index into TENANTS) of each."""
    tenants = list(TENANTS)
    tenant = _categorical(rng, n, TENANT_WEIGHTS)
    created = _sample_times(rng, n, frame, hour_mean=13.0)
    status = _categorical(rng, n, SESSION_STATUS_WEIGHTS)
    duration = np.minimum(rng.lognormal(np.log(90.0), 1.0, n) * SECOND_US, 2 * HOUR_US)
    completed = created + duration.astype(np.int64)
    running = completed >= frame.end_us  # still running at as_of
    status = np.where(running, SESSION_STATUSES.index("running"), status)
    running |= status == SESSION_STATUSES.index("running")
    agent = rng.integers(0, len(AGENT_NAMES), n)
    trigger = _categorical(rng, n, (0.6, 0.2, 0.12, 0.08))
    event_count = 2 + rng.geometric(0.08, n)
    metadata = [
        _compact_json({"trigger": SESSION_TRIGGERS[t], "event_count": int(c)})
        for t, c in zip(trigger, event_count, strict=True)
    ]
    table = pa.table(
        {
            "id": _uuid4s(rng, n).cast(pa.string()),
            "tenant_id": pa.array([ids.tenant_ids[tenants[t]] for t in tenant], pa.string()),
            "agent_id": pa.array([ids.agents[tenants[t]][a] for t, a in zip(tenant, agent, strict=True)], pa.string()),
            "session_type": pa.array([SESSION_TYPES[i] for i in _categorical(rng, n, SESSION_TYPE_WEIGHTS)]),
            "status": pa.array([SESSION_STATUSES[s] for s in status], pa.string()),
            "created_at": _timestamps(created),
            "completed_at": _timestamps(completed, null=running),
            "metadata": pa.array(metadata, pa.string()),
        },
        schema=SESSION_SCHEMA,
    )
    return table, tenant


@dataclass(frozen=True)
class Review:
    """Processing lifecycle of feedback rows."""

    status: np.ndarray  # index into FEEDBACK_STATUSES
    reviewed_us: np.ndarray
    by_agent: np.ndarray


def _reviews(rng: np.random.Generator, created_us: np.ndarray, always_applied: np.ndarray, frame: TimeFrame) -> Review:
    """Recent feedback is mostly pending; older feedback mostly reviewed, applied or dismissed."""
    n = len(created_us)
    age_days = (frame.end_us - created_us) / DAY_US
    pending = rng.random(n) < 0.06 + 0.9 * np.exp(-age_days / 2.5)
    outcome = 1 + _categorical(rng, n, (0.25, 0.4, 0.35))
    delay = np.exp(rng.uniform(np.log(10 * MINUTE_US), np.log(4 * DAY_US), n)).astype(np.int64)
    reviewed = created_us + delay
    pending |= reviewed >= frame.end_us
    status = np.where(always_applied, 2, np.where(pending, 0, outcome))
    reviewed = np.where(always_applied, np.minimum(created_us + SECOND_US, frame.end_us - 1), reviewed)
    return Review(status=status, reviewed_us=reviewed, by_agent=rng.random(n) < 0.7)


def _workspace_feedback(
    rng: np.random.Generator,
    n: int,
    sessions: pa.Table,
    session_tenant: np.ndarray,
    ids: Workspace,
    frame: TimeFrame,
) -> pa.Table:
    """Feedback from every intake point, some linked to a session of the same tenant."""
    tenants = list(TENANTS)
    session_ids = sessions.column("id").to_pylist()
    session_agents = sessions.column("agent_id").to_pylist()
    session_created = sessions.column("created_at").to_numpy().view(np.int64)

    source_type = _categorical(rng, n, SOURCE_TYPE_WEIGHTS)
    tenant = _categorical(rng, n, TENANT_WEIGHTS)
    linked, pick = _link_to_sessions(rng, tenant, source_type, session_tenant)
    follow_up = np.exp(rng.uniform(np.log(MINUTE_US), np.log(DAY_US), n)).astype(np.int64)
    room = frame.end_us - 1 - session_created[pick]  # feedback on a recent session stays before as_of
    follow_up = np.where(follow_up < room, follow_up, (room * rng.random(n)).astype(np.int64))
    created = np.where(linked, session_created[pick] + follow_up, _sample_times(rng, n, frame))
    rating = _categorical_by_row(rng, np.array(RATING_WEIGHTS_BY_SOURCE_TYPE)[source_type])
    review = _reviews(rng, created, source_type == SOURCE_TYPES.index("extraction"), frame)
    context = _feedback_contexts(rng, source_type)
    comment_draw = rng.random(n)
    entity_draw = rng.integers(0, 40, n)
    has_entity = np.isin(source_type, [1, 2]) | (rng.random(n) < 0.1)
    agent_draw = rng.integers(0, len(AGENT_NAMES), n)
    no_agent = rng.random(n) < 0.08
    user_draw = rng.integers(0, 12, n)
    admin_draw = rng.integers(0, 2, n)
    notes_draw = rng.random(n)
    rows = []
    for i in range(n):
        name = tenants[tenant[i]]
        status = FEEDBACK_STATUSES[review.status[i]]
        is_pending = status == "pending"
        rating_name = RATINGS[rating[i]]
        comments = FEEDBACK_COMMENTS[rating_name]
        notes = REVIEW_NOTES.get(status, ())
        rows.append(
            {
                "tenant_id": ids.tenant_ids[name],
                "source_type": SOURCE_TYPES[source_type[i]],
                "rating": rating_name,
                "comment": comments[int(comment_draw[i] * 10) % len(comments)] if comment_draw[i] < 0.7 else None,
                "session_id": session_ids[pick[i]] if linked[i] else None,
                "entity_id": ids.entities[name][entity_draw[i]] if has_entity[i] else None,
                "agent_id": session_agents[pick[i]]
                if linked[i]
                else (None if no_agent[i] else ids.agents[name][agent_draw[i]]),
                "context": context[i],
                "status": status,
                "reviewed_by_agent_id": None if is_pending or not review.by_agent[i] else ids.review_agent,
                "reviewed_by_user_id": None if is_pending or review.by_agent[i] else ids.users[name][admin_draw[i]],
                "reviewed_at": None if is_pending else int(review.reviewed_us[i]),
                "review_notes": notes[int(notes_draw[i] * 10) % len(notes)] if notes and notes_draw[i] < 0.85 else None,
                "created_by": ids.users[name][user_draw[i]],
                "created_at": int(created[i]),
            }
        )
    return _feedback_table(rng, rows)


def _link_to_sessions(
    rng: np.random.Generator, tenant: np.ndarray, source_type: np.ndarray, session_tenant: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Whether each feedback row is about a session, and which session of its own tenant."""
    n = len(tenant)
    by_tenant = np.argsort(session_tenant, kind="stable")
    per_tenant = np.bincount(session_tenant, minlength=len(TENANTS))
    first = np.concatenate(([0], np.cumsum(per_tenant)[:-1]))
    linked = (rng.random(n) < np.array(SOURCE_TYPE_LINK_SHARE)[source_type]) & (per_tenant[tenant] > 0)
    within = (rng.random(n) * per_tenant[tenant]).astype(np.int64)
    return linked, by_tenant[np.minimum(first[tenant] + within, len(by_tenant) - 1)]


def _feedback_table(rng: np.random.Generator, rows: list[dict[str, object]]) -> pa.Table:
    """Feedback rows with fresh ids; timestamps given as epoch microseconds."""
    feedback_ids = _uuid4_list(rng, len(rows))
    columns: dict[str, list[object]] = {field.name: [] for field in FEEDBACK_SCHEMA}
    for feedback_id, row in zip(feedback_ids, rows, strict=True):
        columns["id"].append(feedback_id)
        for name, value in row.items():
            columns[name].append(value)
    arrays = []
    for field in FEEDBACK_SCHEMA:
        values = columns[field.name]
        if pa.types.is_timestamp(field.type):
            us = np.array([-1 if v is None else v for v in values], dtype=np.int64)
            arrays.append(_timestamps(us, null=us < 0))
        else:
            arrays.append(pa.array(values, field.type))
    return pa.Table.from_arrays(arrays, schema=FEEDBACK_SCHEMA)


def _feedback_contexts(rng: np.random.Generator, source_type: np.ndarray) -> list[str]:
    """Source-specific context objects, as the unified feedback table stores them."""
    n = len(source_type)
    ref_ids = _uuid4_list(rng, n)
    criteria_sets = _uuid4_list(rng, 4)
    entity_types = _uuid4_list(rng, 5)
    small = rng.integers(0, 1000, (n, 3))
    contexts = []
    for i in range(n):
        kind = SOURCE_TYPES[source_type[i]]
        a, b, c = (int(v) for v in small[i])
        if kind == "chat":
            context: dict[str, object] = {"chat_id": ref_ids[i], "message_index": a % 30}
        elif kind == "response":
            context = {
                "response_id": ref_ids[i],
                "criteria_set_id": criteria_sets[b % 4],
                "field_name": FIELD_NAMES[c % len(FIELD_NAMES)],
            }
        elif kind == "extraction":
            context = {
                "field_name": FIELD_NAMES[a % len(FIELD_NAMES)],
                "entity_type_id": entity_types[b % 5],
                "rejected_value": REJECTED_VALUES[c % len(REJECTED_VALUES)],
            }
        elif kind == "tool":
            context = {"tool_slug": TOOL_SLUGS[a % len(TOOL_SLUGS)], "tool_run_id": ref_ids[i]}
        elif kind == "session":
            context = {"failure_reason": FAILURE_REASONS[a % len(FAILURE_REASONS)], "event_id": ref_ids[i]}
        else:
            context = {"surface": "agent-review", "flagged": ("message", "response", "session")[a % 3]}
        contexts.append(_compact_json(context))
    return contexts


@dataclass(frozen=True)
class FailedReplay:
    """A replay that diverged from its golden session (it becomes a feedback row)."""

    tenant: str
    agent_id: str
    golden_id: str
    replay_id: str
    completed_us: int
    dimensions: tuple[str, ...]


@dataclass
class Evals:
    """Golden sessions, replays and eval runs (rows as dicts), plus the failed replays."""

    golden: list[dict[str, object]]
    replays: list[dict[str, object]]
    runs: list[dict[str, object]]
    failed: list[FailedReplay]


def _evals(rng: np.random.Generator, ids: Workspace, frame: TimeFrame) -> Evals:
    evals = Evals(golden=[], replays=[], runs=[], failed=[])
    for set_index, golden_set in enumerate(GOLDEN_SETS):
        golden_ids = _golden_sessions(rng, evals, set_index, golden_set, ids, frame)
        for agent_index, agent in enumerate(EVAL_AGENTS):
            for run in range(EVAL_RUNS):
                _eval_run(rng, evals, golden_set, golden_ids, agent_index, agent, run, set_index, ids, frame)
    return evals


def _golden_sessions(
    rng: np.random.Generator,
    evals: Evals,
    set_index: int,
    golden_set: GoldenSet,
    ids: Workspace,
    frame: TimeFrame,
) -> list[str]:
    tenant = golden_set.tenant
    golden_ids = _uuid4_list(rng, GOLDEN_PER_SET)
    entities = ids.entities[tenant]
    for g, golden_id in enumerate(golden_ids):
        created = frame.days_ago_us(160 - 3 * g - set_index) + int(rng.integers(9 * HOUR_US, 18 * HOUR_US))
        promoted = created + int(rng.integers(1, 5)) * DAY_US + int(rng.integers(0, HOUR_US))
        snapshot = {
            "agent_id": ids.eval_agents[tenant]["baseline"],
            "initial_message": GOLDEN_MESSAGES[(g + set_index) % len(GOLDEN_MESSAGES)],
            "entity_id": entities[(g * 7 + set_index) % len(entities)] if g % 3 else None,
            "view_context": {"page": ("deal", "chat", "contacts")[set_index], "tab": "overview"},
            "tool_grants": [["crm", "sec"], ["crm"], ["crm", "web"]][set_index],
        }
        golden = {
            "set": golden_set.name,
            "promoted_at": _iso(promoted),
            "promoted_by": ids.users[tenant][g % 2],
            "snapshot": snapshot,
        }
        evals.golden.append(
            {
                "id": golden_id,
                "tenant_id": ids.tenant_ids[tenant],
                "agent_id": ids.eval_agents[tenant]["baseline"],
                "session_type": golden_set.session_type,
                "status": "completed",
                "created_at": created,
                "completed_at": created + int(rng.integers(40, 400)) * SECOND_US,
                "metadata": _compact_json({"golden": golden}),
            }
        )
    return golden_ids


def _cell_passes(set_name: str, golden_index: int, agent: str, run: int) -> bool:
    return CELL_PATTERNS.get((set_name, golden_index, agent), "P" * EVAL_RUNS)[run] == "P"


def _eval_result(
    rng: np.random.Generator, golden_set: GoldenSet, passed: bool, agent_index: int, run: int
) -> tuple[dict[str, object], list[dict[str, str]]]:
    """Per-dimension results; a replay passes when every dimension passed."""
    dims = golden_set.dimensions
    failing: set[int] = set()
    if not passed:
        failing = {int(i) for i in rng.choice(len(dims), size=int(rng.integers(1, 3)), replace=False)}
    dimensions: dict[str, object] = {}
    divergences: list[dict[str, str]] = []
    scores = []
    for index, name in enumerate(dims):
        if index in failing:
            score = round(float(rng.uniform(0.25, 0.7)), 3)
            expected, actual = DIVERGENCE_VALUES[name]
            divergences.append({"dimension": name, "severity": "major", "expected": expected, "actual": actual})
        else:
            drift = 0.004 * run if agent_index == 1 else 0.0
            score = round(min(float(rng.uniform(0.86, 0.99)) + drift, 1.0), 3)
        scores.append(score)
        dimensions[name] = {"passed": index not in failing, "score": score}
    result = {
        "session_type": golden_set.session_type,
        "dimensions": dimensions,
        "overall_accuracy": round(sum(scores) / len(scores), 3),
        "divergences": divergences,
    }
    return result, divergences


def _eval_run(
    rng: np.random.Generator,
    evals: Evals,
    golden_set: GoldenSet,
    golden_ids: list[str],
    agent_index: int,
    agent: str,
    run: int,
    set_index: int,
    ids: Workspace,
    frame: TimeFrame,
) -> None:
    """One weekly run of one agent config over one golden set: replays plus the run row."""
    tenant = golden_set.tenant
    agent_id = ids.eval_agents[tenant][agent]
    run_id = _uuid4_list(rng, 1)[0]
    weeks_ago = EVAL_RUNS - 1 - run
    started = (
        frame.days_ago_us(1 + 7 * weeks_ago) + 2 * HOUR_US + set_index * 20 * MINUTE_US
        + agent_index * 6 * MINUTE_US
    )  # fmt: skip
    triggered_by = "post-deploy" if run == 4 else "manual" if (run, agent) == (7, EVAL_AGENTS[1]) else "scheduled"
    replay_ids = _uuid4_list(rng, len(golden_ids))
    by_session: dict[str, object] = {}
    passed_count = 0
    completed = started
    for g, (golden_id, replay_id) in enumerate(zip(golden_ids, replay_ids, strict=True)):
        passed = _cell_passes(golden_set.name, g, agent, run)
        result, divergences = _eval_result(rng, golden_set, passed, agent_index, run)
        created = started + g * 45 * SECOND_US + int(rng.integers(0, SECOND_US))
        completed = created + int(rng.integers(20, 90)) * SECOND_US
        evals.replays.append(
            {
                "id": replay_id,
                "tenant_id": ids.tenant_ids[tenant],
                "agent_id": agent_id,
                "session_type": golden_set.session_type,
                "status": "completed",
                "created_at": created,
                "completed_at": completed,
                "metadata": _compact_json({"eval_source": golden_id, "eval_run_id": run_id, "eval_result": result}),
            }
        )
        by_session[golden_id] = {
            "replay_session_id": replay_id,
            "passed": passed,
            "overall_accuracy": result["overall_accuracy"],
            "divergences": divergences,
        }
        passed_count += passed
        if not passed:
            evals.failed.append(
                FailedReplay(
                    tenant,
                    agent_id,
                    golden_id,
                    replay_id,
                    completed,
                    tuple(d["dimension"] for d in divergences),
                )  # fmt: skip
            )
    evals.runs.append(
        {
            "id": run_id,
            "tenant_id": ids.tenant_ids[tenant],
            "name": f"golden-{golden_set.name}-{_iso(started)[:10]}-{agent}",
            "set_name": golden_set.name,
            "agent_id": agent_id,
            "triggered_by": triggered_by,
            "started_at": started,
            "completed_at": completed + 3 * SECOND_US,
            "golden_session_count": len(golden_ids),
            "passed_count": passed_count,
            "failed_count": len(golden_ids) - passed_count,
            "results": _compact_json({"agent_config": agent, "bySession": by_session}),
            "created_by": None if triggered_by == "scheduled" else ids.users[tenant][0],
        }
    )


def _replay_failure_feedback(rng: np.random.Generator, evals: Evals, ids: Workspace, frame: TimeFrame) -> pa.Table:
    """A failed replay writes a `session` feedback row linking golden and replay sessions."""
    failed = evals.failed
    created = np.array([f.completed_us for f in failed], dtype=np.int64) + 5 * MINUTE_US
    review = _reviews(rng, created, np.zeros(len(failed), dtype=bool), frame)
    rows = []
    for i, failure in enumerate(failed):
        tenant = failure.tenant
        status = FEEDBACK_STATUSES[review.status[i]]
        is_pending = status == "pending"
        dims = ", ".join(failure.dimensions)
        rows.append(
            {
                "tenant_id": ids.tenant_ids[tenant],
                "source_type": "session",
                "rating": "negative",
                "comment": f"Replay diverged from golden on {dims}",
                "session_id": failure.replay_id,
                "entity_id": None,
                "agent_id": failure.agent_id,
                "context": _compact_json(
                    {
                        "failure_reason": "golden_replay_diverged",
                        "golden_session_id": failure.golden_id,
                        "replay_session_id": failure.replay_id,
                    }
                ),
                "status": status,
                "reviewed_by_agent_id": None if is_pending else ids.review_agent,
                "reviewed_by_user_id": None,
                "reviewed_at": None if is_pending else int(review.reviewed_us[i]),
                "review_notes": None if is_pending else REVIEW_NOTES[status][0],
                "created_by": ids.users[tenant][0],
                "created_at": int(created[i]),
            }
        )
    return _feedback_table(rng, rows)


# ---------------------------------------------------------------------------------------
# sources.toml
# ---------------------------------------------------------------------------------------


def _write_sources_toml(path: Path, *, reactions_export: bool) -> None:
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
