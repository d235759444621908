"""Source 2, turn reactions: one JSON envelope per reaction artifact, in blob files and a JSON-lines export.

Writes, under OUT/reactions (upstream: the conversation store's artifact blobs, and an export of
its index table):

    blobs/<tenant>/<project>/<conversation>/<artifact>.json    one envelope per file, pretty-printed
                                                               (~40%) or compact
    reactions_export.jsonl                                     one envelope a line; only when there
                                                               are more reactions than blob files
                                                               written (scale > ~1.2)

An envelope holds the index row's fields (`tenant`, `project`, `user_id`, `tags`) and the
artifact's `payload` (`reaction`, `meta`, `conversation_id`, `bundle_id`); the reactions contract
(`warehouse.contracts.TURN_REACTIONS`) says where the ingest reads each field.

Valid quirks: users who replace their reaction on a turn (later `ts`) or clear it (`reaction`
null), additive machine reactions with confidences on both sides of 0.70 (exactly 0.70 and 0.69
too), ~3% of envelopes tagged with the legacy "kind:turn.log.reaction", ~5% without a `track:`
tag. The bad record to quarantine: one blob whose `payload.reaction.confidence` is 1.5.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from demo.common import (
    HOUR_US,
    MINUTE_US,
    NAMED_USERS,
    SECOND_US,
    TENANT_WEIGHTS,
    TENANTS,
    Progress,
    TimeFrame,
    base36_chars,
    categorical,
    copy_jsonl,
    label_column,
    sample_times,
    strings_from_chars,
    timestamp_column,
    user_pool,
    uuid4s,
)
from warehouse.contracts import ORIGINS, REACTIONS

BLOB_FILES_ALL_UP_TO = 30_000  # up to this many reactions, every reaction is a blob file
BLOB_FILE_CAP = 20_000  # beyond it, this many blob files and the rest in the export

BUNDLES: dict[str, str] = {
    "support": "support.assistant",
    "codegen": "with.codegen",
    "docs": "docs.qa",
    "sales": "sales.copilot",
    "analytics": "analytics.sql",
    "research": "research.agent",
}
USER_TYPES = ("privileged", "registered", "anonymous")
TRACKS = ("A", "B", "C")
# Reaction texts by REACTIONS value, as users and as the machine write them.
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
    tenant = categorical(rng, n, TENANT_WEIGHTS)
    first_project = np.cumsum([0] + [len(p) for p in TENANTS.values()])[:-1]
    n_projects = np.array([len(p) for p in TENANTS.values()])
    project = first_project[tenant] + (rng.random(n) * n_projects[tenant]).astype(np.int64)
    return Conversations(
        tenant=tenant,
        project=project,
        user=rng.integers(0, max(len(NAMED_USERS), n // 4), n),
        # start at least a day before as_of: turn, reaction and replacement delays stay < 24 h
        start_us=rng.permutation(sample_times(rng, n, frame, skip_last_days=1)),
        turn_gap_us=rng.integers(40, 300, n) * SECOND_US,
        n_turns=np.minimum(1 + rng.geometric(0.15, n), 20),
        track=categorical(rng, n, (0.5, 0.3, 0.2)),
        ids=uuid4s(rng, n),
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
    reaction = np.where(is_user, categorical(rng, n, (0.62, 0.23, 0.15)), categorical(rng, n, (0.45, 0.4, 0.15)))
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
    users = user_pool(rng, int(conversations.user.max()) + 1)
    user = conversations.user[conv]
    comment_pool, _, _ = _comment_pool()
    table = pa.table(
        {
            "seq": np.arange(n, dtype=np.int64),
            "in_blob": in_blob_conversation[conv],
            "pretty": rng.random(n) < 0.4,
            "tenant": label_column(conversations.tenant[conv], tenant_names),
            "project": label_column(conversations.project[conv], projects),
            "user_id": label_column(user, users),
            "user_type": label_column(np.where(user % 5 == 0, 0, np.where(user % 10 == 7, 2, 1)), USER_TYPES),
            "conversation_id": conversations.ids.take(pa.array(conv)),
            "bundle_id": label_column(conversations.project[conv], [BUNDLES[p] for p in projects]),
            "turn_ms": turn_ms,
            "turn_suffix": strings_from_chars(base36_chars(turn_hash >> np.uint64(20), 6)),
            "track_id": label_column(conversations.track[conv], TRACKS),
            "tag_kind": np.where(rng.random(n) < 0.03, "kind:turn.log.reaction", "artifact:turn.log.reaction"),
            "has_track_tag": rng.random(n) >= 0.05,
            "origin": label_column(np.where(rows.is_user, 0, 1), ORIGINS),
            "reaction": label_column(np.minimum(rows.reaction, 2), REACTIONS, null=rows.reaction == 3),
            "confidence": rows.confidence,
            "ts": timestamp_column(rows.ts),
            "text": label_column(np.maximum(rows.text, 0), comment_pool, null=rows.text < 0),
            "is_bad": is_bad,
        }
    )
    return table, n - 1


def write_reactions(
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
        copy_jsonl(
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
