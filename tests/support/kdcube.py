"""The conversation platform (kdcube/kdcube-ai-app), replayed the way its own code writes reactions.

Every write below reproduces one upstream function line for line, cited as
`file:line` under app/ai-app/src/kdcube-ai-app/kdcube_ai_app/ at the commit
the tests were written against (eefe18532):

- the index: `ops/deployment/sql/chatbot/deploy-kdcube-proj-schema.sql:11`
  (conv_messages; the embedding column is text here, pgvector is not
  needed), `:99` (the GIN index on tags), `:164` (conv_artifact_edges);
  `apps/chat/sdk/context/vector/conv_index.py:65-72` (the schema name),
  `:374-420` (add_message), `:2348` (delete_message);
- the blobs: `apps/chat/sdk/storage/conversation_store.py:96-155`
  (put_message: the path, `message_id`, the record, `indent=2`),
  `infra/service_hub/inventory.py:50-53` (_mid), `apps/chat/sdk/storage/rn.py:14`
  (rn_message);
- the lifecycle: `apps/chat/sdk/solutions/conversation/ctx_rag.py:977-1008`
  (remove_user_reaction: a user's reaction rows of the turn deleted from the
  index, the blobs left), `:1110-1190` (append_reaction_to_turn_log: a user
  reaction first removes the earlier ones; tags; blob then index row with the
  reaction's ts), `apps/chat/ingress/conversations/conversations.py:558-620`
  (submit_turn_feedback: a clear deletes and writes nothing; a user reaction
  has confidence 1.0), `apps/chat/sdk/solutions/chatbot/base_workflow.py:2492-2560`
  (handle_feedback: machine reactions only at confidence >= 0.70, the gate's
  reaction as it came, null included, user_type `conversation`).

The oracle `conversations_in_period` re-implements the platform's own report,
`ctx_rag.py:1581-1760` (fetch_feedback_conversations_in_period), over what the
index holds, reading each row's payload from its blob as `search(...,
with_payload=True)` does.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlparse

from tests.support.postgres_tables import pg_execute

# deploy-kdcube-proj-schema.sql:11-33, :99-100, :164-170 (embedding VECTOR(1536) as text: no pgvector here)
INDEX_DDL = """
create schema if not exists {schema};
create table if not exists {schema}.conv_messages (
    id               bigserial primary key,
    user_id          text not null,
    bundle_id        text,
    agent_id         text,
    conversation_id  text not null,
    message_id       text,
    role             text not null,
    text             text not null,
    hosted_uri       text not null,
    ts               timestamptz not null default now(),
    ttl_days         int not null default 365,
    user_type        text not null default 'anonymous',
    tags             text[] not null default '{{}}',
    embedding        text,
    turn_id          text,
    anchors_text     text not null default '',
    search_tsv       tsvector generated always as (
        setweight(to_tsvector('simple',  coalesce(anchors_text, '')), 'A') ||
        setweight(to_tsvector('english', coalesce(text,         '')), 'B')
    ) stored
);
create index if not exists idx_{schema}_conv_tags on {schema}.conv_messages using gin (tags);
create table if not exists {schema}.conv_artifact_edges (
    from_id    bigint not null references {schema}.conv_messages(id) on delete cascade,
    to_id      bigint not null references {schema}.conv_messages(id) on delete cascade,
    policy     text   not null default 'none',
    created_at timestamptz not null default now(),
    primary key (from_id, to_id)
)
"""
MIN_MACHINE_CONFIDENCE = 0.70  # base_workflow.py:2492


def index_schema(tenant: str, project: str) -> str:
    """conv_index.py:65-72: kdcube_<tenant>_<project>, `-` and spaces as `_`."""
    name = f"{tenant.replace('-', '_').replace(' ', '_')}_{project.replace('-', '_').replace(' ', '_')}"
    return name if name.startswith("kdcube_") else f"kdcube_{name}"


def rn_message(tenant: str, project: str, user_id: str, conversation_id: str, turn_id: str, role: str, mid: str) -> str:
    """rn.py:14-19."""
    user = quote(user_id or "", safe="")
    return f"ef:{tenant}:{project}:chatbot:message:{user}:{conversation_id}:{turn_id}:{role}:{mid}"


def _iso(when: dt.datetime) -> str:
    """The reaction's ts: `datetime.utcnow().isoformat() + "Z"` (conversations.py:598, base_workflow.py:2529)."""
    return when.replace(tzinfo=None).isoformat() + "Z"


