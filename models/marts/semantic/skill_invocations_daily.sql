-- Analyzer skill invocations per UTC day, skill and dimension hint, as of
-- the report instant, with their outcome weights summed (correction 1,
-- partial 0.5, acceptance 0; seed analyzer_outcome_weights): the counts the
-- semantic layer sums (correction rate by day, week or month, by skill and
-- dimension), read from the serving file. An event without a dimension
-- hint counts in the row whose dimension is null. Undated events (no
-- invocation time) belong to no day and are left out (skill_correction_rates
-- counts them).

with events as (
    select * from {{ ref('int_analyzer__events_weighted') }}
),

counts as (
    select
        cast(invoked_at as date) as invoked_date,
        skill_id,
        dimension_hint as dimension,
        count(*) as invocations,
        sum(correction_weight) as weighted_corrections,
        count(case when is_correction or is_partial then 1 end) as corrections_and_partials
    from events
    where invoked_at is not null
    group by cast(invoked_at as date), skill_id, dimension_hint
)

select * from counts
