-- Analyzer skill invocations per UTC day, skill and dimension hint, as of
-- the report instant, with their outcome weights summed (correction 1,
-- partial 0.5, acceptance 0; seed analyzer_outcome_weights): the counts the
-- semantic layer sums (correction rate by day, week or month, by skill and
-- dimension), read from the serving file. An event without a dimension
-- hint counts in the row whose dimension is null. Undated events (no
-- invocation time) belong to no day and are left out (skill_correction_rates
-- counts them).

with skill_events as (
    select * from {{ ref('int_analyzer__skill_events_daily') }}
),

counts as (
    select
        invoked_date,
        skill_id,
        dimension,
        cast(sum(invocations) as {{ dbt.type_bigint() }}) as invocations,
        sum(weighted_corrections) as weighted_corrections,
        cast(sum(corrections + partials) as {{ dbt.type_bigint() }}) as corrections_and_partials
    from skill_events
    where invoked_date is not null
    group by invoked_date, skill_id, dimension
)

select * from counts
