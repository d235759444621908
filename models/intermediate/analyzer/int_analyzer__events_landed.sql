-- One row per analyzer event_id ever stored (the active raw table and the
-- Parquet archive), whatever the report instant: the copy loaded first wins.
-- The same event can be landed more than once (the active feedback.jsonl and
-- an archive file of an interrupted archive run); the first load is its
-- earliest loaded_at, then load_id, then source_uri.
--
-- Incremental on DuckDB (a table on Spark, whose Parquet tables have no
-- delete): a build adds the events whose event_id it does not hold yet; a
-- later copy of a held event loses to it, so nothing held changes. Before
-- that, the pre-hook (delete_changed_rows) deletes the held copies that a
-- purge or an erasure deleted or rewrote in the source, so their events are
-- ranked again among the copies left.
-- A nightly build therefore reads the new loads' events, not the history,
-- and equals a --full-refresh build of the same data.
-- int_analyzer__events_as_of cuts it at the report instant.
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

{{
    config(
        incremental_strategy='append',
        pre_hook="{{ delete_changed_rows(ref('stg_analyzer__events'), 'event_id', "
            ~ (event_columns | tojson) ~ ", purged_tables=['analyzer_events'], "
            ~ "dated_by=['invoked_at', 'loaded_at']) }}",
    )
}}

with events as (
    select * from {{ ref('stg_analyzer__events') }}
),

not_yet_held as (
    select
        {{ event_columns | join(',\n        ') }}
    from events
    {% if is_incremental() -%}
        where not exists (
            select 1 from {{ this }} as held
            where held.event_id = events.event_id
        )
    {%- endif %}
),

-- the ingest already keeps one row per event_id, so repeated keys are rare:
-- rank only those (a window over every event would sort millions of rows)
repeated_keys as (
    select event_id
    from not_yet_held
    group by event_id
    having count(*) > 1
),

single_copies as (
    select * from not_yet_held
    where event_id not in (select repeated_keys.event_id from repeated_keys)
),

ranked_copies_of_repeated as (
    select
        copies.*,
        row_number() over (
            partition by copies.event_id
            order by copies.loaded_at asc, copies.load_id asc, copies.source_uri asc
        ) as load_rank
    from not_yet_held as copies
    inner join repeated_keys
        on copies.event_id = repeated_keys.event_id
),

first_loaded_of_repeated as (
    select * from ranked_copies_of_repeated
    where load_rank = 1
),

first_landed as (
    select
        {{ event_columns | join(',\n        ') }}
    from single_copies
    union all
    select
        {{ event_columns | join(',\n        ') }}
    from first_loaded_of_repeated
)

select
    *,
    {{ utc_now() }} as held_at
from first_landed
