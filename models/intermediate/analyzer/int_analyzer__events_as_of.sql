-- One row per analyzer event_id as of the report instant: the first loaded
-- copy of each event (int_analyzer__events_landed) invoked at or before
-- as_of. Events invoked after as_of are dropped, so a past as_of reproduces a
-- past report. An undated event (the analyzer wrote `"timestamp": ""`, so
-- invoked_at is null) has one instant only, when it was first loaded: it is
-- kept when loaded at or before as_of. event_dated_at is that instant for
-- every event (invoked_at, else loaded_at): what the as_of cut and the
-- retention policies date an event by; the metric windows use invoked_at
-- only, so an undated event is in none of them. A view: the cut is a filter
-- on the stored events, which every reader (the weighted events, the unified
-- signals, the stored and retained views) pushes into its scan.

with landed as (
    select * from {{ ref('int_analyzer__events_landed') }}
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
        source_uri,
        invoked_at is null as is_undated,
        coalesce(invoked_at, loaded_at) as event_dated_at
    from landed
    where
        invoked_at <= {{ as_of_timestamp() }}
        or (invoked_at is null and loaded_at <= {{ as_of_timestamp() }})
)

select * from invoked_by_as_of
