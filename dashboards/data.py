"""All SQL of the dashboard, and its only way to the warehouse.

Each call opens the DuckDB file read-only for the duration of its statements
(`_session`): it attaches the file to the process's one in-memory DuckDB and
detaches it afterwards (5 ms, where a new DuckDB connection costs 25 ms), so
the nightly job can write between two page loads; a call that meets the
writer's lock retries for a moment, then says the warehouse is busy.

Results are cached with st.cache_data, keyed by the query's arguments (the
sidebar's filter values) and by the warehouse's identity: its path and the
modification times of the file and its WAL (`_warehouse_version`). A reload
after an ingest or a rebuild therefore reads the new data at once, and two
warehouses in one process (the tests) never share a cache entry.

Pages read the dbt marts (schema `marts`); the Warehouse page reads `raw`'s
bookkeeping tables, and "everything stored" drill-downs read the staging views
(1:1 with raw) where the retained_* views would hide rows.

Dates: the daily marts are keyed by UTC day. A period is the N days ending on
the as-of day, [as_of - N + 1, as_of], the previous period the N days before.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import itertools
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pandas as pd
import streamlit as st

from warehouse.connection import attach_read_only
from warehouse.errors import UserError, WarehouseLocked
from warehouse.location import resolve_db_path
from warehouse.raw_tables import DATA_TABLES

CACHE_SECONDS = 300
LOCK_RETRY_SECONDS = 3.0
RAW_DATA_TABLES = tuple(DATA_TABLES)
BUILD_HINT = "`feedback-analytics build` (or `make demo` for demo data)"
LOAD_HINT = "`feedback-analytics ingest --config sources.toml` then `feedback-analytics build` (or `make demo`)"

# Which retention policy (seed retention_policies) governs each daily series,
# so "retention-filtered" hides the days the next purge removes.
SIGNAL_SOURCE_POLICIES = {
    "session_feedback": "session_feedback",
    "turn_reactions": "turn_reactions",
    "analyzer": "analyzer_events",
    "workspace": "workspace_feedback",
}


class WarehouseUnavailable(Exception):
    """The warehouse file is missing, not loaded, not built, or a mart is missing: the message says what to run."""


class WarehouseBusy(WarehouseUnavailable):
    """Another process (ingest, purge, build) holds the write lock longer than we wait."""


def warehouse_path() -> Path:
    """The file the command line resolved (`feedback-analytics dashboard --db` exports FEEDBACK_DB)."""
    try:
        return resolve_db_path()
    except UserError as exc:
        raise WarehouseUnavailable(str(exc)) from None


def _warehouse_version() -> tuple[str, int, int]:
    path = warehouse_path().resolve()
    wal = path.with_name(path.name + ".wal")
    return (
        str(path),
        path.stat().st_mtime_ns if path.exists() else 0,
        wal.stat().st_mtime_ns if wal.exists() else 0,
    )


R = TypeVar("R")


def _cached(function: Callable[..., R]) -> Callable[..., R]:
    """st.cache_data keyed by the arguments and the warehouse version; `.clear()` empties it."""

    def cached(version: tuple[str, int, int], *args: Any, **kwargs: Any) -> R:
        return function(*args, **kwargs)

    # st.cache_data tells functions apart by module, qualified name and source:
    # name each wrapper after the function it caches, or they would share one cache.
    cached.__qualname__ = f"{function.__qualname__}.cached"
    cached = st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)(cached)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> R:
        return cached(_warehouse_version(), *args, **kwargs)

    wrapper.clear = cached.clear  # type: ignore[attr-defined]
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
        return _instance.cursor()


@contextlib.contextmanager
def _connect(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection whose default database is the warehouse file, attached read-only until the block ends;
    waits LOCK_RETRY_SECONDS for a writer's lock (the ground floor's one wait loop)."""
    con = _cursor()
    alias = f"warehouse_{next(_aliases)}"
    try:
        try:
            attach_read_only(con, path, alias, wait_seconds=LOCK_RETRY_SECONDS)
        except WarehouseLocked:
            raise WarehouseBusy(
                f"The warehouse at {path} is being written by another process (ingest, purge or build): "
                "reload the page in a moment."
            ) from None
        except UserError as exc:
            raise WarehouseUnavailable(f"Cannot open the warehouse at {path}: {str(exc).split(': ', 1)[-1]}") from None
        try:
            con.execute(f"use {alias}")
            yield con
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


