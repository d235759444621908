"""The Warehouse page's queries: rows per raw table, loads, quarantine, as of the last build (warehouse_* marts)."""

from __future__ import annotations

import pandas as pd

from dashboards.data import cached, query


@cached
def raw_table_counts() -> pd.DataFrame:
    return query("select raw_table, row_count, last_loaded_at from marts.warehouse_raw_tables order by table_order")


@cached
def recent_loads(limit: int = 50) -> pd.DataFrame:
    return query(
        """
        select finished_at, source, target_table, uri, rows_read, rows_loaded, rows_quarantined, rows_duplicate,
               seconds
        from marts.warehouse_loads
        order by finished_at desc
        limit $limit
        """,
        {"limit": limit},
    )


@cached
def quarantine_by_reason() -> pd.DataFrame:
    return query(
        """
        select target_table, first_reason, quarantined_rows as rows, last_seen_at
        from marts.warehouse_quarantine_reasons
        order by rows desc
        """
    )


@cached
def daily_loaded_rows() -> pd.DataFrame:
    return query(
        """
        select load_date, target_table, rows_loaded
        from marts.warehouse_loaded_rows_daily
        order by load_date
        """
    )


@cached
def source_inputs() -> pd.DataFrame:
    """Where each raw table's rows came from: one row per table and kind of input (warehouse_sources)."""
    return query(
        """
        select raw_table, input_kind, inputs, loads, rows_read, rows_loaded, rows_quarantined, rows_duplicate,
               rows_skipped, rows_removed, last_load_at, purpose
        from marts.warehouse_sources
        order by raw_table, input_kind
        """
    )


@cached
def reaction_sources(tenant: str | None = None, project: str | None = None) -> pd.DataFrame:
    """Per tenant and project of the turn reactions: which part decides what is active (reaction_sources).

    `tenant` is the tenant key of the filters; reaction_sources names a tenant as the reactions do, so the key's
    own ids are those feedback_signals maps to it."""
    return query(
        """
        select tenant, project, active_part, index_schema, active_reactions, blob_reactions, index_rows_present,
               index_rows_removed, reactions_only_in_blobs, last_blob_load_at, last_index_load_at
        from marts.reaction_sources
        where ($tenant is null or tenant in (
                select source_tenant_id from marts.feedback_signals
                where source_system = 'turn_reactions' and tenant = $tenant
              ))
          and ($project is null or project = $project)
        order by tenant, project
        """,
        {"tenant": tenant, "project": project},
    )
