"""The Session feedback page's queries: the daily marts by surface and by modality, and the period's rates (all
surfaces, by modality and by turn-count bucket) from metric_rates_by_period."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import cached, query
from dashboards.queries.period_rates import period_rates
from dashboards.queries.scope import floor

SESSION_METRICS = ("session_positive_rate", "session_skip_rate")


@cached
def session_feedback_daily(start: dt.date, end: dt.date, retained: bool) -> pd.DataFrame:
    return query(
        """
        select feedback_date, source as surface, positive, negative, skip, responses,
               positive_rate, positive_rate_ci_low, positive_rate_ci_high,
               skip_rate, skip_rate_ci_low, skip_rate_ci_high
        from marts.session_feedback_daily
        where feedback_date between $start and $end and ($floor is null or feedback_date >= $floor)
        order by feedback_date, surface
        """,
        {"start": start, "end": end, "floor": floor("session_feedback", retained)},
    )


@cached
def session_feedback_by_modality(start: dt.date, end: dt.date, retained: bool) -> pd.DataFrame:
    """Answers per day and modality (text, voice; any other channel upstream wrote, under its own name)."""
    return query(
        """
        select feedback_date, modality, positive, negative, skip, responses,
               positive_rate, positive_rate_ci_low, positive_rate_ci_high,
               skip_rate, skip_rate_ci_low, skip_rate_ci_high
        from marts.session_feedback_by_modality
        where feedback_date between $start and $end and ($floor is null or feedback_date >= $floor)
        order by feedback_date, modality
        """,
        {"start": start, "end": end, "floor": floor("session_feedback", retained)},
    )


def session_feedback_rates(as_of: dt.date, period_days: int, retained: bool, segment_type: str = "all") -> pd.DataFrame:
    """Positive rate (successes positive, trials rated answers) and skip rate (successes skips, trials responses)
    of the period, one row per metric and segment: `all`, `modality` (segment_value is the modality) or
    `turn_count_bucket` (segment_value is the bucket, segment_order its order). End-of-session answers have no
    tenant or project."""
    return period_rates(as_of, period_days, retained, None, None, SESSION_METRICS, segment_type)
