-- End-of-session feedback per UTC day and source surface (cli_end, cli_exit,
-- api_end), as of the report instant:
--   positive_rate = positive / (positive + negative), skips excluded, NULL when both are 0
--   skip_rate     = skip / responses
-- each with its 95% Wilson interval (session_answer_rates). The counts are
-- int_session_feedback__answers_counted's, summed over modalities and
-- turn-count buckets.

with answers as (
    select * from {{ ref('int_session_feedback__answers_counted') }}
),

counts_per_day_and_source as (
    select
        feedback_date,
        -- `source` and `skip` are the contract's names (not reserved in DuckDB or Spark)
        surface as source,  -- noqa: RF04
        cast(sum(positive) as bigint) as positive,
        cast(sum(negative) as bigint) as negative,
        cast(sum(skip) as bigint) as skip,  -- noqa: RF04
        cast(sum(responses) as bigint) as responses
    from answers
    group by feedback_date, surface
),

rates as (
    select
        feedback_date,
        source,
        positive,
        negative,
        skip,
        responses,
        positive + negative as rated_responses,
        {{ session_answer_rates() }}
    from counts_per_day_and_source
)

select * from rates
