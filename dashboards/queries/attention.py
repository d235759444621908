"""The report's summary, "Needs attention": the marts it reads beyond the pages' own queries.

- which cells of a candidate agent config fail where the pinned baseline passes (eval_matrix `versus_baseline`);
- each source's last signal on or before the report's day (feedback_signals_daily), and whether it stopped;
- the skill x dimension changes (skill_dimension_changes: rates, change, interval, BH q-value, all from dbt).

Nothing is computed here but the days between two dates and the comparison with the stated threshold.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import _cached, _query

# A source stopped arriving when its last signal is more than this many days before the report's day (a source
# of the demo and of production delivers every day; a day's delay of an export is not yet a stop).
STOPPED_AFTER_DAYS = 3

# The sources of feedback_signals_daily in words; the first two carry no tenant.
SOURCES = {
    "session_feedback": "Session feedback",
    "analyzer": "Analyzer events",
    "turn_reactions": "Turn reactions",
    "workspace": "Workspace feedback",
}
TENANTLESS_SOURCES = ("session_feedback", "analyzer")


@_cached
def baseline_worse_cells(tenant: str | None) -> pd.DataFrame:
    """The matrix cells where a candidate's latest replay fails and its golden set's pinned baseline passes."""
    return _query(
        """
        select golden_set, tenant_name, agent_config_label, golden_session_label, golden_session_id, agent_id,
               failed_dimension_names
        from marts.eval_matrix
        where versus_baseline = 'worse' and ($tenant is null or tenant = $tenant)
        order by golden_set, tenant_name, agent_config_label, golden_session_label
        """,
        {"tenant": tenant},
    )


@_cached
def source_freshness(as_of: dt.date, tenant: str | None) -> pd.DataFrame:
    """Each source's last signal on or before `as_of` (of `tenant` when given: tenantless sources then have no
    row), the days from it to `as_of`, and whether that is more than STOPPED_AFTER_DAYS."""
    return _query(
        """
        select source_system, max(signal_date) as last_signal_date,
               date_diff('day', max(signal_date), $as_of) as days_since_last_signal,
               date_diff('day', max(signal_date), $as_of) > $stopped_after as has_stopped
        from marts.feedback_signals_daily
        where signal_date <= $as_of and signals > 0 and ($tenant is null or tenant = $tenant)
        group by source_system
        order by source_system
        """,
        {"as_of": as_of, "tenant": tenant, "stopped_after": STOPPED_AFTER_DAYS},
    )


@_cached
def skill_dimension_changes() -> pd.DataFrame:
    """Per skill and dimension: the rate (corrections and partials of the dimension per invocation of the skill)
    of the last window against the one before, the change with its 95% interval and BH q-value (dbt)."""
    return _query(
        """
        select skill_id, dimension, recent_start, recent_end, prior_start, prior_end, recent_invocations,
               prior_invocations, recent_events, prior_events, recent_rate, prior_rate, rate_change,
               rate_change_ci_low, rate_change_ci_high, p_value, q_value, is_significant, is_significant_worsening
        from marts.skill_dimension_changes
        order by is_significant_worsening desc, rate_change desc nulls last, skill_id, dimension
        """
    )
