-- Where a skill's corrections land: per skill and dimension_hint, the
-- correction and partial events with a non-null dimension over the last
-- `correction_lookback_days` days (the window of skill_correction_rates),
-- their share of the skill's attributed corrections and partials, and the
-- dimension's rank within the skill (1 = the hotspot). Undated events (no
-- invocation time) are outside the window.

{%- set lookback_days = var('correction_lookback_days') %}

with skill_events as (
    select * from {{ ref('int_analyzer__skill_events_daily') }}
),

counts_per_dimension as (
    select
        skill_id,
        dimension,
        cast(sum(corrections + partials) as {{ dbt.type_bigint() }}) as occurrences,
        cast(sum(corrections) as {{ dbt.type_bigint() }}) as corrections,
        cast(sum(partials) as {{ dbt.type_bigint() }}) as partials
    from skill_events
    where
        is_in_lookback_window
        and dimension is not null
    group by skill_id, dimension
    having sum(corrections + partials) > 0
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
