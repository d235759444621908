-- Session feedback records as of the report instant (recorded_at <= as_of),
-- with what the daily marts group and count by: the UTC day, the surface the
-- answer came from, the channel rated (modality), the session's turn-count
-- bucket and one flag per label.

with records as (
    select * from {{ ref('stg_session_feedback__records') }}
),

recorded_by_as_of as (
    select * from records
    where recorded_at <= {{ as_of_timestamp() }}
),

classified as (
    select
        feedback_id,
        recorded_at,
        recorded_date as feedback_date,
        surface,
        modality,
        label as feedback_label,
        turn_count_at_end,
        {{ turn_count_bucket('turn_count_at_end') }} as turn_count_bucket,
        {{ turn_count_bucket_order('turn_count_at_end') }} as turn_count_bucket_order,
        label = 'positive' as is_positive,
        label = 'negative' as is_negative,
        label = 'skip' as is_skip
    from recorded_by_as_of
)

select * from classified
