-- One row per analyzer feedback event: the active raw table and the Parquet
-- archive that `purge` moved older events to (disjoint, each unique on
-- event_id), invocation time renamed to invoked_at, enums lower-cased;
-- is_archived tells which of the two relations a row was read from.

{%- set raw_columns = [
    'event_id',
    adapter.quote('timestamp'),
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
    '_loaded_at',
    '_load_id',
    '_source_uri',
] %}

with active_events as (
    select * from {{ source('analyzer', 'analyzer_events') }}
),

archived_events as (
    select * from {{ source('analyzer', 'analyzer_events_archive') }}
),

source as (
    select
        {{ raw_columns | join(',\n        ') }},
        false as is_archived
    from active_events
    union all
    select
        {{ raw_columns | join(',\n        ') }},
        true as is_archived
    from archived_events
),

normalised as (
    select
        *,
        lower(trim(outcome)) as outcome_normalised,
        lower(trim(correction_type)) as correction_type_normalised,
        lower(trim(dimension_hint)) as dimension_hint_normalised
    from source
),

renamed as (
    select
        event_id,
        {{ adapter.quote('timestamp') }} as invoked_at,
        session_id,
        skill_id,
        invocation_uuid,
        outcome_normalised as outcome,
        confidence,
        correction_type_normalised as correction_type,
        user_message_snippet,
        turns_to_feedback,
        ai_tools_used,
        dimension_hint_normalised as dimension_hint,
        _loaded_at as loaded_at,
        _load_id as load_id,
        _source_uri as source_uri,
        is_archived
    from normalised
)

select * from renamed
