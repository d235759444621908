-- One row: the dbt build that produced the marts. When it ran, for which
-- report instant (var `as_of`) and which dbt invocation, so that a reader
-- (the dashboard's "data as of ... built ..." line) needs no dbt artifacts.
-- It also carries the vars a reader must agree with, so that a change in
-- dbt_project.yml (or `--vars`) reaches the pages with the marts built by it:
-- the key of a rollup over every tenant or project (all_members_key) and the
-- significance level of the trend tests (trend_significance_level).
-- Rebuilt by every build that selects it (`feedback-analytics build` does).

with this_build as (
    select
        '{{ invocation_id }}' as invocation_id,
        cast(
            '{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S") }}' as {{ dbt.type_timestamp() }}
        ) as built_at,
        {{ as_of_timestamp() }} as as_of_at,
        '{{ dbt_version }}' as dbt_version,
        '{{ var('all_members_key') }}' as all_members_key,
        cast(
            {{ var('trend_significance_level') }} as {{ dbt.type_float() }}
        ) as trend_significance_level
)

select * from this_build
