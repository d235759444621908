"""The Overview page's queries: headline rates of the period, signal volume, the segments that moved most."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import cached, query
from dashboards.queries.period_rates import period_rates
from dashboards.queries.scope import floor, retention_cutoffs, scope_params

# metric, label, lower is better, definition: the Overview page's cards and the report's headline table
HEADLINES = (
    (
        "session_positive_rate",
        "Session positive rate",
        False,
        "Of the end-of-session answers that rated the session, the share that were positive (skipped answers "
        "left out).",
    ),
    (
        "reaction_satisfaction",
        "Reaction satisfaction",
        False,
        "Of the turn reactions in force, the share that were OK rather than not OK or neutral (each turn's latest "
        "user reaction, and confident machine ones).",
    ),
    (
        "correction_rate",
        "Correction rate (all skills)",
        True,
        "Corrections per skill invocation, a partial correction counting half, over every skill the analyzer saw.",
    ),
    (
        "eval_pass_rate",
        "Eval pass rate",
        False,
        "Share of eval replays that passed on every dimension, over every golden set.",
    ),
)
HEADLINE_METRICS = tuple(metric for metric, *_ in HEADLINES)
# headlines of sources without a tenant: only a reader of every tenant has them (warehouse/scoped.py)
TENANTLESS_HEADLINES = ("session_positive_rate", "correction_rate")


def headline_rates(
    as_of: dt.date, period_days: int, retained: bool, tenant: str | None, project: str | None
) -> pd.DataFrame:
    """One row per headline metric with data in either period: rate, interval, previous rate, change and its
    interval (metric_rates_by_period, segment `all`), and whether the metric has a tenant and a project
    (is_tenant_scoped, is_project_scoped). Session feedback and analyzer events have neither: their rows are the
    all-tenant ones whatever the filter, which the page shows as not split."""
    return period_rates(as_of, period_days, retained, tenant, project, HEADLINE_METRICS)


@cached
def movers(
    as_of: dt.date, period_days: int, retained: bool, tenant: str | None, project: str | None, limit: int = 12
) -> pd.DataFrame:
    """The segments of the headline rates ranked by how much they moved: those with enough trials in both periods
    (`is_rankable`), significant changes first, then the largest. Only the rows of the chosen tenant and project
    themselves: a metric whose source has no tenant (project) has none under a tenant (project) filter, so its
    all-tenant segments never stand among one tenant's."""
    return query(
        """
        select metric, segment_type, segment, segment_label, rate as current, previous_rate as previous,
               rate_change as change, rate_change_ci_low as change_low, rate_change_ci_high as change_high,
               is_significant_change as significant, trials as n
        from marts.metric_rates_by_period
        where as_of_date = $as_of and period_days = $period_days and is_retention_filtered = $retained
          and segment_type <> 'all' and list_contains($metrics, metric) and is_rankable
          and tenant_filter = $tenant_filter and project_filter = $project_filter
        order by is_significant_change desc, change_magnitude desc, metric, segment
        limit $limit
        """,
        {
            "as_of": as_of,
            "period_days": period_days,
            "retained": retained,
            "metrics": list(HEADLINE_METRICS),
            "limit": limit,
            "tenant_filter": scope_params(tenant, project)["tenant_filter"],
            "project_filter": scope_params(tenant, project)["project_filter"],
        },
    )


@cached
def signal_volume_daily(start: dt.date, end: dt.date, retained: bool, tenant: str | None) -> pd.DataFrame:
    """Signals per day and source system (feedback_signals_daily), of one tenant when one is chosen; retention-
    filtered, each source from the cutoff of the policy that purges it (the mart's `retention_policy`)."""
    floors = {policy: floor(policy, retained) for policy in retention_cutoffs()}
    values = ", ".join(f"($policy_{index}, $floor_{index})" for index in range(len(floors))) or "(null, null)"
    return query(
        f"""
        with floors as (select * from (values {values}) as floors (retention_policy, floor_date))
        select signals.signal_date, signals.source_system, sum(signals.signals) as signals
        from marts.feedback_signals_daily as signals
        left join floors using (retention_policy)
        where ($tenant is null or signals.tenant = $tenant)
          and signals.signal_date between $start and $end
          and (floors.floor_date is null or signals.signal_date >= floors.floor_date)
        group by signals.signal_date, signals.source_system
        order by signals.signal_date, signals.source_system
        """,
        {
            "start": start,
            "end": end,
            "tenant": tenant,
            **{f"policy_{index}": policy for index, policy in enumerate(floors)},
            **{f"floor_{index}": value for index, value in enumerate(floors.values())},
        },
    )
