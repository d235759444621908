-- Every stored analyzer event (one row per event_id, at or before the report
-- instant; the active table and the Parquet archive), whatever its retention
-- policy says: the "everything stored" counterpart of
-- retained_analyzer_events, with is_retained telling the rows that view
-- keeps and storage_tier where a row lives by the archive policy's window.
-- The dashboard's skill drill-down reads it when the retention switch is off.
-- Retention dates an event by event_dated_at: its invoked_at, or for an
-- undated event (invoked_at null) the instant it was first loaded, as
-- `feedback-analytics purge` does (operations/retention.py).

with events as (
    select * from {{ ref('int_analyzer__events_as_of') }}
),

stored as (
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
        events.is_undated,
        'analyzer_events' as retention_policy,
        case
            when events.event_dated_at >= {{
                retention_cutoff_at(retention_keep_days('analyzer_events_archive'))
            }}
                then 'active'
            else 'archive'
        end as storage_tier,
        events.event_dated_at
        >= {{ retention_cutoff_at(retention_keep_days('analyzer_events')) }} as is_retained
    from events
)

select * from stored
