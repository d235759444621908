"""Source 2's authority: the platform's reaction index, `conv_messages` in each `kdcube_<tenant>_<project>` schema.

The index decides which reactions are active (upstream `ctx_rag.py`): a new user
reaction deletes that user's earlier reaction rows of the turn, a clear deletes
them and writes nothing, and the blobs stay in storage for ever. So a row that
disappears between two loads was cleared or replaced: the load that notices it
stamps the landed row `_removed_at` (its own start), never deleting it, so a
past `as_of` still counts the reaction as it was then.

Each load of a schema (a check) reads what changed only. It asks the server
for one summary row per conversation (count, sum and md5 of the reaction rows'
ids: an aggregate on the server that transfers one row per conversation),
compares it with the same summary of the rows landed and not removed, and
reads rows only for the conversations whose summary differs: the rows it
lacks land, the landed rows the server no longer has are stamped removed at
the check's instant. Ids are a bigserial, so a changed set of ids changes the
summary. Every check is recorded (raw.load_manifest.observed_at), one that
found nothing changed too; rows a purge deleted here are left out of both
summaries, so the next check neither compares nor reads them again.

What a reaction row holds (upstream `conv_index.py` add_message, called by
`ctx_rag.py` append_reaction_to_turn_log): role `artifact`, tags
`artifact:turn.log.reaction`, `turn:<turn_id>`, `origin:<user|machine>`, `ts`
the reaction's ts, `text` the reaction object as JSON, `hosted_uri` the blob
(`.../cb/tenants/<t>/projects/<p>/conversation/<user or fingerprint>/<conversation>/<turn>/<message_id>.json`).
There is no tenant or project column: they come from the blob path, else from
the schema name (`kdcube_<tenant>_<project>`, split at its first `_`). The
blob's resource name `rn` is rebuilt as `storage/rn.py` rn_message writes it,
so a reaction read from the index and from its blob is one reaction.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, replace

import duckdb
import pyarrow as pa

from ingest.databases import PostgresTable, redact_dsn
from ingest.jsonl import BATCH_SCHEMA
from ingest.load import Load, LoadOptions, LoadResult
from ingest.progress import LoadProgress
from warehouse.contracts import REACTION_INDEX, REACTION_TAGS
from warehouse.errors import UserError
from warehouse.sql import quote, sql_literal

TABLE = "conv_messages"
SCHEMA_PREFIX = "kdcube_"
REACTION_ROWS = "role = 'artifact' and tags && array[{}]::text[]".format(", ".join(f"'{t}'" for t in REACTION_TAGS))
# the columns read (never the embedding, the search vector or anchors); ts in UTC to the microsecond
ROW_COLUMNS = """
    id, user_id, bundle_id, conversation_id, message_id, turn_id, user_type, tags, hosted_uri, text,
    to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ts
"""
IDS_PER_QUERY = 20_000  # conversations named in one query
# a run's as_of (nightly) is the instant of its checks when taken at most this long before the check started
OBSERVED_LEAD = dt.timedelta(minutes=15)


class IndexDatabase(PostgresTable):
    """A PostgreSQL database holding the platform's index schemas."""

    def __init__(self, dsn: str) -> None:
        super().__init__(dsn, TABLE)

    def query(self, sql: str, parameters: tuple = ()) -> pa.Table:
        with self._connect() as conn, conn.cursor() as cur:
            try:
                cur.execute(sql, parameters=parameters or None)
                return cur.fetch_arrow_table()
            except Exception as exc:
                raise UserError(
                    f"cannot read the reaction index from {redact_dsn(self.dsn)}: {self.failure(exc)}"
                ) from None

    def schemas(self, only: list[str] | None = None) -> list[str]:
        """Every `kdcube_*` schema with a conv_messages table, or those of `only` (each must be one)."""
        found = (
            self.query(
                "select table_schema from information_schema.tables "
                "where table_name = $1 and table_schema like 'kdcube\\_%' order by 1",
                (TABLE,),
            )
            .column(0)
            .to_pylist()
        )
        if only:
            missing = [s for s in only if s not in found]
            if missing:
                raise UserError(
                    f"no {missing[0]}.{TABLE} in PostgreSQL database {redact_dsn(self.dsn)}: "
                    f"the index schemas there are {', '.join(found) or 'none'}"
                )
            return list(dict.fromkeys(only))
        if not found:
            raise UserError(
                f"no reaction index in PostgreSQL database {redact_dsn(self.dsn)}: no kdcube_<tenant>_<project> "
                f"schema has a {TABLE} table (check the DSN's database)"
            )
        return found


