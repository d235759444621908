"""The report's summary, "Needs attention": the marts it reads beyond the pages' own queries.

- which cells of a candidate agent config fail where the pinned baseline passes (eval_baseline_worse_cells, the
  mart the Evals page lists them from);
- each source's last signal on or before the report's day, and whether it stopped (source_freshness_daily);
(the skill x dimension changes it leads with: dashboards/queries/skills.py, the Skills page's query).

Nothing is computed here: every number and rule comes from dbt.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import cached, query
from dashboards.queries import scope

# the sources of feedback_signals_daily without a tenant (their names in words: dashboards/words.py SOURCES)
TENANTLESS_SOURCES = ("session_feedback", "analyzer")


@cached
def baseline_worse_cells(tenant: str | None) -> pd.DataFrame:
    """The matrix cells where a candidate's latest replay fails and its golden set's pinned baseline passes."""
    return query(
        """
        select golden_set, tenant_name, agent_config_label, golden_session_label, golden_session_id, agent_id,
               failed_dimension_names
        from marts.eval_baseline_worse_cells
        where $tenant is null or tenant = $tenant
        order by golden_set, tenant_name, agent_config_label, golden_session_label
        """,
        {"tenant": tenant},
    )


@cached
def source_freshness(as_of: dt.date, tenant: str | None) -> pd.DataFrame:
    """Each source's last signal on or before `as_of`, the days since and whether it has stopped arriving, with
    the rule's number of days (source_freshness_daily); of `tenant` when given (the sources without a tenant then
    have no row), of every tenant otherwise."""
    return query(
        """
        select source_system, last_signal_date, days_since_last_signal, has_stopped, stopped_after_days
        from marts.source_freshness_daily
        where as_of_date = $as_of and tenant_filter = $tenant_filter
        order by source_system
        """,
        {"as_of": as_of, "tenant_filter": tenant or scope.all_members()},
    )
