-- Where a skill's corrections land: per skill and dimension_hint, the
-- correction and partial events with a non-null dimension over the last
-- `correction_lookback_days` days (the window of skill_correction_rates),
-- their share of the skill's attributed corrections and partials, and the
-- dimension's rank within the skill (1 = the hotspot). Undated events (no
-- invocation time) are outside the window.

{%- set lookback_days = var('correction_lookback_days') %}

with events as (
    select * from {{ ref('int_analyzer__events_weighted') }}
),

attributed_corrections as (
    select * from events
    where
        invoked_at is not null
        and invoked_at >= {{ dbt.dateadd('day', -lookback_days, as_of_timestamp()) }}
        and (is_correction or is_partial)
        and dimension_hint is not null
),

counts_per_dimension as (
    select
        skill_id,
        dimension_hint as dimension,
        count(*) as occurrences,
        count(case when is_correction then 1 end) as corrections,
        count(case when is_partial then 1 end) as partials
    from attributed_corrections
    group by skill_id, dimension_hint
),

shares as (
    select
        skill_id,
        dimension,
        occurrences,
        corrections,
        partials,
        {{ round_metric(
            ratio('occurrences', 'sum(occurrences) over (partition by skill_id)')
        ) }} as share_of_skill,
        cast(row_number() over (
            partition by skill_id
            order by occurrences desc, dimension asc
        ) as bigint) as dimension_rank,
        {{ lookback_days }} as correction_lookback_days
    from counts_per_dimension
)

select * from shares