def _summary_sql(table: str, id_column: str, where: str) -> str:
    """One row per conversation: how many reaction rows, the sum and the md5 of their ids (text: no overflow)."""
    return f"""
        select conversation_id, count(*)::bigint as n, cast(sum({id_column}) as varchar) as id_sum,
               md5(string_agg(cast({id_column} as varchar), ',' order by {id_column})) as id_md5
        from {table} where {where} group by conversation_id
    """


@dataclass(frozen=True)
class Schema:
    """One index schema of one database, as this warehouse knows it."""

    database: str
    name: str
    uri: str
    # rows with ts before this were purged here (the turn_reaction_index policy): neither compared nor read again
    purged_before: dt.datetime | None

    @property
    def landed(self) -> str:
        """SQL: the rows of this schema landed and not found gone, within what the purge keeps."""
        where = (
            f"database_name = {sql_literal(self.database)} and schema_name = {sql_literal(self.name)} "
            "and _removed_at is null"
        )
        if self.purged_before:
            where += f" and ts >= {sql_literal(self.purged_before.isoformat())}::timestamp"
        return where

    def source_rows(self) -> str:
        """SQL (PostgreSQL): the schema's reaction rows within what the purge keeps."""
        where = REACTION_ROWS
        if self.purged_before:
            where += f" and ts >= {sql_literal(self.purged_before.isoformat() + '+00')}::timestamptz"
        return where


def _purged_before(con: duckdb.DuckDBPyConnection) -> dt.datetime | None:
    """The latest cutoff a committed purge applied to raw.reaction_index (rows dated before it were deleted)."""
    (cutoff,) = con.execute(
        "select max(cutoff) from raw.purge_log where table_name = ? and not is_dry_run", [REACTION_INDEX.table]
    ).fetchall()[0]
    return cutoff


def _changed_conversations(con: duckdb.DuckDBPyConnection, source: pa.Table, schema: Schema) -> tuple[list[str], bool]:
    """The conversations whose reaction rows differ between the server and the warehouse; and whether the
    warehouse holds none of the schema yet (then everything is read in one query)."""
    landed_rows = f"raw.{REACTION_INDEX.table}"
    con.register("_source_summary", source)
    try:
        first = not con.execute(f"select 1 from {landed_rows} where {schema.landed} limit 1").fetchall()
        changed = con.execute(
            f"""
            with landed as ({_summary_sql(landed_rows, "index_id", schema.landed)})
            select coalesce(s.conversation_id, l.conversation_id)
            from _source_summary as s
            full join landed as l on s.conversation_id = l.conversation_id
            where s.n is distinct from l.n or s.id_sum is distinct from l.id_sum or s.id_md5 is distinct from l.id_md5
            """
        ).fetchall()
    finally:
        con.unregister("_source_summary")
    return [row[0] for row in changed], first


def _read_rows(db: IndexDatabase, schema: Schema, conversations: list[str], everything: bool) -> pa.Table:
    table = f"{quote(schema.name)}.{TABLE}"
    if everything:
        return db.query(f"select {ROW_COLUMNS} from {table} where {schema.source_rows()} order by id")
    parts = []
    for start in range(0, len(conversations), IDS_PER_QUERY):
        named = json.dumps(conversations[start : start + IDS_PER_QUERY])
        parts.append(
            db.query(
                f"select {ROW_COLUMNS} from {table} where {schema.source_rows()} "
                "and conversation_id in (select jsonb_array_elements_text($1::jsonb)) order by id",
                (named,),
            )
        )
    return pa.concat_tables(parts)


