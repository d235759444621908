-- End-of-session answers per UTC day, surface, modality and turn-count
-- bucket, as of the report instant: the counts the semantic layer sums
-- (session positive and skip rates by day, week or month, by surface,
-- modality and bucket), read from the serving file. The rows of
-- int_session_feedback__answers_counted, which session_feedback_daily,
-- session_feedback_by_modality and session_feedback_by_turn_bucket sum.

with answers as (
    select * from {{ ref('int_session_feedback__answers_counted') }}
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
    from answers
)

select * from final
