-- End-of-session answers counted once, as of the report instant, at the
-- finest grain any session-feedback mart reports: UTC day x surface x
-- modality x turn-count bucket. session_feedback_daily (per surface),
-- session_feedback_by_turn_bucket, session_feedback_by_modality and
-- session_answers_daily are sums of these rows; their rates are computed
-- there (session_answer_rates).

with records as (
    select * from {{ ref('int_session_feedback__records_as_of') }}
),

counted as (
    select
        feedback_date,
        surface,
        modality,
        turn_count_bucket,
        turn_count_bucket_order,
        count(case when is_positive then 1 end) as positive,
        count(case when is_negative then 1 end) as negative,
        -- `skip` is the marts' name (not reserved in DuckDB or Spark)
        count(case when is_skip then 1 end) as skip,  -- noqa: RF04
        count(*) as responses
    from records
    group by feedback_date, surface, modality, turn_count_bucket, turn_count_bucket_order
)

select * from counted
