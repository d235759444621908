-- End-of-session feedback per UTC day and turn-count bucket of the session
-- ('0', '1-2', '3-5', '6-10', '11-20', '21+'; 'unknown' when the record has
-- no turn count), all surfaces together, as of the report instant. Same
-- measures as session_feedback_daily: positive_rate (skips excluded, NULL
-- when there is no positive or negative answer) and skip_rate, with their
-- 95% Wilson intervals. The counts are int_session_feedback__answers_counted's,
-- summed over surfaces and modalities.

with answers as (
    select * from {{ ref('int_session_feedback__answers_counted') }}
),

counts_per_day_and_bucket as (
    select
        feedback_date,
        turn_count_bucket,
        turn_count_bucket_order,
        cast(sum(positive) as bigint) as positive,
        cast(sum(negative) as bigint) as negative,
        -- `skip` is the contract's name (not reserved in DuckDB or Spark)
        cast(sum(skip) as bigint) as skip,  -- noqa: RF04
        cast(sum(responses) as bigint) as responses
    from answers
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
        {{ session_answer_rates() }}
    from counts_per_day_and_bucket
)

select * from rates
