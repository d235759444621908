-- End-of-session feedback per UTC day and modality, the channel the user
-- rated (`text`, `voice`; any other value upstream wrote under its own name,
-- 'unknown' for rows landed before the loader read it), all surfaces
-- together, as of the report instant. Same measures as
-- session_feedback_daily: positive_rate (skips excluded, NULL when there is
-- no positive or negative answer) and skip_rate, with their 95% Wilson
-- intervals.

with records as (
    select * from {{ ref('int_session_feedback__records_as_of') }}
),

counts_per_day_and_modality as (
    select
        feedback_date,
        modality,
        count(case when is_positive then 1 end) as positive,
        count(case when is_negative then 1 end) as negative,
        -- `skip` as in session_feedback_daily (not reserved in DuckDB or Spark)
        count(case when is_skip then 1 end) as skip,  -- noqa: RF04
        count(*) as responses
    from records
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
        {{ rate_with_interval('positive', 'positive + negative', 'positive_rate') }},
        {{ rate_with_interval('skip', 'responses', 'skip_rate') }}
    from counts_per_day_and_modality
)

select * from rates