def _envelopes_sql(schema: Schema) -> str:
    """The rows read (`_index_rows`: every reaction row of the changed conversations) as envelope JSON for the
    REACTION_INDEX contract; the rows landed before are the load's duplicates.

    The blob a row points at (`hosted_uri`, conversation_store.put_message) gives tenant, project and the owner
    segment of the path; a `file://` URI is percent-encoded (Path.as_uri), an `s3://` one is not. The owner in
    the rn is the row's user_id unless the user is anonymous (then the blob path holds a fingerprint:
    _who_and_id). A row without a blob path takes tenant and project from the schema's other rows, else from
    the schema name (split at its first `_`: `-` and spaces were turned into `_`, so a guess)."""
    bare = schema.name.removeprefix(SCHEMA_PREFIX)
    fallback_tenant, _, fallback_project = bare.partition("_")
    landed_scope = (
        f"(select {{}} from raw.{REACTION_INDEX.table} where database_name = {sql_literal(schema.database)} "
        f"and schema_name = {sql_literal(schema.name)} and {{}} is not null limit 1)"
    )
    decoded = "case when hosted_uri like 'file:%' then url_decode({0}) else {0} end"
    return f"""
        with rows as (
            select *,
                string_split(regexp_extract(hosted_uri, '/conversation/(.*)$', 1), '/') as path_parts,
                nullif({decoded.format("regexp_extract(hosted_uri, '/tenants/([^/]+)/projects/', 1)")}, '')
                    as path_tenant,
                nullif({decoded.format("regexp_extract(hosted_uri, '/projects/([^/]+)/conversation/', 1)")}, '')
                    as path_project,
                case when text like '{{%' then text else substr(text, strpos(text, '{{')) end as reaction_text
            from _index_rows
        ),
        located as (
            select *,
                coalesce(
                    path_tenant, max(path_tenant) over (), {landed_scope.format("tenant", "tenant")},
                    {sql_literal(fallback_tenant)}
                ) as tenant_name,
                coalesce(
                    path_project, max(path_project) over (), {landed_scope.format("project", "project")},
                    {sql_literal(fallback_project or bare)}
                ) as project_name,
                case
                    when coalesce(user_id, '') not in ('', 'anonymous') then user_id
                    when len(path_parts) >= 4 then {decoded.format("path_parts[-4]")}
                    else coalesce(user_id, '')
                end as owner,
                coalesce(message_id, regexp_extract(hosted_uri, '/([^/]+)\\.json$', 1)) as message_name,
                nullif(substr(list_filter(tags, lambda t: t like 'turn:%')[1], 6), '') as tag_turn,
                nullif(substr(list_filter(tags, lambda t: t like 'origin:%')[1], 8), '') as tag_origin
            from rows
        )
        select
            id::bigint as _line,  -- the row's id: its line, the same at every read (the quarantine's key)
            {sql_literal(schema.uri)} as _uri,
            json_object(
                'index_key', {sql_literal(f"{schema.database}.{schema.name}:")} || id,
                'database_name', {sql_literal(schema.database)},
                'schema_name', {sql_literal(schema.name)},
                'index_id', id,
                'rn', 'ef:' || tenant_name || ':' || project_name || ':chatbot:message:' || url_encode(owner) || ':'
                    || conversation_id || ':' || coalesce(turn_id, tag_turn) || ':artifact:' || message_name,
                'tenant', tenant_name,
                'project', project_name,
                'user_id', owner,
                'conversation_id', conversation_id,
                'bundle_id', bundle_id,
                'turn_id', turn_id,
                'tag_turn', tag_turn,
                'message_id', message_name,
                'user_type', user_type,
                'tags', tags,
                'tag_origin', tag_origin,
                'index_ts', ts,
                'reaction', case when json_valid(reaction_text) then json(reaction_text) end
            )::varchar as _raw,
            true as _utf8_ok,
            null::blob as _raw_bytes
        from located
    """


def _removal_instant(
    con: duckdb.DuckDBPyConnection, uri: str, started_at: dt.datetime, observed_at: dt.datetime | None
) -> dt.datetime:
    """The instant this check of the index stands for: its start, or the instant its run stands for (nightly's
    as_of, taken a moment before its ingest) when that is at most OBSERVED_LEAD before the start and later
    than the schema's previous check, which still saw the rows this one finds gone."""
    if observed_at is None or observed_at >= started_at or started_at - observed_at > OBSERVED_LEAD:
        return started_at
    (previous,) = con.execute(
        "select max(coalesce(observed_at, started_at)) from raw.load_manifest where target_table = ? and uri = ?",
        [REACTION_INDEX.table, uri],
    ).fetchall()[0]
    return observed_at if previous is None or observed_at > previous else started_at