@dataclass
class Platform:
    """One tenant and project of the platform: its index schema in PostgreSQL and its blob store on disk."""

    dsn: str
    storage: Path  # STORAGE_PATH; blobs go under storage/cb/...
    tenant: str
    project: str
    seed: int = 0
    written: list[dict[str, Any]] = field(default_factory=list)  # every blob record, in order

    def __post_init__(self) -> None:
        self.schema = index_schema(self.tenant, self.project)
        self._uuids = uuid.UUID(int=self.seed * 7919 + 1)
        self._n = 0
        pg_execute(self.dsn, *[s for s in INDEX_DDL.format(schema=self.schema).split(";") if s.strip()])

    # -- the blob store (conversation_store.py:96-155) -------------------------
    def _uuid8(self) -> str:
        self._n += 1
        return uuid.uuid5(self._uuids, str(self._n)).hex[:8]

    def put_message(
        self,
        *,
        user: str,
        conversation_id: str,
        turn_id: str,
        role: str,
        text: str,
        at: dt.datetime,
        id: str | None = None,
        bundle_id: str | None = None,
        payload: Any = None,
        meta: dict[str, Any] | None = None,
        user_type: str = "anonymous",
        fingerprint: str | None = None,
    ) -> tuple[str, str, str]:
        msg_ts = at.strftime("%Y-%m-%dT%H-%M-%S")  # :120 (the wall clock there; the replay's clock here)
        message_id = f"{role}-{msg_ts}-{self._uuid8()}{'-' + id if id else ''}"  # :121, inventory.py:50-53
        who = "registered" if (user and user != "anonymous") else "anonymous"  # _who_and_id
        user_or_fp = user if who == "registered" else (fingerprint or "unknown")
        rel = "/".join(
            ["cb", "tenants", self.tenant, "projects", self.project, "conversation", user_or_fp, conversation_id]
            + [turn_id, f"{message_id}.json"]
        )
        rn = rn_message(self.tenant, self.project, user_or_fp, conversation_id, turn_id, role, message_id)
        record = {
            "tenant": self.tenant,
            "project": self.project,
            "user": user,
            "user_id": user_or_fp,
            "conversation_id": conversation_id,
            "turn_id": turn_id,
            "bundle_id": bundle_id,
            "role": role,
            "text": text,
            "timestamp": msg_ts + "Z",
            "embedding": None,
            "payload": payload,
            "meta": {
                "message_id": message_id,
                "turn_id": turn_id,
                "user_type": user_type,
                "ttl_days": 365,
                "rn": rn,
                **(meta or {}),
            },
        }
        path = self.storage / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8"))  # :154
        self.written.append(record)
        return path.as_uri(), message_id, rn  # _uri_for_path: file scheme, Path.as_uri()

    # -- the index (conv_index.py:374-420, :2348) ---------------------------------
    def add_message(self, **row: Any) -> None:
        columns = [
            "user_id",
            "conversation_id",
            "message_id",
            "role",
            "text",
            "hosted_uri",
            "ts",
            "ttl_days",
            "user_type",
            "tags",
            "turn_id",
            "bundle_id",
        ]
        values = []
        for column in columns:
            value = row.get(column, 365 if column == "ttl_days" else None)
            if value is None:
                values.append("null")
            elif isinstance(value, list):
                values.append("array[" + ", ".join(_lit(v) for v in value) + "]::text[]")
            elif isinstance(value, int):
                values.append(str(value))
            else:
                values.append(_lit(str(value)))
        pg_execute(
            self.dsn,
            f"insert into {self.schema}.conv_messages ({', '.join(columns)}) values ({', '.join(values)})",
        )

    def index_rows(self) -> list[dict[str, Any]]:
        import adbc_driver_postgresql.dbapi as pg

        with pg.connect(self.dsn) as conn, conn.cursor() as cur:
            cur.execute(
                f"select id, user_id, conversation_id, role, hosted_uri, ts, tags from {self.schema}.conv_messages "
                "order by id"
            )
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    # -- the lifecycle ------------------------------------------------------------
    def remove_user_reaction(self, *, user: str, conversation_id: str, turn_id: str) -> int:
        """ctx_rag.py:977-1008: the user's reaction rows of the turn (tag origin:user, turn:<id>, payload origin
        user) deleted from the index; the blobs stay."""
        import adbc_driver_postgresql.dbapi as pg

        with pg.connect(self.dsn) as conn, conn.cursor() as cur:
            cur.execute(
                f"delete from {self.schema}.conv_messages where user_id = $1 and conversation_id = $2 "
                "and role = 'artifact' and tags @> array['artifact:turn.log.reaction', 'origin:user', "
                "'turn:' || $3]::text[]",
                parameters=(user, conversation_id, turn_id),
            )
            removed = cur.rowcount
            conn.commit()
        return removed

    def append_reaction(
        self,
        *,
        user: str,
        user_type: str,
        conversation_id: str,
        turn_id: str,
        reaction: dict[str, Any],
        origin: str,
        bundle_id: str | None,
        at: dt.datetime,
    ) -> str:
        """ctx_rag.py:1110-1190; returns the blob's rn."""
        reaction = {**reaction, "origin": origin}  # :1125
        if origin == "user":
            self.remove_user_reaction(user=user, conversation_id=conversation_id, turn_id=turn_id)
        reaction_text = json.dumps(reaction, ensure_ascii=False)  # react/feeback.py:84-88 format_reaction_text
        tags = ["artifact:turn.log.reaction", f"turn:{turn_id}", f"origin:{origin}"]  # :1163
        hosted_uri, message_id, rn = self.put_message(
            user=user,
            conversation_id=conversation_id,
            turn_id=turn_id,
            role="artifact",
            text=reaction_text,
            at=at,
            id="turn.log.reaction",
            bundle_id=bundle_id,
            payload={"reaction": reaction},
            meta={"kind": "turn.log.reaction", "turn_id": turn_id, "origin": origin},
            user_type=user_type,
        )
        self.add_message(  # :1178-1186, ts = the reaction's ts
            user_id=user,
            conversation_id=conversation_id,
            turn_id=turn_id,
            bundle_id=bundle_id,
            role="artifact",
            text=reaction_text,
            hosted_uri=hosted_uri,
            ts=reaction["ts"],
            tags=tags,
            user_type=user_type,
            message_id=message_id,
        )
        return rn

    def submit_turn_feedback(
        self,
        *,
        user: str,
        conversation_id: str,
        turn_id: str,
        reaction: str | None,
        text: str = "",
        at: dt.datetime,
        user_type: str = "registered",
    ) -> str | None:
        """conversations.py:558-620: a clear (reaction None) deletes the user's rows and writes nothing; a
        reaction is appended with confidence 1.0. Returns the new blob's rn (None for a clear)."""
        if reaction is None:
            self.remove_user_reaction(user=user, conversation_id=conversation_id, turn_id=turn_id)
            return None
        body = {"turn_id": turn_id, "text": text, "confidence": 1.0, "ts": _iso(at), "reaction": reaction}
        return self.append_reaction(
            user=user,
            user_type=user_type,
            conversation_id=conversation_id,
            turn_id=turn_id,
            reaction=body,
            origin="user",
            bundle_id=None,
            at=at,
        )

    def handle_feedback(
        self,
        *,
        user: str,
        conversation_id: str,
        turn_id: str,
        reaction: str | None,
        confidence: float,
        text: str,
        at: dt.datetime,
        bundle_id: str = "with.codegen",
    ) -> str | None:
        """base_workflow.py:2492-2560: only with text and confidence >= 0.70; the gate's reaction as it came."""
        if not (text and confidence >= MIN_MACHINE_CONFIDENCE):
            return None
        detected = {"turn_id": turn_id, "text": text, "confidence": confidence, "reaction": reaction, "ts": _iso(at)}
        return self.append_reaction(
            user=user,
            user_type="conversation",
            conversation_id=conversation_id,
            turn_id=turn_id,
            reaction=detected,
            origin="machine",
            bundle_id=bundle_id,
            at=at,
        )

    def write_turn(self, *, user: str, conversation_id: str, turn_id: str, question: str, at: dt.datetime) -> None:
        """A turn's other messages beside its reactions: the user's question, the answer and the turn log, each a
        blob with its index row (what the blob tree holds besides reactions)."""
        for role, text, kind in (
            ("user", question, None),
            ("assistant", f"Answer to: {question}", None),
            ("artifact", json.dumps({"turn_log": {"entries": [{"q": question}]}}), "turn.log"),
        ):
            hosted_uri, message_id, _ = self.put_message(
                user=user,
                conversation_id=conversation_id,
                turn_id=turn_id,
                role=role,
                text=text,
                at=at,
                id="turn.log" if kind else None,
                payload={"turn_log": {"q": question}} if kind else None,
                meta={"kind": kind} if kind else None,
                user_type="registered",
            )
            self.add_message(
                user_id=user,
                conversation_id=conversation_id,
                turn_id=turn_id,
                role=role,
                text=text,
                hosted_uri=hosted_uri,
                ts=_iso(at),
                tags=[f"artifact:{kind}", f"turn:{turn_id}"] if kind else [f"turn:{turn_id}"],
                user_type="registered",
                message_id=message_id,
            )


