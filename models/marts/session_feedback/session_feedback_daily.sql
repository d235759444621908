-- End-of-session feedback per UTC day and source surface (cli_end, cli_exit,
-- api_end), as of the report instant:
--   positive_rate = positive / (positive + negative), skips excluded, NULL when both are 0
--   skip_rate     = skip / responses
-- each with its 95% Wilson interval.

with records as (
    select * from {{ ref('int_session_feedback__records_as_of') }}
),

counts_per_day_and_source as (
    select
        feedback_date,
        -- `source` and `skip` are the contract's names (not reserved in DuckDB or Spark)
        surface as source,  -- noqa: RF04
        count(case when is_positive then 1 end) as positive,
        count(case when is_negative then 1 end) as negative,
        count(case when is_skip then 1 end) as skip,  -- noqa: RF04
        count(*) as responses
    from records
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
        {{ rate_with_interval('positive', 'positive + negative', 'positive_rate') }},
        {{ rate_with_interval('skip', 'responses', 'skip_rate') }}
    from counts_per_day_and_source
)

select * from rates
