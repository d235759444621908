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
import re
from collections.abc import Callable, Collection, Iterator
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


def relations(
    con: duckdb.DuckDBPyConnection, catalog: str, names: Collection[tuple[str, str]] | None = None
) -> list[Relation]:
    """The relations of the schemas `marts` and `serving` of `catalog` (only `names`, when given), classified."""
    rows = con.execute(
        """
        select table_schema, table_name, list(column_name order by ordinal_position)
        from information_schema.columns
        where table_catalog = $catalog and table_schema in ('marts', 'serving')
          and ($names is null or list_contains($names, table_schema || '.' || table_name))
        group by all order by all
        """,
        {"catalog": catalog, "names": None if names is None else [f"{schema}.{name}" for schema, name in names]},
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


# `marts.x` / `serving.x` (quoted or not) in a statement; a statement that lists the catalog needs every view
_NAMED = re.compile(r'\b(marts|serving)"?\s*\.\s*"?([A-Za-z_]\w*)', re.IGNORECASE)
_LISTS = re.compile(r"\b(information_schema|duckdb_\w+|show|describe|summarize)\b", re.IGNORECASE)


class _Views:
    """The scoped catalog's views, created on first use: `prepare(sql)` before each statement."""

    def __init__(self, con: duckdb.DuckDBPyConnection, catalog: str, alias: str, scope: Scope) -> None:
        self._con, self._catalog, self._alias = con, catalog, alias
        self._tenants = ", ".join(sql_literal(tenant) for tenant in sorted(scope.tenants or ()))
        self._made: set[tuple[str, str]] = set()
        self._all = False

    def prepare(self, sql: str) -> None:
        if self._all:
            return
        if _LISTS.search(sql):
            wanted = None
        else:
            wanted = {(schema.lower(), name) for schema, name in _NAMED.findall(sql)} - self._made
            if not wanted:
                return
        found = [r for r in relations(self._con, self._catalog, wanted) if (r.schema, r.name) not in self._made]
        alias, source = quote(self._alias), quote(self._catalog)
        statements = [
            f"create view {alias}.{quote(r.schema)}.{quote(r.name)} as {_view(r, source, self._tenants)}" for r in found
        ]
        if statements:
            self._con.execute(";\n".join(statements))
        self._made |= {(r.schema, r.name) for r in found}
        self._all = wanted is None


@contextlib.contextmanager
def scoped(
    con: duckdb.DuckDBPyConnection, catalog: str, scope: Scope, *, lazy: bool = False
) -> Iterator[Callable[[str], None]]:
    """Make `catalog` (the attached serving file) the default database of `con` as `scope` sees it: itself for
    EVERYTHING (today's path, no cost), else an in-memory catalog of scoped views over it, detached on leaving;
    the previous default database is restored on leaving.

    Yields `prepare(sql)`, to call before each statement: with `lazy`, it creates the views the statement names
    (every view for a statement that lists the catalog), about 1 ms where all of the demo's 52 take 20 ms; a
    relation it does not name is not there (an error, never another tenant's row). Without `lazy`, every view
    exists from the start and `prepare` does nothing."""
    previous = con.execute("select current_database()").fetchone()[0]
    if scope.is_all:
        con.execute(f"use {quote(catalog)}")
        try:
            yield lambda sql: None
        finally:
            con.execute(f"use {quote(previous)}")
        return
    alias = f"{catalog}_scoped_{next(_aliases)}"
    con.execute(f"attach ':memory:' as {quote(alias)}")
    try:
        con.execute(";\n".join(f"create schema {quote(alias)}.{quote(schema)}" for schema in ("marts", "serving")))
        views = _Views(con, catalog, alias, scope)
        if not lazy:
            views.prepare("select * from information_schema.tables")
        con.execute(f"use {quote(alias)}")
        yield views.prepare
    finally:
        try:
            con.execute(f"use {quote(previous)}")
        finally:
            con.execute(f"detach {quote(alias)}")
