-- One row per analyzer event_id, as of the report instant. The same event can
-- be landed more than once (the active feedback.jsonl and an archive file of
-- an interrupted archive run): the first load wins. Events invoked after
-- as_of are dropped, so a past as_of reproduces a past report.

with events as (
    select * from {{ ref('stg_analyzer__events') }}
),

ranked_by_load as (
    select
        *,
        row_number() over (
            partition by event_id
            order by loaded_at asc, load_id asc, source_uri asc
        ) as load_rank
    from events
),

first_loaded as (
    select * from ranked_by_load
    where load_rank = 1
),

invoked_by_as_of as (
    select
        event_id,
        invoked_at,
        session_id,
        skill_id,
        invocation_uuid,
        outcome,
        confidence,
        correction_type,
        user_message_snippet,
        turns_to_feedback,
        ai_tools_used,
        dimension_hint,
        loaded_at,
        load_id,
        source_uri
    from first_loaded
    where invoked_at <= {{ as_of_timestamp() }}
)

select * from invoked_by_as_of
