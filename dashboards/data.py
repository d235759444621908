"""All SQL of the dashboard, and its only way to the warehouse.

Each query opens the DuckDB file read-only for the duration of that query,
so the nightly job can write between two page loads. Results are cached with
st.cache_data, keyed by the query's arguments.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pandas as pd
import streamlit as st

CACHE_SECONDS = 300
RAW_DATA_TABLES = (
    "analyzer_events",
    "session_feedback",
    "turn_reactions",
    "workspace_feedback",
    "workspace_sessions",
    "workspace_eval_runs",
)


def warehouse_path() -> Path:
    return Path(os.environ.get("FEEDBACK_DB") or "feedback.duckdb")


class WarehouseUnavailable(Exception):
    """The warehouse file is missing or has never been loaded."""


def _query(sql: str, params: list | None = None) -> pd.DataFrame:
    path = warehouse_path()
    if not path.exists():
        raise WarehouseUnavailable(
            f"No warehouse at {path}. Load one with `feedback-analytics ingest --config sources.toml` "
            "(or `make demo`), or point FEEDBACK_DB at it."
        )
    try:
        with duckdb.connect(str(path), read_only=True) as con:
            return con.execute(sql, params or []).df()
    except duckdb.CatalogException as exc:
        raise WarehouseUnavailable(
            f"The warehouse at {path} has not been loaded yet ({str(exc).splitlines()[0]}). "
            "Run `feedback-analytics ingest ...` first."
        ) from None


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def raw_table_counts() -> pd.DataFrame:
    return _query(
        " union all ".join(
            f"select '{table}' as raw_table, count(*) as row_count, max(_loaded_at) as last_loaded_at from raw.{table}"
            for table in RAW_DATA_TABLES
        )
    )


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def recent_loads(limit: int = 50) -> pd.DataFrame:
    return _query(
        """
        select finished_at, source, target_table, uri, rows_read, rows_loaded, rows_quarantined, rows_duplicate,
               date_diff('millisecond', started_at, finished_at) / 1000.0 as seconds
        from raw.load_manifest
        order by finished_at desc
        limit ?
        """,
        [limit],
    )


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
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


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def daily_loaded_rows() -> pd.DataFrame:
    return _query(
        """
        select cast(finished_at as date) as load_date, target_table, sum(rows_loaded) as rows_loaded
        from raw.load_manifest
        group by all
        order by load_date
        """
    )
