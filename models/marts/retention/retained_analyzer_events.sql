-- Analyzer events the retention policies still keep as of the report instant
-- (one row per event_id, at or before as_of): policy `analyzer_events`
-- deletes events invoked before as_of minus keep_days (seed retention_policies);
-- an undated event (no invocation time) is dated by when it was loaded.
-- storage_tier says where a kept event lives: `active` (the last keep_days
-- of policy `analyzer_events_archive`) or `archive` (moved
-- to the Parquet archive, still counted by the metrics). The rows of
-- stored_analyzer_events that it marks is_retained: the rule is written
-- there, once.

with stored as (
    select * from {{ ref('stored_analyzer_events') }}
),

retained as (
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
        source_uri,
        is_undated,
        retention_policy,
        storage_tier
    from stored
    where is_retained
)

select * from retained
