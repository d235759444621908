-- Correction rate per skill over the last `correction_lookback_days` days
-- (as_of - N days <= invoked_at <= as_of):
--   correction_rate = (corrections + 0.5 * partials) / (corrections + partials + acceptances)
-- with the weights of the seed analyzer_outcome_weights, the 95% Wilson
-- interval and whether the sample reaches `min_invocations`. Every skill seen
-- up to as_of has a row: a skill without events in the window has a sample of
-- 0 and a NULL rate (never 0).
-- undated_events: the skill's events without an invocation time (the
-- analyzer wrote `"timestamp": ""`), loaded by as_of. They are in no window,
-- so never in the sample; counted here so that nothing read disappears. A
-- skill whose only events are undated has a row: sample 0, rate NULL.

{%- set lookback_days = var('correction_lookback_days') %}

with skill_events as (
    select * from {{ ref('int_analyzer__skill_events_daily') }}
),

skills as (
    select
        skill_id,
        max(last_invoked_at) as last_invoked_at,
        cast(
            sum(case when invoked_date is null then invocations else 0 end)
            as {{ dbt.type_bigint() }}
        ) as undated_events
    from skill_events
    group by skill_id
),

counts_per_skill as (
    select
        skill_id,
        cast(sum(invocations) as {{ dbt.type_bigint() }}) as sample_size,
        cast(sum(corrections) as {{ dbt.type_bigint() }}) as corrections,
        cast(sum(partials) as {{ dbt.type_bigint() }}) as partials,
        cast(sum(acceptances) as {{ dbt.type_bigint() }}) as acceptances,
        sum(weighted_corrections) as weighted_corrections
    from skill_events
    where is_in_lookback_window
    group by skill_id
),

counts_for_every_skill as (
    select
        skills.skill_id,
        skills.last_invoked_at,
        skills.undated_events,
        coalesce(counts_per_skill.corrections, 0) as corrections,
        coalesce(counts_per_skill.partials, 0) as partials,
        coalesce(counts_per_skill.acceptances, 0) as acceptances,
        coalesce(counts_per_skill.sample_size, 0) as sample_size,
        coalesce(counts_per_skill.weighted_corrections, 0) as weighted_corrections
    from skills
    left join counts_per_skill
        on skills.skill_id = counts_per_skill.skill_id
),

rates as (
    select
        skill_id,
        corrections,
        partials,
        acceptances,
        sample_size,
        weighted_corrections,
        {{ rate_with_interval('weighted_corrections', 'sample_size', 'correction_rate') }},
        sample_size >= {{ var('min_invocations') }} as sufficient_data,
        undated_events,
        last_invoked_at,
        {{ dbt.dateadd('day', -lookback_days, as_of_timestamp()) }} as window_start_at,
        {{ as_of_timestamp() }} as window_end_at,
        {{ lookback_days }} as correction_lookback_days
    from counts_for_every_skill
)

select * from rates