def _lit(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def conversations_in_period(platforms: list[Platform], start: dt.datetime, end: dt.datetime) -> dict[tuple, dict]:
    """The platform's report (ctx_rag.py:1581-1760), over every user: per (tenant, project, conversation), the
    counts of the reaction rows the index holds whose ts is in [start, end], each read through its blob."""
    out: dict[tuple, dict] = {}
    for platform in platforms:
        for row in platform.index_rows():
            tags = row["tags"] or []
            if row["role"] != "artifact" or "artifact:turn.log.reaction" not in tags:  # kinds=(reaction,), roles
                continue
            ts = row["ts"]
            if not (start <= ts <= end):  # timestamp_filters on the index ts
                continue
            blob = json.loads(Path(unquote(urlparse(row["hosted_uri"]).path)).read_text())  # with_payload=True
            conversation_id = blob.get("conversation_id")
            if not conversation_id:
                continue
            reaction = (blob.get("payload") or {}).get("reaction") or {}
            origin = (reaction.get("origin") or "").strip() or None
            value = reaction.get("reaction")
            counts = out.setdefault(
                (platform.tenant, platform.project, conversation_id),
                {"total": 0, "user": 0, "machine": 0, "ok": 0, "not_ok": 0, "neutral": 0},
            )
            counts["total"] += 1  # :1739
            if origin == "user":
                counts["user"] += 1
            elif origin == "machine":
                counts["machine"] += 1
            if value == "ok":
                counts["ok"] += 1
            elif value == "not_ok":
                counts["not_ok"] += 1
            elif value in (None, "neutral"):  # :1748
                counts["neutral"] += 1
    return out
