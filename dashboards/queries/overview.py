"""The Overview page's queries: headline rates of the period, signal volume, the segments that moved most."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import _cached, _query
from dashboards.queries.period_rates import period_rates
from dashboards.queries.scope import SCOPE_CLAUSE, SIGNAL_SOURCE_POLICIES, floor, scope_params

# metric, label, lower is better, definition: the Overview page's cards and the report's headline table
HEADLINES = (
    (
        "session_positive_rate",
        "Session positive rate",
        False,
        "positive / (positive + negative) end-of-session answers; skips excluded.",
    ),
    (
        "reaction_satisfaction",
        "Reaction satisfaction",
        False,
        "ok / (ok + not_ok + neutral) active turn reactions (latest user reaction; confident machine ones).",
    ),
    (
        "correction_rate",
        "Correction rate (all skills)",
        True,
        "(corrections + 0.5 x partials) / invocations, analyzer events of every skill.",
    ),
    ("eval_pass_rate", "Eval pass rate", False, "Replays whose every dimension passed / replays, all golden sets."),
)
HEADLINE_METRICS = tuple(metric for metric, *_ in HEADLINES)
# headlines of sources without a tenant: only a reader of every tenant has them (warehouse/scoped.py)
TENANTLESS_HEADLINES = ("session_positive_rate", "correction_rate")


def headline_rates(
    as_of: dt.date, period_days: int, retained: bool, tenant: str | None, project: str | None
) -> pd.DataFrame:
    """One row per headline metric with data in either period: rate, interval, previous rate, change and its
    interval (metric_rates_by_period, segment `all`). Session feedback and analyzer events have no tenant: their
    rows are the all-tenant ones whatever the filter."""
    return period_rates(as_of, period_days, retained, tenant, project, HEADLINE_METRICS)


@_cached
def movers(
    as_of: dt.date, period_days: int, retained: bool, tenant: str | None, project: str | None, limit: int = 12
) -> pd.DataFrame:
    """The segments of the headline rates ranked by how much they moved: those with at least var
    mover_min_trials trials in both periods (`is_rankable`), significant changes first, then the largest."""
    return _query(
        f"""
        select metric, segment, rate as current, previous_rate as previous, rate_change as change,
               rate_change_ci_low as change_low, rate_change_ci_high as change_high,
               is_significant_change as significant, trials as n
        from marts.metric_rates_by_period
        where as_of_date = $as_of and period_days = $period_days and is_retention_filtered = $retained
          and segment_type <> 'all' and list_contains($metrics, metric) and is_rankable
          and {SCOPE_CLAUSE}
        order by is_significant_change desc, change_magnitude desc, metric, segment
        limit $limit
        """,
        {
            "as_of": as_of,
            "period_days": period_days,
            "retained": retained,
            "metrics": list(HEADLINE_METRICS),
            "limit": limit,
            **scope_params(tenant, project),
        },
    )


@_cached
def signal_volume_daily(start: dt.date, end: dt.date, retained: bool, tenant: str | None) -> pd.DataFrame:
    """Signals per day and source system (feedback_signals_daily), of one tenant when one is chosen."""
    series = """
        select signal_date, source_system, sum(signals) as signals
        from marts.feedback_signals_daily where $tenant is null or tenant = $tenant group by all
        """
    floors = {system: floor(policy, retained) for system, policy in SIGNAL_SOURCE_POLICIES.items()}
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
