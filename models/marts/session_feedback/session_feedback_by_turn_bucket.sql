-- End-of-session feedback per UTC day and turn-count bucket of the session
-- ('0', '1-2', '3-5', '6-10', '11-20', '21+'; 'unknown' when the record has
-- no turn count), all surfaces together, as of the report instant. Same
-- measures as session_feedback_daily: positive_rate (skips excluded, NULL
-- when there is no positive or negative answer) and skip_rate, with their
-- 95% Wilson intervals.

with records as (
    select * from {{ ref('int_session_feedback__records_as_of') }}
),

counts_per_day_and_bucket as (
    select
        feedback_date,
        turn_count_bucket,
        turn_count_bucket_order,
        count(case when is_positive then 1 end) as positive,
        count(case when is_negative then 1 end) as negative,
        -- `skip` is the contract's name (not reserved in DuckDB or Spark)
        count(case when is_skip then 1 end) as skip,  -- noqa: RF04
        count(*) as responses
    from records
    group by feedback_date, turn_count_bucket, turn_count_bucket_order
),

rates as (
    select
        feedback_date,
        turn_count_bucket,
        turn_count_bucket_order,
        positive,
        negative,
        skip,
        responses,
        positive + negative as rated_responses,
        {{ rate_with_interval('positive', 'positive + negative', 'positive_rate') }},
        {{ rate_with_interval('skip', 'responses', 'skip_rate') }}
    from counts_per_day_and_bucket
)

select * from rates