class _Session:
    """One read-only connection for a few statements in a row (see `_session`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con

    def df(self, sql: str, params: dict[str, Any] | None = None) -> pd.DataFrame:
        return self._con.execute(sql, _bind(sql, params)).df()


@contextlib.contextmanager
def _session() -> Iterator[_Session]:
    """The warehouse attached read-only, detached on leaving: for the statements of one call, back to back."""
    path = warehouse_path()
    if not path.exists():
        raise WarehouseUnavailable(f"No warehouse at {path}. Create one with {LOAD_HINT}, or point FEEDBACK_DB at it.")
    try:
        with _connect(path) as con:
            yield _Session(con)
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


def _queries(*statements: str | tuple[str, dict[str, Any]]) -> list[pd.DataFrame]:
    """Run statements back to back in one session (the file is detached before returning)."""
    with _session() as session:
        return [
            session.df(*((statement, None) if isinstance(statement, str) else statement)) for statement in statements
        ]


def _query(sql: str, params: dict[str, Any] | None = None) -> pd.DataFrame:
    """Run one statement in a session of its own."""
    return _queries((sql, params or {}))[0]


# -- the warehouse's state: missing, loaded, built; as of when ------------------------------------------------------
@dataclass(frozen=True)
class WarehouseStatus:
    path: str
    state: str  # "missing" | "not_loaded" | "not_built" | "ready" (app.py: "unavailable" when unreadable)
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

    @property
    def ready(self) -> bool:
        return self.state == "ready"


def _timestamp(value: Any) -> dt.datetime | None:
    return None if pd.isna(value) else pd.Timestamp(value).to_pydatetime()


@_cached
def status() -> WarehouseStatus:
    """What the warehouse holds and as of when, on one connection. Never raises for a missing or unbuilt warehouse.

    The marts say for which as_of and when they were built (marts.build_info, written by every build); the
    load manifest says when data last arrived.
    """
    path = warehouse_path()
    if not path.exists():
        return WarehouseStatus(
            str(path), "missing", message=f"No warehouse at `{path}` yet. Create it with {LOAD_HINT}."
        )
    with _session() as session:
        tables = session.df(
            "select table_schema, table_name from information_schema.tables "
            "where table_catalog = current_database() and table_schema in ('raw', 'marts')"
        )
        raw = set(tables.loc[tables["table_schema"] == "raw", "table_name"])
        marts = tuple(sorted(tables.loc[tables["table_schema"] == "marts", "table_name"]))
        if not raw & set(RAW_DATA_TABLES) or "load_manifest" not in raw:
            return WarehouseStatus(
                str(path),
                "not_loaded",
                message=f"The warehouse at `{path}` holds no data yet. Load it with {LOAD_HINT}.",
            )
        last_loaded_at = _timestamp(
            session.df("select max(finished_at) as last_loaded_at from raw.load_manifest")["last_loaded_at"].iloc[0]
        )
        if not {"build_info", "session_feedback_daily"} <= set(marts):
            return WarehouseStatus(
                str(path),
                "not_built",
                marts=marts,
                last_loaded_at=last_loaded_at,
                message=f"The warehouse at `{path}` is loaded but its marts were never built. Run {BUILD_HINT}.",
            )
        build = session.df("select built_at, as_of_at from marts.build_info order by built_at desc limit 1")
        first = session.df("select min(feedback_date) as first_date from marts.session_feedback_daily")
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
        tenant_rows = session.df(" union ".join(tenant_sources)) if tenant_sources else pd.DataFrame()
        cutoffs = (
            session.df("select policy, cast(cutoff_at as date) as cutoff_date from marts.retention_policy_windows")
            if "retention_policy_windows" in marts
            else pd.DataFrame(columns=["policy", "cutoff_date"])
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
    )


# -- filters: tenants, projects, retention cutoffs ---------------------------------------------------------------------
def tenants() -> dict[str, str]:
    """Every tenant of the marts (conversations, evals, unified signals), for the filters: tenant key -> display name,
    in the order of the names. The marts' `tenant` is the one key across sources (seed `tenants`), so a tenant's
    reactions and its workspace rows are one entry. Two keys with the same name are told apart by their key."""
    names = {tenant: name for tenant, name, _ in status().tenant_projects}
    shared = {name for name, keys in Counter(names.values()).items() if keys > 1}
    labels = {tenant: f"{name} ({tenant})" if name in shared else name for tenant, name in names.items()}
    return dict(sorted(labels.items(), key=lambda item: (item[1].casefold(), item[0])))


def projects(tenant: str | None) -> list[str]:
    """The projects of a tenant key (of every tenant when None), for the filters."""
    return sorted(
        {project for owner, _, project in status().tenant_projects if project and (tenant is None or owner == tenant)}
    )


def retention_cutoffs() -> dict[str, dt.date | None]:
    """Policy -> first day it keeps (None: kept forever). Same cutoffs as the retained_* views."""
    return dict(status().retention_cutoffs)


def _floor(policy: str, retained: bool) -> dt.date | None:
    """First day a retention-filtered series shows (None: no lower bound)."""
    if not retained:
        return None
    return retention_cutoffs().get(policy)


# -- overview ---------------------------------------------------------------------------------------------------------
@_cached
def kpi_counts(
    start: dt.date, end: dt.date, prev_start: dt.date, retained: bool, tenant: str | None, project: str | None
) -> pd.DataFrame:
    """One row per (metric, period in current/previous): successes and trials of the headline rates.

    Reaction satisfaction reads turn_reactions_active when a tenant or project
    is chosen (reaction_satisfaction_daily has neither), the daily mart
    otherwise; both count the same active reactions.
    """
    reactions = (
        """
        select reaction_date as day, count_if(reaction = 'ok') as successes, count(*) as trials
        from marts.turn_reactions_active
        where ($tenant is null or tenant = $tenant) and ($project is null or project = $project)
        group by all
        """
        if tenant or project
        else "select reaction_date as day, ok as successes, reactions as trials from marts.reaction_satisfaction_daily"
    )
    return _query(
        f"""
        with series as (
            select 'session_positive_rate' as metric, feedback_date as day,
                   positive as successes, positive + negative as trials, $session_floor as floor_date
            from marts.session_feedback_daily
            union all
            select 'reaction_satisfaction', day, successes, trials, $reaction_floor
            from ({reactions})
            union all
            select 'correction_rate', invoked_date, weighted_corrections, sample_size, $analyzer_floor
            from marts.skill_correction_daily_history
            union all
            select 'eval_pass_rate', run_date, passes, replays, $eval_floor
            from marts.eval_set_accuracy_trend
            where $tenant is null or tenant = $tenant
        ),

        windowed as (
            select metric, if(day >= $start, 'current', 'previous') as period, successes, trials
            from series
            where day between $prev_start and $end and (floor_date is null or day >= floor_date)
        )

        select metric, period, coalesce(sum(successes), 0) as successes, coalesce(sum(trials), 0) as trials
        from windowed
        group by all
        """,
        {
            "start": start,
            "end": end,
            "prev_start": prev_start,
            "tenant": tenant,
            "project": project,
            "session_floor": _floor("session_feedback", retained),
            "reaction_floor": _floor("turn_reactions", retained),
            "analyzer_floor": _floor("analyzer_events", retained),
            "eval_floor": _floor("replay_sessions", retained),
        },
    )


@_cached
def signal_volume_daily(start: dt.date, end: dt.date, retained: bool, tenant: str | None) -> pd.DataFrame:
    """Signals per day and source system (feedback_signals_daily), of one tenant when one is chosen."""
    series = """
        select signal_date, source_system, sum(signals) as signals
        from marts.feedback_signals_daily where $tenant is null or tenant = $tenant group by all
        """
    floors = {system: _floor(policy, retained) for system, policy in SIGNAL_SOURCE_POLICIES.items()}
    return _query(
        f"""
        with series as ({series}),
        floors as (
            select * from (values {", ".join(f"('{system}', $floor_{system})" for system in floors)})
                as floors (source_system, floor_date)
        )
        select series.signal_date, series.source_system, series.signals
        from series
        left join floors using (source_system)
        where series.signal_date between $start and $end
          and (floors.floor_date is null or series.signal_date >= floors.floor_date)
        order by series.signal_date, series.source_system
        """,
        {"start": start, "end": end, "tenant": tenant, **{f"floor_{key}": value for key, value in floors.items()}},
    )


@_cached
def mover_counts(
    start: dt.date, end: dt.date, prev_start: dt.date, retained: bool, tenant: str | None, project: str | None
) -> pd.DataFrame:
    """Per segment of each headline rate (surface, origin, skill, set x agent): successes and trials per period."""
    reactions = """
        select reaction_date as day, origin as segment, count_if(reaction = 'ok') as successes, count(*) as trials
        from marts.turn_reactions_active
        where ($tenant is null or tenant = $tenant) and ($project is null or project = $project)
        group by all
    """
    return _query(
        f"""
        with series as (
            select 'Session positive rate' as metric, 'surface ' || source as segment, feedback_date as day,
                   positive as successes, positive + negative as trials, $session_floor as floor_date
            from marts.session_feedback_daily
            union all
            select 'Session positive rate', 'turns ' || turn_count_bucket, feedback_date, positive,
                   positive + negative, $session_floor
            from marts.session_feedback_by_turn_bucket
            union all
            select 'Reaction satisfaction', segment || ' reactions', day, successes, trials, $reaction_floor
            from ({reactions})
            union all
            select 'Correction rate', 'skill ' || skill_id, invoked_date, weighted_corrections, sample_size,
                   $analyzer_floor
            from marts.skill_correction_daily_history
            union all
            select 'Eval pass rate', golden_set || ' / agent ' || left(agent_id, 8), run_date, passes, replays,
                   $eval_floor
            from marts.eval_set_accuracy_trend
            where $tenant is null or tenant = $tenant
        )
        select metric, segment,
               sum(successes) filter (where day >= $start) as successes,
               sum(trials) filter (where day >= $start) as trials,
               sum(successes) filter (where day < $start) as prev_successes,
               sum(trials) filter (where day < $start) as prev_trials
        from series
        where day between $prev_start and $end and (floor_date is null or day >= floor_date)
        group by all
        """,
        {
            "start": start,
            "end": end,
            "prev_start": prev_start,
            "tenant": tenant,
            "project": project,
            "session_floor": _floor("session_feedback", retained),
            "reaction_floor": _floor("turn_reactions", retained),
            "analyzer_floor": _floor("analyzer_events", retained),
            "eval_floor": _floor("replay_sessions", retained),
        },
    )


# -- session feedback -------------------------------------------------------------------------------------------------
@_cached
def session_feedback_daily(start: dt.date, end: dt.date, retained: bool) -> pd.DataFrame:
    return _query(
        """
        select feedback_date, source as surface, positive, negative, skip, responses,
               positive_rate, positive_rate_ci_low, positive_rate_ci_high,
               skip_rate, skip_rate_ci_low, skip_rate_ci_high
        from marts.session_feedback_daily
        where feedback_date between $start and $end and ($floor is null or feedback_date >= $floor)
        order by feedback_date, surface
        """,
        {"start": start, "end": end, "floor": _floor("session_feedback", retained)},
    )


@_cached
def session_feedback_by_turn_bucket(start: dt.date, end: dt.date, retained: bool) -> pd.DataFrame:
    """Counts per turn-count bucket summed over the period (rates and intervals are computed by the page)."""
    return _query(
        """
        select turn_count_bucket, min(turn_count_bucket_order) as bucket_order,
               sum(positive) as positive, sum(negative) as negative, sum(skip) as skip,
               sum(responses) as responses
        from marts.session_feedback_by_turn_bucket
        where feedback_date between $start and $end and ($floor is null or feedback_date >= $floor)
        group by all
        order by bucket_order
        """,
        {"start": start, "end": end, "floor": _floor("session_feedback", retained)},
    )


# -- conversations and reactions --------------------------------------------------------------------------------------
@_cached
def reaction_satisfaction_daily(
    start: dt.date, end: dt.date, retained: bool, tenant: str | None, project: str | None
) -> pd.DataFrame:
    """Satisfaction per day and origin: the daily mart, or turn_reactions_active when a tenant or project is chosen."""
    if tenant or project:
        series = """
            select reaction_date, origin, count_if(reaction = 'ok') as ok, count_if(reaction = 'not_ok') as not_ok,
                   count_if(reaction = 'neutral') as neutral, count(*) as reactions
            from marts.turn_reactions_active
            where ($tenant is null or tenant = $tenant) and ($project is null or project = $project)
            group by all
        """
    else:
        series = "select reaction_date, origin, ok, not_ok, neutral, reactions from marts.reaction_satisfaction_daily"
    return _query(
        f"""
        select reaction_date, origin, ok, not_ok, neutral, reactions
        from ({series})
        where reaction_date between $start and $end and ($floor is null or reaction_date >= $floor)
        order by reaction_date, origin
        """,
        {"start": start, "end": end, "floor": _floor("turn_reactions", retained), "tenant": tenant, "project": project},
    )


@_cached
def reaction_changes_daily(start: dt.date, end: dt.date, retained: bool) -> pd.DataFrame:
    return _query(
        """
        select reaction_date, user_reactions, new_reactions, replacements, reversals, clears,
               flip_rate, flip_rate_ci_low, flip_rate_ci_high
        from marts.reaction_changes_daily
        where reaction_date between $start and $end and ($floor is null or reaction_date >= $floor)
        order by reaction_date
        """,
        {"start": start, "end": end, "floor": _floor("turn_reactions", retained)},
    )


@_cached
def conversations(
    start: dt.date, end: dt.date, retained: bool, tenant: str | None, project: str | None, limit: int = 500
) -> pd.DataFrame:
    """Conversations whose last reaction falls in the period, newest first, with the total count as `matching`.

    `tenant` is the tenant key, `tenant_name` its display name; `source_tenant_id` (the reactions' own tenant),
    project and conversation_id identify the conversation for `conversation_detail`."""
    return _query(
        """
        select tenant_name, project, conversation_id, last_activity_at, total, "user", machine, ok, not_ok, neutral,
               ok / nullif(ok + not_ok + neutral, 0) as satisfaction_rate,
               tenant, source_tenant_id,
               count(*) over () as matching
        from marts.conversation_feedback_summary
        where last_activity_at >= $start and last_activity_at < $end + interval 1 day
          and ($floor is null or last_activity_at >= $floor)
          and ($tenant is null or tenant = $tenant) and ($project is null or project = $project)
        order by last_activity_at desc, conversation_id
        limit $limit
        """,
        {
            "start": start,
            "end": end,
            "floor": _floor("turn_reactions", retained),
            "tenant": tenant,
            "project": project,
            "limit": limit,
        },
    )


@_cached
def conversation_detail(
    source_tenant_id: str, project: str, conversation_id: str, retained: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One conversation on one connection: the active reaction of each turn (its rn identifies the stored row),
    and every stored reaction (replaced and cleared ones too), flagged when it is the active one.

    The conversation is named as the reactions name it: their own tenant (`source_tenant_id` in the marts,
    `tenant` in the stored rows), project and conversation id."""
    relation = "marts.retained_turn_reactions" if retained else "staging.stg_reactions__turn_reactions"
    key = {"source_tenant_id": source_tenant_id, "project": project, "conversation_id": conversation_id}
    same_conversation = "project = $project and conversation_id = $conversation_id"
    active_rows = f"source_tenant_id = $source_tenant_id and {same_conversation}"
    stored_rows = f"tenant = $source_tenant_id and {same_conversation}"
    turns, history = _queries(
        (
            f"""
            select turn_id, origin, reaction, confidence, reacted_at, comment_text, rn
            from marts.turn_reactions_active
            where {active_rows}
            order by reacted_at, turn_id, origin
            """,
            key,
        ),
        (
            f"""
            with active as (select rn from marts.turn_reactions_active where {active_rows})
            select history.turn_id, history.origin, history.reaction, history.is_clear, history.confidence,
                   history.reacted_at, history.reaction_rn as rn, active.rn is not null as is_active
            from (select * from {relation} where {stored_rows}) as history
            left join active on active.rn = history.reaction_rn
            order by history.turn_id, history.reacted_at
            """,
            key,
        ),
    )
    return turns, history


# -- skills -----------------------------------------------------------------------------------------------------------
@_cached
def _skill_marts() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The three small skill marts on one connection (rates, trends, hotspots). Each carries the window its
    build used (correction_lookback_days, trend_window_days), the same on every row."""
    rates, trends, hotspots = _queries(
        """
        select skill_id, corrections, partials, acceptances, sample_size, correction_rate,
               correction_rate_ci_low, correction_rate_ci_high, sufficient_data, correction_lookback_days
        from marts.skill_correction_rates
        order by sufficient_data desc, correction_rate desc nulls last, skill_id
        """,
        """
        select skill_id, recent_rate, prior_rate, recent_sample, prior_sample, trend, direction,
               recent_rate_ci_low, recent_rate_ci_high, prior_rate_ci_low, prior_rate_ci_high,
               p_value, q_value, is_significant, trend_window_days
        from marts.skill_correction_trends
        order by trend desc nulls last, skill_id
        """,
        """
        select skill_id, dimension, occurrences, correction_lookback_days
        from marts.skill_dimension_hotspots
        order by skill_id, occurrences desc
        """,
    )
    return rates, trends, hotspots


def skill_correction_rates() -> pd.DataFrame:
    return _skill_marts()[0]


def skill_correction_trends() -> pd.DataFrame:
    return _skill_marts()[1]


def skill_dimension_hotspots() -> pd.DataFrame:
    return _skill_marts()[2]


@_cached
def skill_detail(
    skill_id: str, start: dt.date, end: dt.date, retained: bool, limit: int = 100
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One skill on one connection: its weekly correction rate for the weeks that overlap the period, and its
    latest events in the period (`matching`: how many there are in all)."""
    relation = "marts.retained_analyzer_events" if retained else "staging.stg_analyzer__events"
    # a timestamp range, not cast(invoked_at as date): events arrive (and are stored) in time order, so the range
    # skips the row groups outside the period
    in_period = "skill_id = $skill_id and invoked_at >= $start and invoked_at < $end + interval 1 day"
    params = {
        "skill_id": skill_id,
        "start": start,
        "end": end,
        "limit": limit,
        "floor": _floor("analyzer_events", retained),
    }
    weekly, events, matching = _queries(
        (
            """
            select week_start, sample_size, correction_rate, correction_rate_ci_low, correction_rate_ci_high
            from marts.skill_correction_weekly
            where skill_id = $skill_id and week_start between $start - interval 6 day and $end
              and ($floor is null or week_start >= $floor - interval 6 day)
            order by week_start
            """,
            params,
        ),
        (
            f"""
            select invoked_at, outcome, correction_type, dimension_hint, confidence, turns_to_feedback,
                   array_to_string(ai_tools_used, ', ') as ai_tools_used,
                   nullif(user_message_snippet, '') as user_message_snippet, session_id, event_id
            from {relation}
            where {in_period}
            order by invoked_at desc, event_id
            limit $limit
            """,
            params,
        ),
        (f"select count(*) as matching from {relation} where {in_period}", params),
    )
    return weekly, events.assign(matching=int(matching["matching"].iloc[0]))


# -- evals ------------------------------------------------------------------------------------------------------------
@_cached
def eval_matrix(tenant: str | None) -> pd.DataFrame:
    return _query(
        """
        select golden_set, golden_session_id, agent_id, replay_session_id, replayed_at, passed, overall_accuracy,
               cell_status, failed_dimension_names, divergence_count, previous_passed, previous_overall_accuracy,
               replays_in_window, passes_in_window, flips_in_window, has_pending_replay, pending_replay_session_id,
               latest_pending_at, pending_since
        from marts.eval_matrix
        where $tenant is null or tenant = $tenant
        order by golden_set, golden_session_id, agent_id
        """,
        {"tenant": tenant},
    )


@_cached
def eval_cell_dimensions(replay_session_id: str) -> pd.DataFrame:
    return _query(
        """
        select dimension, score, passed, divergence_count, divergences
        from marts.eval_cell_dimensions
        where replay_session_id = $replay_session_id
        order by passed, dimension
        """,
        {"replay_session_id": replay_session_id},
    )


@_cached
def eval_cell_history(golden_session_id: str, agent_id: str) -> pd.DataFrame:
    """Every finished replay of one matrix cell: when, whether it passed, its mean dimension score."""
    return _query(
        """
        select replay_session_id, replayed_at, bool_and(passed) as passed, avg(score) as mean_score,
               sum(divergence_count) as divergences
        from marts.eval_cell_dimensions
        where golden_session_id = $golden_session_id and agent_id = $agent_id
        group by all
        order by replayed_at
        """,
        {"golden_session_id": golden_session_id, "agent_id": agent_id},
    )


@_cached
def eval_regressions(tenant: str | None) -> pd.DataFrame:
    return _query(
        """
        select golden_set, golden_session_id, agent_id, replayed_at, overall_accuracy, previous_overall_accuracy,
               accuracy_change, failed_dimension_names, divergence_count, has_pending_replay
        from marts.eval_regressions
        where $tenant is null or tenant = $tenant
        order by replayed_at desc
        """,
        {"tenant": tenant},
    )


@_cached
def eval_trend(start: dt.date, end: dt.date, retained: bool, tenant: str | None) -> pd.DataFrame:
    return _query(
        """
        select golden_set, agent_id, run_date, sum(replays) as replays, sum(passes) as passes,
               sum(passes) / nullif(sum(replays), 0) as pass_rate,
               sum(mean_accuracy * replays) / nullif(sum(replays), 0) as mean_accuracy
        from marts.eval_set_accuracy_trend
        where run_date between $start and $end and ($floor is null or run_date >= $floor)
          and ($tenant is null or tenant = $tenant)
        group by all
        order by golden_set, agent_id, run_date
        """,
        {"start": start, "end": end, "floor": _floor("replay_sessions", retained), "tenant": tenant},
    )


# -- retention --------------------------------------------------------------------------------------------------------
@_cached
def retention_windows() -> pd.DataFrame:
    return _query(
        """
        select windows.policy, windows.raw_table, windows.scope, windows.action, windows.keep_days,
               windows.date_column, windows.as_of_at, windows.cutoff_at, windows.rows_kept,
               windows.rows_outside_window, policies.description
        from marts.retention_policy_windows as windows
        left join seeds.retention_policies as policies using (policy)
        order by windows.raw_table, windows.keep_days nulls first
        """
    )


@_cached
def purge_log(limit: int = 200) -> pd.DataFrame:
    return _query(
        """
        select
            applied_at, policy, table_name, cutoff, rows_archived, rows_deleted,
            coalesce(rows_deleted_from_archive, 0) as rows_deleted_from_archive, is_dry_run, archive_uri
        from raw.purge_log
        order by applied_at desc
        limit $limit
        """,
        {"limit": limit},
    )


# -- warehouse operations ---------------------------------------------------------------------------------------------
@_cached
def raw_table_counts() -> pd.DataFrame:
    return _query(
        " union all ".join(
            f"select '{table}' as raw_table, count(*) as row_count, max(_loaded_at) as last_loaded_at from raw.{table}"
            for table in RAW_DATA_TABLES
        )
    )


@_cached
def recent_loads(limit: int = 50) -> pd.DataFrame:
    return _query(
        """
        select finished_at, source, target_table, uri, rows_read, rows_loaded, rows_quarantined, rows_duplicate,
               date_diff('millisecond', started_at, finished_at) / 1000.0 as seconds
        from raw.load_manifest
        order by finished_at desc
        limit $limit
        """,
        {"limit": limit},
    )


@_cached
def quarantine_by_reason() -> pd.DataFrame:
    return _query(
        """
        select target_table, split_part(reason, ';', 1) as first_reason, count(*) as rows,
               max(quarantined_at) as last_seen_at
        from raw.quarantine
        group by all
        order by rows desc
        """
    )


@_cached
def daily_loaded_rows() -> pd.DataFrame:
    return _query(
        """
        select cast(finished_at as date) as load_date, target_table, sum(rows_loaded) as rows_loaded
        from raw.load_manifest
        group by all
        order by load_date
        """
    )
