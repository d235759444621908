-- One row per skill of skill_correction_trends: the trend (recent rate minus
-- prior rate) with the 95% interval of that difference, Newcombe's hybrid
-- score interval from the two windows' published Wilson intervals. NULL
-- when either window has no events (no trend at all).

with trends as (
    select * from {{ ref('skill_correction_trends') }}
),

intervals as (
    select
        skill_id,
        trend,
        {{ round_metric(newcombe_difference_low(
            'recent_rate', 'recent_rate_ci_low', 'recent_rate_ci_high',
            'prior_rate', 'prior_rate_ci_low', 'prior_rate_ci_high',
        )) }} as trend_ci_low,
        {{ round_metric(newcombe_difference_high(
            'recent_rate', 'recent_rate_ci_low', 'recent_rate_ci_high',
            'prior_rate', 'prior_rate_ci_low', 'prior_rate_ci_high',
        )) }} as trend_ci_high
    from trends
)

select * from intervals
