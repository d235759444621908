"""Rates over the sidebar's period, read from metric_rates_by_period (shared by the Overview, Session feedback
and Conversations pages).

The mart holds, for every as-of day, period length (1, 7, 30, 90 days), retention variant, metric, segment
and tenant / project filter value: successes and trials of the period and of the period before, the rate with
its 95% Wilson interval, the change with Newcombe's interval, its significance and the movers' ranking inputs.
A page picks rows; it computes nothing.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import cached, query
from dashboards.queries.scope import SCOPE_CLAUSE, scope_params

COLUMNS = """
    as_of_date, period_days, metric, segment_type, segment, segment_value, segment_label, segment_order,
    is_tenant_scoped, is_project_scoped,
    successes, trials, rate, rate_ci_low, rate_ci_high,
    previous_successes, previous_trials, previous_rate, previous_rate_ci_low, previous_rate_ci_high,
    rate_change, rate_change_ci_low, rate_change_ci_high, is_significant_change, is_rankable, change_magnitude
"""


@cached
def period_rates(
    as_of: dt.date,
    period_days: int,
    retained: bool,
    tenant: str | None,
    project: str | None,
    metrics: tuple[str, ...],
    segment_type: str = "all",
) -> pd.DataFrame:
    """One row per metric and segment of one segment type, for the period of `period_days` ending on `as_of`.
    A metric or segment without any trial in either period has no row."""
    return query(
        f"""
        select {COLUMNS}
        from marts.metric_rates_by_period
        where as_of_date = $as_of and period_days = $period_days and is_retention_filtered = $retained
          and segment_type = $segment_type and list_contains($metrics, metric)
          and {SCOPE_CLAUSE}
        order by metric, segment_order, segment
        """,
        {
            "as_of": as_of,
            "period_days": period_days,
            "retained": retained,
            "segment_type": segment_type,
            "metrics": list(metrics),
            **scope_params(tenant, project),
        },
    )


@cached
def daily_rates(
    start: dt.date,
    end: dt.date,
    retained: bool,
    tenant: str | None,
    project: str | None,
    metric: str,
    segment_type: str,
) -> pd.DataFrame:
    """One row per day in [start, end] and segment with at least one trial that day: the 1-day periods."""
    return query(
        f"""
        select {COLUMNS}
        from marts.metric_rates_by_period
        where as_of_date between $start and $end and period_days = 1 and is_retention_filtered = $retained
          and metric = $metric and segment_type = $segment_type and trials > 0
          and {SCOPE_CLAUSE}
        order by as_of_date, segment_order, segment
        """,
        {
            "start": start,
            "end": end,
            "retained": retained,
            "metric": metric,
            "segment_type": segment_type,
            **scope_params(tenant, project),
        },
    )


@cached
def weekly_rates(
    as_of: dt.date, weeks: int, retained: bool, tenant: str | None, project: str | None, metrics: tuple[str, ...]
) -> pd.DataFrame:
    """The weekly trend: the 7-day periods ending on as_of, as_of - 7 days, ... (`weeks` of them), segment `all`,
    one row per metric and week with at least one trial."""
    return query(
        f"""
        select {COLUMNS}
        from marts.metric_rates_by_period
        where list_contains($days, as_of_date) and period_days = 7 and is_retention_filtered = $retained
          and segment_type = 'all' and list_contains($metrics, metric) and trials > 0
          and {SCOPE_CLAUSE}
        order by metric, as_of_date
        """,
        {
            "days": [as_of - dt.timedelta(days=7 * week) for week in range(weeks)],
            "retained": retained,
            "metrics": list(metrics),
            **scope_params(tenant, project),
        },
    )
