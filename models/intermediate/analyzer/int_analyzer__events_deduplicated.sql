-- One row per analyzer event_id, as of the report instant. The same event can
-- be landed more than once (the active feedback.jsonl and an archive file of
-- an interrupted archive run): the first load wins. Events invoked after
-- as_of are dropped, so a past as_of reproduces a past report.

-- A table (the intermediate default): the retention views, the weighted
-- events, the unified signals and the tests all read it, and each would
-- otherwise redo the dedupe over millions of events.

{%- set event_columns = [
    'event_id',
    'invoked_at',
    'session_id',
    'skill_id',
    'invocation_uuid',
    'outcome',
    'confidence',
    'correction_type',
    'user_message_snippet',
    'turns_to_feedback',
    'ai_tools_used',
    'dimension_hint',
    'loaded_at',
    'load_id',
    'source_uri',
] %}

with events as (
    select * from {{ ref('stg_analyzer__events') }}
),

invoked_by_as_of as (
    select
        {{ event_columns | join(',\n        ') }}
    from events
    where invoked_at <= {{ as_of_timestamp() }}
),

-- the ingest already keeps one row per event_id, so repeated keys are rare:
-- rank only those (a window over every event would sort millions of rows)
repeated_keys as (
    select event_id
    from invoked_by_as_of
    group by event_id
    having count(*) > 1
),

single_copies as (
    select * from invoked_by_as_of
    where event_id not in (select repeated_keys.event_id from repeated_keys)
),

ranked_copies_of_repeated as (
    select
        copies.*,
        row_number() over (
            partition by copies.event_id
            order by copies.loaded_at asc, copies.load_id asc, copies.source_uri asc
        ) as load_rank
    from invoked_by_as_of as copies
    inner join repeated_keys
        on copies.event_id = repeated_keys.event_id
),

first_loaded_of_repeated as (
    select * from ranked_copies_of_repeated
    where load_rank = 1
),

deduplicated as (
    select
        {{ event_columns | join(',\n        ') }}
    from single_copies
    union all
    select
        {{ event_columns | join(',\n        ') }}
    from first_loaded_of_repeated
)

select * from deduplicated
