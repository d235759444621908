-- Analyzer events the retention policies still keep as of the report instant
-- (one row per event_id, at or before as_of): policy `analyzer_events`
-- deletes events invoked before as_of minus keep_days (365 by default).
-- storage_tier says where a kept event lives: `active` (the last keep_days
-- of policy `analyzer_events_archive`, 90 by default) or `archive` (moved
-- to the Parquet archive, still counted by the metrics).

with events as (
    select * from {{ ref('int_analyzer__events_deduplicated') }}
),

retained as (
    select
        events.event_id,
        events.invoked_at,
        events.session_id,
        events.skill_id,
        events.invocation_uuid,
        events.outcome,
        events.confidence,
        events.correction_type,
        events.user_message_snippet,
        events.turns_to_feedback,
        events.ai_tools_used,
        events.dimension_hint,
        events.loaded_at,
        events.load_id,
        events.source_uri,
        'analyzer_events' as retention_policy,
        case
            when events.invoked_at >= {{
                retention_cutoff_at(retention_keep_days('analyzer_events_archive'))
            }}
                then 'active'
            else 'archive'
        end as storage_tier
    from events
    where events.invoked_at >= {{ retention_cutoff_at(retention_keep_days('analyzer_events')) }}
)

select * from retained
