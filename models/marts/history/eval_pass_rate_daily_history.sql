-- Per golden set, agent config and run day, the replay counts behind the eval
-- pass rate, kept after the replays are purged: incremental on the day (see
-- session_feedback_daily_history). Counts only, of FINISHED replays of
-- sessions golden at as_of (int_evals__replay_outcomes): a pending,
-- failed-to-run or cancelled replay is neither a pass nor a fail.
{{
    config(
        incremental_strategy=daily_incremental_strategy(),
        unique_key='run_date',
        partition_by=['run_date'] if target.type == 'spark' else none,
        full_refresh=false,
    )
}}

with replays as (
    select * from {{ ref('int_evals__replay_outcomes') }}
    where has_golden_source and is_finished
),

counts as (
    select
        cast(replayed_at as date) as run_date,
        golden_set,
        agent_id,
        count(*) as replays,
        count(case when passed then 1 end) as passes,
        sum(overall_accuracy) as accuracy_sum,
        count(overall_accuracy) as replays_with_accuracy
    from replays
    group by cast(replayed_at as date), golden_set, agent_id
),

rates as (
    select
        run_date,
        golden_set,
        agent_id,
        replays,
        passes,
        accuracy_sum,
        replays_with_accuracy,
        {{ rate_with_interval('passes', 'replays', 'pass_rate') }},
        {{ round_metric('accuracy_sum / nullif(replays_with_accuracy, 0)') }} as mean_accuracy,
        {{ as_of_timestamp() }} as computed_as_of
    from counts
)

select * from rates