def _check(
    con: duckdb.DuckDBPyConnection,
    db: IndexDatabase | None,
    schema: Schema,
    options: LoadOptions,
    progress: LoadProgress,
) -> LoadResult:
    """One check of one schema, one load: the rows of the conversations that changed land (those landed before
    are duplicates), the landed rows the server no longer has are stamped removed. `db` None: the schema is
    gone from the server, so every row of it is. Every check is recorded (raw.load_manifest.observed_at), a
    check that found nothing changed too: it says the reactions the blobs hold and it did not find were gone."""
    progress.start(f"postgres {schema.name}.{TABLE}", None)
    if db is None:
        changed, first, rows = None, False, _no_rows()
    else:
        source_summary = db.query(_summary_sql(f"{quote(schema.name)}.{TABLE}", "id", schema.source_rows()))
        changed, first = _changed_conversations(con, source_summary, schema)
        rows = _read_rows(db, schema, changed, everything=first) if changed else _no_rows()
    opts = replace(options, on_rows=progress.rows_done)
    load = Load(con, REACTION_INDEX, schema.uri, opts)
    load.observed_at = _removal_instant(con, schema.uri, load.started_at, options.observed_at)
    con.register("_index_rows", rows)
    con.register("_changed", pa.table({"conversation_id": pa.array(changed or [], pa.string())}))
    try:
        envelopes = con.sql(_envelopes_sql(schema)).to_arrow_table().cast(BATCH_SCHEMA)
        in_changed = "true" if changed is None else "landed.conversation_id in (select conversation_id from _changed)"
        with load.transaction():
            if envelopes.num_rows:
                load.add_json_batch(envelopes)
            (removed,) = con.execute(
                f"""
                update raw.{REACTION_INDEX.table} as landed
                set _removed_at = ?, _removed_by_load = ?
                where {schema.landed}
                  and {in_changed}
                  and landed.index_id not in (select id from _index_rows)
                """,
                [load.observed_at, load.load_id],
            ).fetchall()[0]
            load.result.rows_removed = int(removed)
    finally:
        con.unregister("_index_rows")
        con.unregister("_changed")
    return load.result


def _no_rows() -> pa.Table:
    columns = ("id", "user_id", "bundle_id", "conversation_id", "message_id", "turn_id", "user_type", "hosted_uri")
    table = pa.table({c: pa.array([], pa.int64() if c == "id" else pa.string()) for c in columns})
    table = table.append_column("tags", pa.array([], pa.list_(pa.string())))
    return table.append_column("text", pa.array([], pa.string())).append_column("ts", pa.array([], pa.string()))


def _landed_schemas(con: duckdb.DuckDBPyConnection, database: str) -> list[str]:
    rows = con.execute(
        f"select distinct schema_name from raw.{REACTION_INDEX.table} where database_name = ? "
        "and _removed_at is null order by 1",
        [database],
    ).fetchall()
    return [row[0] for row in rows]


def ingest_reaction_index(
    con: duckdb.DuckDBPyConnection,
    postgres_dsn: str,
    schemas: list[str] | None,
    options: LoadOptions,
    progress: LoadProgress,
) -> list[LoadResult]:
    """Every index schema of the database (or those named), each as one load: new reaction rows land, rows gone
    from the server are stamped removed. Without `schemas`, a schema landed before that the database no longer
    has is checked too: every row of it is gone."""
    db = IndexDatabase(postgres_dsn)
    database = db.query("select current_database()").column(0)[0].as_py()
    purged_before = _purged_before(con)

    def schema(name: str) -> Schema:
        return Schema(database, name, f"{redact_dsn(db.dsn)}#{database}.{name}.{TABLE}", purged_before)

    found = db.schemas(schemas)
    results = [_check(con, db, schema(name), options, progress) for name in found]
    if not schemas:
        gone = [name for name in _landed_schemas(con, database) if name not in found]
        results += [_check(con, None, schema(name), options, progress) for name in gone]
    return results
