-- Must hold: session_feedback_daily (by surface) and
-- session_feedback_by_turn_bucket (by turn-count bucket) split the same
-- answers, so per day their positive, negative and skip counts are equal.
-- Returns the days where they differ.

with daily as (
    select * from {{ ref('session_feedback_daily') }}
),

by_bucket as (
    select * from {{ ref('session_feedback_by_turn_bucket') }}
),

daily_totals as (
    select
        feedback_date,
        sum(positive) as positive,
        sum(negative) as negative,
        sum(skip) as skips
    from daily
    group by feedback_date
),

bucket_totals as (
    select
        feedback_date,
        sum(positive) as positive,
        sum(negative) as negative,
        sum(skip) as skips
    from by_bucket
    group by feedback_date
),

violations as (
    select
        daily_totals.positive as daily_positive,
        bucket_totals.positive as bucket_positive,
        coalesce(daily_totals.feedback_date, bucket_totals.feedback_date) as feedback_date
    from daily_totals
    full outer join bucket_totals
        on daily_totals.feedback_date = bucket_totals.feedback_date
    where
        daily_totals.positive is distinct from bucket_totals.positive
        or daily_totals.negative is distinct from bucket_totals.negative
        or daily_totals.skips is distinct from bucket_totals.skips
)

select * from violations
