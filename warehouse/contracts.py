"""The source contracts (../shared/reference/README.md) as data.

Each contract lists the fields the ingest keeps for one raw table: where a
field sits in the upstream record (JSON path, first present path wins), its
type and the checks it must pass. Anything not listed is ignored and never
stored. `ingest.validation` turns a contract into one SQL statement;
`warehouse.raw_tables` turns it into the raw table the statement fills.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["string", "int", "float", "timestamp", "date", "string_list", "json"]

OUTCOMES = ("correction", "partial", "acceptance")
CORRECTION_TYPES = ("rejection", "revert", "redo", "partial")
DIMENSIONS = (
    "accuracy",
    "coverage",
    "reliability",
    "efficiency",
    "security",
    "trigger_quality",
    "unknown",
)
SESSION_LABELS = ("positive", "negative", "skip")
SESSION_SOURCES = ("cli_end", "cli_exit", "api_end")
# upstream's FeedbackModality; a record without one is `text` (upstream's default). Not checked at ingest: a
# new channel upstream is kept (and warned about by dbt), so its answers still count
SESSION_MODALITIES = ("text", "voice")
SUPPORTED_SESSION_SCHEMA_VERSIONS = (1,)
REACTIONS = ("ok", "not_ok", "neutral")
ORIGINS = ("user", "machine")
FEEDBACK_SOURCE_TYPES = ("chat", "response", "extraction", "tool", "session", "observation")
FEEDBACK_RATINGS = ("positive", "negative", "neutral")
FEEDBACK_STATUSES = ("pending", "reviewed", "applied", "dismissed")
SESSION_TYPES = ("agent", "chat", "response", "tool", "mixed")
EVAL_TRIGGERS = ("manual", "scheduled", "post-deploy")

# lower-case only: the upstream contract stores SHA-256 as lower-case hex (hashlib.hexdigest)
HEX64 = "[0-9a-f]{64}"
# a tenant or project name holds no control character (C0, DEL): the marts' all-tenants key (dbt var
# all_members_key) has one, so no source can produce it and a tenant named like it stays its own tenant
NO_CONTROL_CHARACTERS = r"[^\x00-\x1f\x7f]*"
NAME_REASON = "holds a control character: a tenant or project name never does"


@dataclass(frozen=True)
class Field:
    """One column of a raw table and the rules its upstream value must follow."""

    name: str
    kind: Kind
    paths: tuple[tuple[str, ...], ...] = ()  # defaults to ((name,),)
    required: bool = False
    enum: tuple[str, ...] = ()  # compared case-insensitively, stored as read
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None  # the whole value must match
    pattern_reason: str | None = None  # said instead of the value (privacy)
    # SQL used when the value is absent; {other} names another field's parsed value
    default_sql: str | None = None
    allowed_values: tuple[int, ...] = ()  # for versions: anything else is unsupported
    # free text: any JSON value is kept as its text (read as VARCHAR: long strings are not parsed twice)
    free_text: bool = False
    # the raw column's SQL type when it is not the kind's usual one (warehouse/raw_tables.py)
    storage_type: str | None = None
    # also the key of the field's name inside this JSON value (an object, or a string holding one): in a JSON
    # record the key of that name, in a database table the column of that name, read there by the database's
    # own JSON function so that nothing else of it is ever selected (privacy: an allow-list of one key)
    inside: str | None = None
    # an empty string is the upstream's "unknown": it lands as NULL (the raw column is nullable, even when the
    # field is required: the key must be there, its value may be ""); any other value must parse
    empty_is_null: bool = False

    @property
    def json_paths(self) -> tuple[tuple[str, ...], ...]:
        return self.paths or ((self.name,),)


@dataclass(frozen=True)
class Contract:
    """How one upstream entity lands in one raw table."""

    source: str  # the source family, as in `ingest <source>`
    table: str  # raw.<table>
    key: str  # natural key: re-ingesting a key already landed adds nothing
    fields: tuple[Field, ...]
    # fields whose values must not be copied into the quarantine (privacy)
    redact_in_quarantine: tuple[str, ...] = ()
    # keep only the contract fields in quarantined raw text (no free text beyond it)
    quarantine_contract_fields_only: bool = False
    # upstream rows change (a review status, a completed session): a key that comes
    # back with other content replaces the landed row instead of counting as a duplicate
    mutable: bool = False
    # rows move on to the Parquet archive of `purge`: a key found there is a duplicate too
    archived_by_purge: bool = False
    # what makes a record one of this source's records, where a source's files also hold others (a blob tree
    # holds every message of a conversation): field -> the values that claim it (a string field equal to one,
    # a list field containing one). A parsed record that claims none is skipped: counted in the manifest
    # (rows_skipped), its text and path never stored. Empty: every record of the input is this source's.
    claim: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # rules across fields, each (SQL that is true when the row breaks it, over {field} names; the reason): what
    # an error-level dbt test of the staging model would reject, quarantined here so that one row never fails
    # a build. NULL (a field absent) breaks none.
    row_rules: tuple[tuple[str, str], ...] = ()

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.fields]


ANALYZER_EVENTS = Contract(
    source="analyzer",
    table="analyzer_events",
    key="event_id",
    archived_by_purge=True,
    fields=(
        Field("event_id", "string", required=True),
        # analyze.py writes "" when the transcript entry had no timestamp: an undated event (docs/metrics.md)
        Field("timestamp", "timestamp", required=True, empty_is_null=True),
        Field("session_id", "string"),
        Field("skill_id", "string", required=True),
        Field("invocation_uuid", "string"),
        Field("outcome", "string", required=True, enum=OUTCOMES),
        Field("confidence", "float", minimum=0, maximum=1),
        Field("correction_type", "string", enum=CORRECTION_TYPES),
        Field("user_message_snippet", "string", free_text=True),
        Field("turns_to_feedback", "int", minimum=0),
        Field("ai_tools_used", "string_list"),
        Field("dimension_hint", "string", enum=DIMENSIONS),
    ),
)

SESSION_FEEDBACK = Contract(
    source="session_feedback",
    table="session_feedback",
    key="id",
    fields=(
        Field("id", "string", required=True),
        Field(
            "session_id_opaque",
            "string",
            required=True,
            pattern=HEX64,
            pattern_reason="is not a 64-character hex SHA-256: a raw session id must never be stored",
        ),
        Field("user_id_or_null", "string"),
        Field("recorded_at", "timestamp", required=True),
        Field("label", "string", required=True, enum=SESSION_LABELS),
        Field("turn_count_at_end", "int", minimum=0),
        Field("source", "string", required=True, enum=SESSION_SOURCES),
        # upstream keeps it only inside `value` (the whole record as JSON): the one key of `value` ever read
        Field("modality", "string", inside="value", default_sql="'text'"),
        Field(
            "schema_version",
            "int",
            default_sql="1",
            allowed_values=SUPPORTED_SESSION_SCHEMA_VERSIONS,
            storage_type="integer",
        ),
        Field("insertion_order", "int"),
        # upstream's retention key; a JSONL export may leave it out
        Field("recorded_date", "date", default_sql="cast({recorded_at} as date)"),
    ),
    redact_in_quarantine=("session_id_opaque",),
    quarantine_contract_fields_only=True,
)

_PAYLOAD = ("payload",)


def _reaction_paths(*tail: str) -> tuple[tuple[str, ...], ...]:
    """A payload field, whether the record is an envelope ({..., payload: {...}}) or bare."""
    return (_PAYLOAD + tail, tail)


REACTION_KIND = "turn.log.reaction"  # meta.kind of a reaction blob (conversation_store.put_message)
REACTION_TAGS = ("artifact:turn.log.reaction", "kind:turn.log.reaction")  # the index tag, and its legacy spelling

TURN_REACTIONS = Contract(
    source="reactions",
    table="turn_reactions",
    key="rn",
    claim=(("kind", (REACTION_KIND,)), ("tags", REACTION_TAGS)),
    fields=(
        Field("rn", "string", paths=_reaction_paths("meta", "rn"), required=True),
        Field(
            "tenant",
            "string",
            paths=(("tenant",), ("tenant_id",), ("payload", "tenant")),
            pattern=NO_CONTROL_CHARACTERS,
            pattern_reason=NAME_REASON,
        ),
        Field(
            "project",
            "string",
            paths=(("project",), ("project_id",), ("payload", "project")),
            pattern=NO_CONTROL_CHARACTERS,
            pattern_reason=NAME_REASON,
        ),
        Field("user_id", "string", paths=(("user_id",), ("user",), ("payload", "user_id"))),
        Field(
            "conversation_id",
            "string",
            paths=_reaction_paths("conversation_id") + (("conversation_id",),),
            required=True,
        ),
        Field("bundle_id", "string", paths=_reaction_paths("bundle_id")),
        Field(
            "turn_id",
            "string",
            paths=_reaction_paths("reaction", "turn_id") + _reaction_paths("meta", "turn_id"),
            required=True,
        ),
        Field("track_id", "string", paths=_reaction_paths("meta", "track_id")),
        Field("user_type", "string", paths=_reaction_paths("meta", "user_type")),
        Field("kind", "string", paths=_reaction_paths("meta", "kind")),
        Field("tags", "string_list", paths=(("tags",),)),
        Field(
            "origin",
            "string",
            paths=_reaction_paths("reaction", "origin"),
            required=True,
            enum=ORIGINS,
        ),
        Field("reaction", "string", paths=_reaction_paths("reaction", "reaction"), enum=REACTIONS),
        Field(
            "confidence",
            "float",
            paths=_reaction_paths("reaction", "confidence"),
            minimum=0,
            maximum=1,
        ),
        Field("ts", "timestamp", paths=_reaction_paths("reaction", "ts") + (("ts",),), required=True),
        Field("text", "string", paths=_reaction_paths("reaction", "text"), free_text=True),
    ),
)

# The platform's index (`conv_messages` in each schema kdcube_<tenant>_<project>): one row per reaction
# artifact while it is active. `ingest.sources.reaction_index` reads the reaction rows and hands each on as an
# envelope: the row's columns, `reaction` (the JSON in `text`: turn_id, text, confidence, ts, reaction, origin),
# the tags' origin and turn, tenant and project from the blob path in hosted_uri (else the schema name) and `rn`,
# the resource name of the blob the row points at (as storage/rn.py's rn_message writes it).
REACTION_INDEX = Contract(
    source="reactions",
    table="reaction_index",
    key="index_key",
    fields=(
        Field("index_key", "string", required=True),  # <database>.<schema>:<id>
        Field("database_name", "string", required=True),
        Field("schema_name", "string", required=True),
        Field("index_id", "int", required=True),
        Field("rn", "string", required=True),
        Field("tenant", "string", pattern=NO_CONTROL_CHARACTERS, pattern_reason=NAME_REASON),
        Field("project", "string", pattern=NO_CONTROL_CHARACTERS, pattern_reason=NAME_REASON),
        Field("user_id", "string"),
        Field("conversation_id", "string", required=True),
        Field("bundle_id", "string"),
        Field("turn_id", "string", paths=(("turn_id",), ("reaction", "turn_id"), ("tag_turn",)), required=True),
        Field("message_id", "string"),
        Field("user_type", "string"),
        Field("tags", "string_list"),
        Field("origin", "string", paths=(("reaction", "origin"), ("tag_origin",)), required=True, enum=ORIGINS),
        Field("reaction", "string", paths=(("reaction", "reaction"),), enum=REACTIONS),
        Field("confidence", "float", paths=(("reaction", "confidence"),), minimum=0, maximum=1),
        Field("ts", "timestamp", paths=(("reaction", "ts"), ("index_ts",)), required=True),
        Field("index_ts", "timestamp"),
        Field("text", "string", paths=(("reaction", "text"),), free_text=True),
    ),
)

WORKSPACE_FEEDBACK = Contract(
    source="workspace",
    table="workspace_feedback",
    key="id",
    mutable=True,
    fields=(
        Field("id", "string", required=True),
        Field("tenant_id", "string", required=True, pattern=NO_CONTROL_CHARACTERS, pattern_reason=NAME_REASON),
        Field("source_type", "string", required=True, enum=FEEDBACK_SOURCE_TYPES),
        Field("rating", "string", required=True, enum=FEEDBACK_RATINGS),
        Field("comment", "string", free_text=True),
        Field("session_id", "string"),
        Field("entity_id", "string"),
        Field("agent_id", "string"),
        Field("context", "json"),
        Field("status", "string", required=True, enum=FEEDBACK_STATUSES),
        Field("reviewed_by_agent_id", "string"),
        Field("reviewed_by_user_id", "string"),
        Field("reviewed_at", "timestamp"),
        Field("review_notes", "string", free_text=True),
        Field("created_by", "string"),
        Field("created_at", "timestamp", required=True),
    ),
)

WORKSPACE_SESSIONS = Contract(
    source="workspace",
    table="workspace_sessions",
    key="id",
    mutable=True,
    fields=(
        Field("id", "string", required=True),
        Field("tenant_id", "string", required=True, pattern=NO_CONTROL_CHARACTERS, pattern_reason=NAME_REASON),
        Field("agent_id", "string"),
        Field("session_type", "string", enum=SESSION_TYPES),
        Field("status", "string"),
        Field("created_at", "timestamp", required=True),
        Field("completed_at", "timestamp"),
        Field("metadata", "json"),
    ),
)

WORKSPACE_EVAL_RUNS = Contract(
    source="workspace",
    table="workspace_eval_runs",
    key="id",
    mutable=True,
    fields=(
        Field("id", "string", required=True),
        Field("tenant_id", "string", required=True, pattern=NO_CONTROL_CHARACTERS, pattern_reason=NAME_REASON),
        Field("name", "string"),
        Field("set_name", "string"),
        Field("agent_id", "string"),
        Field("triggered_by", "string", enum=EVAL_TRIGGERS),
        Field("started_at", "timestamp", required=True),
        Field("completed_at", "timestamp"),
        Field("golden_session_count", "int", minimum=0),
        Field("passed_count", "int", minimum=0),
        Field("failed_count", "int", minimum=0),
        Field("results", "json"),
        Field("created_by", "string"),
    ),
    # stg_workspace__eval_runs: passed and failed replays never exceed the run's golden sessions
    row_rules=(
        (
            "{passed_count} + {failed_count} > {golden_session_count}",
            "passed_count + failed_count exceed golden_session_count",
        ),
    ),
)

WORKSPACE_CONTRACTS = {
    "feedback": WORKSPACE_FEEDBACK,
    "sessions": WORKSPACE_SESSIONS,
    "eval_runs": WORKSPACE_EVAL_RUNS,
}

# every contract, in the order of the raw tables: one raw table each
CONTRACTS = (ANALYZER_EVENTS, SESSION_FEEDBACK, TURN_REACTIONS, *WORKSPACE_CONTRACTS.values(), REACTION_INDEX)
# the one contract whose rows `purge` moves on to the Parquet archive
(ARCHIVED_BY_PURGE,) = (contract for contract in CONTRACTS if contract.archived_by_purge)
