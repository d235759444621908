"""The one way a reader with a tenant scope sees the marts: views that keep only its tenants' rows.

Every reader of the serving file (dashboards/data.py, operations/export.py) resolves `marts.<name>` through
`scoped(con, catalog, scope)`. For `EVERYTHING` that is the serving file itself, as before. For any other
scope it is a catalog of views over the serving file's marts, one per relation, each keeping only rows of the
scope's tenants, so that every query, whatever its filter, reads no other tenant's row:

- a relation of precomputed filter values (`tenant_filter` column: metric_rates_by_period,
  eval_set_accuracy_trend_rollup): `tenant_filter in (scope)`, which also drops the rollups over every
  tenant (ALL_MEMBERS rows) and the metrics of sources without a tenant (they have only those rows);
- a relation whose `tenant` column is a tenant key (seed `tenants`): `tenant in (scope)`; rows without a
  tenant (null, or the `(all)` rollup of metric_rates_daily) are dropped;
- a relation whose tenant column holds the source's own tenant id, not the key (SOURCE_TENANT_MARTS): the ids
  that the key marts map to the scope's tenants;
- metadata every reader needs and that holds no tenant's rows (METADATA): the listed columns only, never a
  count over every tenant;
- anything else (session feedback, analyzer events, skills, retention counts, warehouse operations, and any
  relation added later without a tenant column): the same columns, no rows.

A relation of the serving file outside the schemas `marts` and `serving` is not there at all.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb

from warehouse.access import Scope
from warehouse.sql import quote, sql_literal

# Relations without tenant rows that every reader needs: name -> the columns a scoped reader sees.
METADATA: dict[tuple[str, str], tuple[str, ...] | None] = {
    ("marts", "build_info"): None,  # every column: the build's id, when, as of which instant, dbt version
    # each policy's window; not rows_kept / rows_outside_window, counts over every tenant
    ("marts", "retention_policy_windows"): (
        "policy",
        "raw_table",
        "scope",
        "action",
        "date_column",
        "keep_days",
        "as_of_at",
        "cutoff_at",
    ),
    ("serving", "publish_info"): ("last_loaded_at",),  # when data last arrived (the freshness line)
}

# The source tenant ids that belong to the scope's tenant keys, per source system, read from the marts that
# carry both (`{marts}`: the serving file's marts schema, `{tenants}`: the scope's keys as SQL literals).
SOURCE_TENANT_IDS = {
    "turn_reactions": "select source_tenant_id from {marts}.turn_reactions_active where tenant in ({tenants})",
    "workspace": (
        "select source_tenant_id from {marts}.feedback_signals "
        "where source_system = 'workspace' and tenant in ({tenants})"
    ),
    "evals": "select tenant_id from {marts}.eval_replays where tenant in ({tenants})",
}

# Relations whose tenant column holds the source's own id: name -> (column, source system of SOURCE_TENANT_IDS).
SOURCE_TENANT_MARTS = {
    "stored_turn_reactions": ("tenant", "turn_reactions"),
    "retained_turn_reactions": ("tenant", "turn_reactions"),
    "reaction_sources": ("tenant", "turn_reactions"),
    "retained_workspace_feedback": ("tenant_id", "workspace"),
    "retained_workspace_sessions": ("tenant_id", "workspace"),
    "retained_eval_runs": ("tenant_id", "evals"),
}

_aliases = itertools.count()


@dataclass(frozen=True)
class Relation:
    schema: str
    name: str
    kind: str  # "tenant_filter" | "tenant" | "source_tenant" | "metadata" | "hidden"
    columns: tuple[str, ...]

    @property
    def has_tenant_rows(self) -> bool:
        return self.kind in ("tenant_filter", "tenant", "source_tenant")


def classify(schema: str, name: str, columns: tuple[str, ...]) -> Relation:
    """How a scoped reader sees one relation of the serving file (see the module's note)."""
    if (schema, name) in METADATA:
        return Relation(schema, name, "metadata", columns)
    if schema == "marts":
        if name in SOURCE_TENANT_MARTS and SOURCE_TENANT_MARTS[name][0] in columns:
            return Relation(schema, name, "source_tenant", columns)
        if "tenant_filter" in columns:
            return Relation(schema, name, "tenant_filter", columns)
        if "tenant" in columns and name not in SOURCE_TENANT_MARTS:
            return Relation(schema, name, "tenant", columns)
    return Relation(schema, name, "hidden", columns)


def relations(con: duckdb.DuckDBPyConnection, catalog: str) -> list[Relation]:
    """Every relation of the schemas `marts` and `serving` of `catalog`, classified."""
    rows = con.execute(
        """
        select table_schema, table_name, list(column_name order by ordinal_position)
        from information_schema.columns
        where table_catalog = $catalog and table_schema in ('marts', 'serving')
        group by all order by all
        """,
        {"catalog": catalog},
    ).fetchall()
    return [classify(schema, name, tuple(columns)) for schema, name, columns in rows]


def _view(relation: Relation, source: str, tenants: str) -> str:
    """The select of one scoped view over `source` (a quoted catalog), `tenants` the scope's keys as literals."""
    table = f"{source}.{quote(relation.schema)}.{quote(relation.name)}"
    keep = tenants if tenants else None  # an empty scope keeps no tenant's row
    if relation.kind == "metadata":
        wanted = METADATA[(relation.schema, relation.name)]
        listed = "*" if wanted is None else ", ".join(quote(column) for column in wanted if column in relation.columns)
        return f"select {listed or '*'} from {table}" + ("" if listed else " where false")
    if relation.kind == "tenant_filter" and keep:
        return f"select * from {table} where tenant_filter in ({keep})"
    if relation.kind == "tenant" and keep:
        return f"select * from {table} where tenant in ({keep})"
    if relation.kind == "source_tenant" and keep:
        column, system = SOURCE_TENANT_MARTS[relation.name]
        ids = SOURCE_TENANT_IDS[system].format(marts=f"{source}.marts", tenants=keep)
        return f"select * from {table} where {quote(column)} in ({ids})"
    return f"select * from {table} where false"


@contextlib.contextmanager
def scoped(con: duckdb.DuckDBPyConnection, catalog: str, scope: Scope) -> Iterator[None]:
    """Make `catalog` (the attached serving file) the default database of `con` as `scope` sees it: itself for
    EVERYTHING (today's path, no cost), else an in-memory catalog of scoped views over it (about 20 ms for the
    demo's 52 relations), detached on leaving. The previous default database is restored on leaving."""
    previous = con.execute("select current_database()").fetchone()[0]
    if scope.is_all:
        con.execute(f"use {quote(catalog)}")
        try:
            yield
        finally:
            con.execute(f"use {quote(previous)}")
        return
    found = relations(con, catalog)
    alias = f"{catalog}_scoped_{next(_aliases)}"
    tenants = ", ".join(sql_literal(tenant) for tenant in sorted(scope.tenants or ()))
    source = quote(catalog)
    statements = [f"create schema {quote(alias)}.{quote(schema)}" for schema in ("marts", "serving")]
    statements += [
        f"create view {quote(alias)}.{quote(r.schema)}.{quote(r.name)} as {_view(r, source, tenants)}" for r in found
    ]
    con.execute(f"attach ':memory:' as {quote(alias)}")
    try:
        con.execute(";\n".join(statements))
        con.execute(f"use {quote(alias)}")
        yield
    finally:
        try:
            con.execute(f"use {quote(previous)}")
        finally:
            con.execute(f"detach {quote(alias)}")
