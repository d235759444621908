"""The Skills page's queries (the report reads them too): the skill marts (rates, trends with the change's
interval, the change per skill and dimension) and one skill's weekly rate and latest events."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import cached, queries
from dashboards.queries.scope import floor


@cached
def _skill_marts() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two small skill marts on one connection (rates, trends). Each carries the window its
    build used (correction_lookback_days, trend_window_days), the same on every row. Trends come with the 95%
    interval of the change (skill_correction_trend_intervals). Rates carry each skill's undated events (no
    invocation time: in no window, counted apart)."""
    rates, trends = queries(
        """
        select skill_id, corrections, partials, acceptances, sample_size, correction_rate,
               correction_rate_ci_low, correction_rate_ci_high, sufficient_data, undated_events,
               correction_lookback_days
        from marts.skill_correction_rates
        order by sufficient_data desc, correction_rate desc nulls last, skill_id
        """,
        """
        select trends.skill_id, trends.recent_rate, trends.prior_rate, trends.recent_sample, trends.prior_sample,
               trends.trend, trends.direction, trends.recent_rate_ci_low, trends.recent_rate_ci_high,
               trends.prior_rate_ci_low, trends.prior_rate_ci_high, trends.p_value, trends.q_value,
               trends.is_significant, trends.trend_window_days,
               intervals.trend_ci_low, intervals.trend_ci_high
        from marts.skill_correction_trends as trends
        left join marts.skill_correction_trend_intervals as intervals using (skill_id)
        order by trends.trend desc nulls last, trends.skill_id
        """,
    )
    return rates, trends


def skill_correction_rates() -> pd.DataFrame:
    return _skill_marts()[0]


def skill_correction_trends() -> pd.DataFrame:
    return _skill_marts()[1]


@cached
def skill_dimension_changes() -> pd.DataFrame:
    """marts.skill_dimension_changes: per skill and dimension, the rate (corrections and partials of the dimension
    per invocation of the skill) of the last trend window against the one before, the change with its interval
    and BH q-value; significant worsenings first, then by change, largest first."""
    (changes,) = queries(
        """
        select skill_id, dimension, recent_start, recent_end, prior_start, prior_end,
               recent_invocations, prior_invocations, recent_events, prior_events, recent_rate, prior_rate,
               rate_change, rate_change_ci_low, rate_change_ci_high, p_value, q_value, is_significant,
               is_significant_worsening
        from marts.skill_dimension_changes
        order by is_significant_worsening desc, rate_change desc nulls last, skill_id, dimension
        """
    )
    return changes


@cached
def skill_detail(
    skill_id: str, start: dt.date, end: dt.date, retained: bool, limit: int = 100
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One skill on one connection: its weekly correction rate for the weeks that overlap the period, and its
    latest events in the period (`matching`: how many there are in all). Events: stored_analyzer_events
    (everything stored up to as_of), only those it marks is_retained (the rows of retained_analyzer_events) when
    the retention switch is on."""
    relation = "marts.stored_analyzer_events"
    # a timestamp range, not cast(invoked_at as date): events arrive (and are stored) in time order, so the range
    # skips the row groups outside the period
    in_period = "skill_id = $skill_id and invoked_at >= $start and invoked_at < $end + interval 1 day"
    in_period += " and is_retained" if retained else ""
    params = {
        "skill_id": skill_id,
        "start": start,
        "end": end,
        "limit": limit,
        "floor": floor("analyzer_events", retained),
    }
    weekly, events, matching = queries(
        (
            """
            select week_start, sample_size, correction_rate, correction_rate_ci_low, correction_rate_ci_high
            from marts.skill_correction_weekly
            where skill_id = $skill_id and week_start between $start - interval 6 day and $end
              and ($floor is null or week_start >= cast($floor as date) - interval 6 day)
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
