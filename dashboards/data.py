"""The dashboard's only way to the data: connection, caching, errors, and the warehouse's status.

The dashboard reads the warehouse's serving file (`<stem>.serving.duckdb`
beside it), never the warehouse itself: every successful build publishes the
marts there by writing a new file and renaming it over the old one
(operations/serving.py). So ingest, purge, build and forget never make a page
wait, and a page open during a publish shows the old numbers or the new ones.

Which warehouse: the one it is given, never one it finds itself. The entry point (app.py) resolves it once
from the command line that started the server (`feedback-analytics dashboard --db` hands it over as
FEEDBACK_DB) and stores it in the Streamlit session (`set_session_warehouse`); the report, and any caller
outside a Streamlit session, read in a `use_warehouse` block. A call with neither reads nothing.

Each call opens the serving file read-only for the duration of its statements
(`_session`): it attaches the file to the process's one in-memory DuckDB and
detaches it afterwards (5 ms, where a new DuckDB connection costs 25 ms), so
a reader never holds an old file for longer than one call.

Results are cached with st.cache_data, keyed by the query's arguments (the
sidebar's filter values) and by the serving file's identity: its path, inode
and modification time (`_warehouse_version`). A reload after a publish
therefore reads the new numbers at once, and two warehouses in one process
(the tests) never share a cache entry.

Each page's queries live in a module of their own (dashboards/queries/), built on
`cached`, `query` and `queries` here (public: no module outside this one uses a private
name of it). They select, filter and sum the dbt marts (schema `marts`) and nothing
else: every rate and interval is computed by dbt.

Every call reads as the session's tenant scope sees the marts (warehouse/scoped.py): `set_session_scope`
stores a Streamlit session's scope (sign-in decides it; a session without one reads nothing), `use_scope`
sets it for a block outside a Streamlit session (the report; a process outside any Streamlit session and
any `use_scope` block is the local command line, which reads everything). The scope is part of every cache
key, so a result cached for one scope is never served to another.

`status()` is the one reader of anything but marts: which marts the serving
file holds and its `serving.publish_info` row (when data last arrived in the
warehouse, as of the publish).
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import functools
import itertools
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from warehouse.access import EVERYTHING, NOTHING, Scope
from warehouse.build_record import unpublished_build, unpublished_message
from warehouse.connection import attach_read_only, limit_memory
from warehouse.errors import UserError, WarehouseLocked
from warehouse.location import Warehouse
from warehouse.scoped import scoped

CACHE_SECONDS = 300
LOCK_RETRY_SECONDS = 3.0
BUILD_HINT = "`feedback-analytics build` (or `make demo` for demo data)"
LOAD_HINT = "`feedback-analytics ingest --config sources.toml` then `feedback-analytics build` (or `make demo`)"


class WarehouseUnavailable(Exception):
    """The warehouse file is missing, not loaded, not built, or a mart is missing: the message says what to run."""


class WarehouseBusy(WarehouseUnavailable):
    """Another process (ingest, purge, build) holds the write lock longer than we wait."""


# -- the warehouse it reads: given, never resolved here -----------------------------------------------------------
WAREHOUSE_KEY = "_warehouse"  # st.session_state key: no widget has it, so no browser and no URL can set it
_block_warehouse: contextvars.ContextVar[Warehouse | None] = contextvars.ContextVar("block_warehouse", default=None)


def set_session_warehouse(warehouse: Warehouse) -> None:
    """The warehouse every call of this Streamlit session reads (app.py, which resolved it once)."""
    st.session_state[WAREHOUSE_KEY] = warehouse


@contextlib.contextmanager
def use_warehouse(warehouse: Warehouse) -> Iterator[None]:
    """Read `warehouse` in this block, whatever the session's (the report, benchmarks, tests)."""
    token = _block_warehouse.set(warehouse)
    try:
        yield
    finally:
        _block_warehouse.reset(token)


def current_warehouse() -> Warehouse:
    """The warehouse of this call: a `use_warehouse` block's, else the Streamlit session's; with neither, none."""
    block = _block_warehouse.get()
    if block is not None:
        return block
    if get_script_run_ctx(suppress_warning=True) is not None:
        warehouse = st.session_state.get(WAREHOUSE_KEY)
        if isinstance(warehouse, Warehouse):
            return warehouse
    raise WarehouseUnavailable("No warehouse given to the data layer: the entry point (app.py) or the report gives it.")


