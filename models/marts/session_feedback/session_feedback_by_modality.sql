-- End-of-session feedback per UTC day and modality, the channel the user
-- rated (`text`, `voice`; any other value upstream wrote under its own name,
-- 'unknown' for rows landed before the loader read it), all surfaces
-- together, as of the report instant. Same measures as
-- session_feedback_daily: positive_rate (skips excluded, NULL when there is
-- no positive or negative answer) and skip_rate, with their 95% Wilson
-- intervals. The counts are int_session_feedback__answers_counted's, summed
-- over surfaces and turn-count buckets.

with answers as (
    select * from {{ ref('int_session_feedback__answers_counted') }}
),

counts_per_day_and_modality as (
    select
        feedback_date,
        modality,
        cast(sum(positive) as bigint) as positive,
        cast(sum(negative) as bigint) as negative,
        -- `skip` as in session_feedback_daily (not reserved in DuckDB or Spark)
        cast(sum(skip) as bigint) as skip,  -- noqa: RF04
        cast(sum(responses) as bigint) as responses
    from answers
    group by feedback_date, modality
),

rates as (
    select
        feedback_date,
        modality,
        positive,
        negative,
        skip,
        responses,
        positive + negative as rated_responses,
        {{ session_answer_rates() }}
    from counts_per_day_and_modality
)

select * from rates
