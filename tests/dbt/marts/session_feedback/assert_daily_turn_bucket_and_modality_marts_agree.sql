-- Must hold: session_feedback_daily (by surface), session_feedback_by_turn_bucket
-- (by turn-count bucket) and session_feedback_by_modality (by modality) split
-- the same answers, so per day their positive, negative and skip counts are
-- equal. Returns the days where one of them differs from the daily mart.

with daily as (
    select * from {{ ref('session_feedback_daily') }}
),

by_bucket as (
    select * from {{ ref('session_feedback_by_turn_bucket') }}
),

by_modality as (
    select * from {{ ref('session_feedback_by_modality') }}
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

split_totals as (
    select
        'turn_count_bucket' as split,
        feedback_date,
        sum(positive) as positive,
        sum(negative) as negative,
        sum(skip) as skips
    from by_bucket
    group by feedback_date
    union all
    select
        'modality' as split,
        feedback_date,
        sum(positive) as positive,
        sum(negative) as negative,
        sum(skip) as skips
    from by_modality
    group by feedback_date
),

splits as (
    select 'turn_count_bucket' as split
    union all
    select 'modality' as split
),

expected as (
    select
        splits.split,
        daily_totals.feedback_date,
        daily_totals.positive,
        daily_totals.negative,
        daily_totals.skips
    from daily_totals
    cross join splits
),

violations as (
    select
        expected.positive as daily_positive,
        split_totals.positive as split_positive,
        coalesce(expected.split, split_totals.split) as split,
        coalesce(expected.feedback_date, split_totals.feedback_date) as feedback_date
    from expected
    full outer join split_totals
        on
            expected.split = split_totals.split
            and expected.feedback_date = split_totals.feedback_date
    where
        expected.positive is distinct from split_totals.positive
        or expected.negative is distinct from split_totals.negative
        or expected.skips is distinct from split_totals.skips
)

select * from violations