def _warehouse_version() -> tuple[str, int, int]:
    warehouse = current_warehouse()
    path = warehouse.serving.resolve()
    try:
        stat = path.stat()
    except FileNotFoundError:  # nothing published: "missing" or "never built" depends on the warehouse file
        return (str(path), 0, int(warehouse.path.exists()))
    return (str(path), stat.st_ino, stat.st_mtime_ns)  # a publish renames a new file in: a new inode


# -- the reader's tenant scope -------------------------------------------------------------------------------------
SCOPE_KEY = "_access_scope"  # st.session_state key: no widget has it, so no browser and no URL can set it
_block_scope: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("block_scope", default=None)


def set_session_scope(scope: Scope) -> None:
    """The scope every call of this Streamlit session reads with (app.py, once it knows who signed in)."""
    st.session_state[SCOPE_KEY] = scope


@contextlib.contextmanager
def use_scope(scope: Scope) -> Iterator[None]:
    """Read with `scope` in this block, whatever the session's scope (the report, tests)."""
    token = _block_scope.set(scope)
    try:
        yield
    finally:
        _block_scope.reset(token)


def current_scope() -> Scope:
    """The scope of this call: a `use_scope` block's; else the Streamlit session's, NOTHING when it has none
    (fail closed); else, outside any Streamlit session (the command line, which can read the file anyway),
    EVERYTHING."""
    block = _block_scope.get()
    if block is not None:
        return block
    if get_script_run_ctx(suppress_warning=True) is None:
        return EVERYTHING
    scope = st.session_state.get(SCOPE_KEY)
    return scope if isinstance(scope, Scope) else NOTHING


def _scope_key(scope: Scope) -> tuple[str, ...] | None:
    """A scope as a cache key that hashes the same for the same tenants (a frozenset's order may vary)."""
    return None if scope.tenants is None else tuple(sorted(scope.tenants))


R = TypeVar("R")


def cached(function: Callable[..., R]) -> Callable[..., R]:
    """st.cache_data keyed by the arguments, the warehouse version and the reader's scope; `.clear()` empties it.
    The cached function runs with the scope of its key, so an entry holds only what that scope may read."""

    def run(version: tuple[str, int, int], scope: tuple[str, ...] | None, *args: Any, **kwargs: Any) -> R:
        with use_scope(EVERYTHING if scope is None else Scope.only(scope)):
            return function(*args, **kwargs)

    # st.cache_data tells functions apart by module, qualified name and source:
    # name each wrapper after the function it caches, or they would share one cache.
    run.__qualname__ = f"{function.__qualname__}.cached"
    run = st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)(run)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> R:
        return run(_warehouse_version(), _scope_key(current_scope()), *args, **kwargs)

    wrapper.clear = run.clear  # type: ignore[attr-defined]
    return wrapper


def clear_caches() -> None:
    st.cache_data.clear()


# One in-memory DuckDB for the process: creating a DuckDB instance costs about 25 ms, attaching the warehouse
# file to an existing one about 5 ms. Each session attaches the file read-only under a name of its own and
# detaches it on leaving, so the file is open only while a call's statements run (a writer may take it then).
_instance: duckdb.DuckDBPyConnection | None = None
_instance_lock = threading.Lock()
_aliases = itertools.count()


def _cursor() -> duckdb.DuckDBPyConnection:
    global _instance
    with _instance_lock:
        if _instance is None:
            _instance = duckdb.connect(":memory:")
            limit_memory(_instance, None)  # small reads of marts: no spill folder (one instance, any warehouse)
        return _instance.cursor()


@contextlib.contextmanager
def _connect(path: Path, scope: Scope) -> Iterator[tuple[duckdb.DuckDBPyConnection, Callable[[str], None]]]:
    """A connection whose default database is the warehouse file as `scope` sees it (warehouse/scoped.py),
    attached read-only until the block ends; waits LOCK_RETRY_SECONDS for a writer's lock (the ground floor's
    one wait loop). Yields the connection and the scoping step's `prepare(sql)`, to call before each statement."""
    con = _cursor()
    alias = f"warehouse_{next(_aliases)}"
    try:
        try:
            attach_read_only(con, path, alias, wait_seconds=LOCK_RETRY_SECONDS)
        except WarehouseLocked:
            raise WarehouseBusy(
                f"The serving file {path} is held for writing by another process (not one of ours: a build "
                "publishes by renaming a new file in): reload the page in a moment."
            ) from None
        except UserError as exc:
            raise WarehouseUnavailable(f"Cannot open the warehouse at {path}: {str(exc).split(': ', 1)[-1]}") from None
        try:
            with scoped(con, alias, scope, lazy=True) as prepare:
                yield con, prepare
        finally:
            try:
                con.execute("use memory")
            finally:
                con.execute(f"detach {alias}")  # releases the file's lock, whatever the block raised
    finally:
        con.close()


