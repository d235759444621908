-- The accuracy trend counts every finished replay of a golden session at
-- or before as_of once (pending, failed-to-run and cancelled replays not at
-- all), and its passes add up to the passing replays. Returns one row when
-- the totals differ.

with replay_outcomes as (
    select * from {{ ref('int_evals__replay_outcomes') }}
),

accuracy_trend as (
    select * from {{ ref('eval_set_accuracy_trend') }}
),

replay_totals as (
    select
        count(*) as replays,
        count(case when passed then 1 end) as passes
    from replay_outcomes
    where has_golden_source and is_finished
),

trend_totals as (
    select
        coalesce(sum(replays), 0) as replays,
        coalesce(sum(passes), 0) as passes
    from accuracy_trend
),

mismatched as (
    select
        replay_totals.replays as replay_rows,
        trend_totals.replays as trend_replays,
        replay_totals.passes as replay_passes,
        trend_totals.passes as trend_passes
    from replay_totals
    cross join trend_totals
    where
        replay_totals.replays != trend_totals.replays
        or replay_totals.passes != trend_totals.passes
)

select * from mismatched
