-- Must hold: session_answers_daily (the semantic layer's counts, per day,
-- surface and turn-count bucket) and session_feedback_daily (per day and
-- surface) count the same answers: summed over buckets, every day and
-- surface has the same positive, negative and skip counts. Returns the days
-- and surfaces where they differ.

with answers as (
    select * from {{ ref('session_answers_daily') }}
),

daily as (
    select * from {{ ref('session_feedback_daily') }}
),

answers_per_surface as (
    select
        feedback_date,
        surface,
        sum(positive) as positive,
        sum(negative) as negative,
        sum(skip) as skips
    from answers
    group by feedback_date, surface
),

violations as (
    select
        answers_per_surface.positive as semantic_positive,
        daily.positive as daily_positive,
        coalesce(answers_per_surface.feedback_date, daily.feedback_date) as feedback_date,
        coalesce(answers_per_surface.surface, daily.source) as surface
    from answers_per_surface
    full outer join daily
        on
            answers_per_surface.feedback_date = daily.feedback_date
            and answers_per_surface.surface = daily.source
    where
        answers_per_surface.feedback_date is null
        or daily.feedback_date is null
        or answers_per_surface.positive != daily.positive
        or answers_per_surface.negative != daily.negative
        or answers_per_surface.skips != daily.skip
)

select * from violations
