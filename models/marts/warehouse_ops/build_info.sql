-- One row: the dbt build that produced the marts. When it ran, for which
-- report instant (var `as_of`) and which dbt invocation, so that a reader
-- (the dashboard's "data as of ... built ..." line) needs no dbt artifacts.
-- Rebuilt by every build that selects it (`feedback-analytics build` does).

with this_build as (
    select
        '{{ invocation_id }}' as invocation_id,
        cast(
            '{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S") }}' as {{ dbt.type_timestamp() }}
        ) as built_at,
        {{ as_of_timestamp() }} as as_of_at,
        '{{ dbt_version }}' as dbt_version
)

select * from this_build
