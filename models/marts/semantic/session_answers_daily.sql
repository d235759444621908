-- End-of-session answers per UTC day, surface, modality and turn-count
-- bucket, as of the report instant: the counts the semantic layer sums
-- (session positive and skip rates by day, week or month, by surface,
-- modality and bucket), read from the serving file. session_feedback_daily
-- (per surface), session_feedback_by_modality and
-- session_feedback_by_turn_bucket count the same answers.

with records as (
    select * from {{ ref('int_session_feedback__records_as_of') }}
),

counts as (
    select
        feedback_date,
        surface,
        modality,
        turn_count_bucket,
        count(case when is_positive then 1 end) as positive,
        count(case when is_negative then 1 end) as negative,
        -- `skip` as in session_feedback_daily (not reserved in DuckDB or Spark)
        count(case when is_skip then 1 end) as skip,  -- noqa: RF04
        count(*) as responses
    from records
    group by feedback_date, surface, modality, turn_count_bucket
),

final as (
    select
        feedback_date,
        surface,
        modality,
        turn_count_bucket,
        positive,
        negative,
        skip,
        responses,
        positive + negative as rated_responses
    from counts
)

select * from final