def _bind(sql: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The named parameters ($name) the statement uses: DuckDB rejects extra ones, and optional clauses vary."""
    used = set(re.findall(r"\$([A-Za-z_]\w*)", sql))
    return {name: value for name, value in (params or {}).items() if name in used}


Read = Callable[..., pd.DataFrame]  # read(sql, params=None): one statement's rows


@contextlib.contextmanager
def _session() -> Iterator[Read]:
    """The warehouse attached read-only, detached on leaving: for the statements of one call, back to back.
    Yields `read(sql, params=None)`, which runs one statement as the call's scope sees the marts."""
    warehouse = current_warehouse()
    path = warehouse.serving
    if not path.exists():
        raise WarehouseUnavailable(_not_published(warehouse))
    try:
        with _connect(path, current_scope()) as (con, prepare):

            def read(sql: str, params: dict[str, Any] | None = None) -> pd.DataFrame:
                prepare(sql)  # the scoped views this statement reads (warehouse/scoped.py)
                return con.execute(sql, _bind(sql, params)).df()

            yield read
    except duckdb.CatalogException as exc:
        raise WarehouseUnavailable(
            f"The warehouse at {path} lacks a table this page reads ({str(exc).splitlines()[0]}). "
            f"Build the marts with {BUILD_HINT}."
        ) from None
    except duckdb.BinderException as exc:
        # marts built by an older version of the project (a column this version reads is missing)
        raise WarehouseUnavailable(
            f"The warehouse at {path} lacks a column this page reads ({str(exc).splitlines()[0]}). "
            f"Rebuild the marts with {BUILD_HINT}."
        ) from None


def queries(*statements: str | tuple[str, dict[str, Any]]) -> list[pd.DataFrame]:
    """Run statements back to back in one session (the file is detached before returning)."""
    with _session() as read:
        return [read(*((statement, None) if isinstance(statement, str) else statement)) for statement in statements]


def query(sql: str, params: dict[str, Any] | None = None) -> pd.DataFrame:
    """Run one statement in a session of its own."""
    return queries((sql, params or {}))[0]


# -- the warehouse's state: missing, loaded, built; as of when ------------------------------------------------------
@dataclass(frozen=True)
class WarehouseStatus:
    path: str
    state: str  # "missing" | "not_built" (no serving file yet) | "ready" (app.py: "unavailable" when unreadable)
    marts: tuple[str, ...] = ()
    as_of: dt.date | None = None
    built_at: dt.datetime | None = None
    last_loaded_at: dt.datetime | None = None
    first_date: dt.date | None = None
    message: str = field(default="")
    # read on the same connection, since every page needs them: (tenant key, tenant name, project or None)
    # for the filters, and (policy, first day kept or None) from retention_policy_windows
    tenant_projects: tuple[tuple[str, str, str | None], ...] = ()
    retention_cutoffs: tuple[tuple[str, dt.date | None], ...] = ()
    # a newer build than the published one exists (warehouse/build_record.py): what to say, else ""
    unpublished: str = ""
    # vars of the build the pages must agree with (marts.build_info): the tenant/project filter value of a rollup
    # over all of them (var all_members_key), the level a q-value is significant below (trend_significance_level)
    all_members_key: str = ""
    trend_significance_level: float | None = None
    # the period lengths metric_rates_by_period holds (var period_lengths_days of that build), shortest first
    periods: tuple[int, ...] = ()

    @property
    def ready(self) -> bool:
        return self.state == "ready"


def _timestamp(value: Any) -> dt.datetime | None:
    return None if pd.isna(value) else pd.Timestamp(value).to_pydatetime()


def _not_published(warehouse: Warehouse) -> str:
    if not warehouse.path.exists():
        return f"No warehouse at `{warehouse.path}` yet. Create it with {LOAD_HINT}."
    return (
        f"The warehouse at `{warehouse.path}` was never built (or only by a version before the serving file): no "
        f"marts are published to `{warehouse.serving}`, the file the dashboard reads. Run {BUILD_HINT}."
    )


@cached
def status() -> WarehouseStatus:
    """What the serving file holds and as of when, on one connection. Never raises for a missing or unbuilt
    warehouse.

    The marts say for which as_of and when they were built (marts.build_info, written by every build);
    serving.publish_info says when data last arrived in the warehouse (as of the publish).
    """
    warehouse = current_warehouse()
    path = warehouse.serving
    if not path.exists():
        state = "not_built" if warehouse.path.exists() else "missing"
        return WarehouseStatus(str(warehouse.path), state, message=_not_published(warehouse))
    with _session() as read:
        marts = tuple(
            sorted(
                read(
                    "select table_name from information_schema.tables "
                    "where table_catalog = current_database() and table_schema = 'marts'"
                )["table_name"]
            )
        )
        if not {"build_info", "session_feedback_daily"} <= set(marts):
            return WarehouseStatus(
                str(path),
                "not_built",
                marts=marts,
                message=f"The serving file `{path}` holds no built marts. Run {BUILD_HINT}.",
            )
        info = read("select * from serving.publish_info")
        last_loaded_at = _timestamp(info["last_loaded_at"].iloc[0])
        # a serving file of an older version names no build
        published_build = info["build_id"].iloc[0] if "build_id" in info.columns else None
        build = read(
            "select built_at, as_of_at, all_members_key, trend_significance_level "
            "from marts.build_info order by built_at desc limit 1"
        )
        # the first day of session feedback; a scope without it (tenantless): its tenants' first signal
        signals = "(select min(signal_date) from marts.feedback_signals_daily)"
        first = read(
            "select coalesce((select min(feedback_date) from marts.session_feedback_daily), "
            f"{signals if 'feedback_signals_daily' in marts else 'null'}) as first_date"
        )
        tenant_sources = [
            sql
            for mart, sql in (
                (
                    "conversation_feedback_summary",
                    "select tenant, tenant_name, project from marts.conversation_feedback_summary",
                ),
                ("eval_matrix", "select tenant, tenant_name, null from marts.eval_matrix"),
                ("feedback_signals_daily", "select tenant, tenant_name, null from marts.feedback_signals_daily"),
            )
            if mart in marts
        ]
        tenant_rows = read(" union ".join(tenant_sources)) if tenant_sources else pd.DataFrame()
        cutoffs = (
            read("select policy, cast(cutoff_at as date) as cutoff_date from marts.retention_policy_windows")
            if "retention_policy_windows" in marts
            else pd.DataFrame(columns=["policy", "cutoff_date"])
        )
        periods = (
            read("select distinct period_days from marts.metric_rates_by_period order by period_days")
            if "metric_rates_by_period" in marts
            else pd.DataFrame(columns=["period_days"])
        )
    as_of_at = _timestamp(build["as_of_at"].iloc[0]) if not build.empty else None
    first_date = first["first_date"].iloc[0]
    return WarehouseStatus(
        str(path),
        "ready",
        marts=marts,
        as_of=as_of_at.date() if as_of_at else None,
        built_at=_timestamp(build["built_at"].iloc[0]) if not build.empty else None,
        last_loaded_at=last_loaded_at,
        first_date=None if pd.isna(first_date) else pd.Timestamp(first_date).date(),
        tenant_projects=tuple(
            (tenant, name if isinstance(name, str) and name else tenant, project if isinstance(project, str) else None)
            for tenant, name, project in tenant_rows.itertuples(index=False)
            if isinstance(tenant, str) and tenant
        ),
        retention_cutoffs=tuple(
            (policy, None if pd.isna(cutoff) else pd.Timestamp(cutoff).date())
            for policy, cutoff in cutoffs.itertuples(index=False)
        ),
        unpublished=_unpublished(warehouse.path, published_build if isinstance(published_build, str) else None),
        all_members_key="" if build.empty else str(build["all_members_key"].iloc[0]),
        trend_significance_level=None if build.empty else float(build["trend_significance_level"].iloc[0]),
        periods=tuple(int(days) for days in periods["period_days"]),
    )


def _unpublished(db: Path, published_build: str | None) -> str:
    """What to say when the warehouse holds a newer build than the serving file (read beside the warehouse,
    never from it: a writer may hold it)."""
    record = unpublished_build(db, published_build)
    return unpublished_message(db, record, with_path=False) if record else ""
