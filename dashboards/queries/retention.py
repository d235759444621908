"""The Retention page's queries: each policy's window and description, the purge log (as of the build)."""

from __future__ import annotations

import pandas as pd

from dashboards.data import cached, query


@cached
def retention_windows() -> pd.DataFrame:
    return query(
        """
        select policy, raw_table, scope, action, keep_days, date_column, as_of_at, cutoff_at, rows_kept,
               rows_outside_window, description
        from marts.retention_policy_summary
        order by raw_table, keep_days nulls first
        """
    )


@cached
def purge_log(limit: int = 200) -> pd.DataFrame:
    return query(
        """
        select applied_at, policy, table_name, cutoff, rows_archived, rows_deleted, rows_deleted_from_archive,
               is_dry_run, archive_uri
        from marts.retention_purge_log
        order by applied_at desc
        limit $limit
        """,
        {"limit": limit},
    )
