-- Accuracy of each agent config on each golden set, per run day (the UTC
-- date of the replays' replayed_at, at or before the report instant).
-- Only FINISHED replays of sessions golden at as_of count: pending,
-- failed-to-run and cancelled replays are neither passes nor fails.
-- pass_rate = passing replays / finished replays, with its 95% Wilson
-- interval; mean_accuracy = the mean of the replays' overall_accuracy
-- (replays without one are not in the mean), with its 95% interval
-- (bounded_mean_low/high: a normal approximation from accuracy_replays,
-- accuracy_sum and accuracy_sum_of_squares, which the rollup sums over
-- tenants). `tenant` is the one tenant key
-- across sources, with its display name (int_tenants__mapped); tenant_id is
-- the workspace's uuid.

with replay_outcomes as (
    select * from {{ ref('int_evals__replay_outcomes') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
    where source_system = 'workspace'
),

golden_replays as (
    select
        *,
        cast(replayed_at as date) as run_date
    from replay_outcomes
    where has_golden_source and is_finished
),

per_set_agent_day as (
    select
        tenant_id,
        golden_set,
        agent_id,
        run_date,
        count(*) as replays,
        count(case when passed then 1 end) as passes,
        count(distinct golden_session_id) as golden_sessions,
        avg(overall_accuracy) as mean_accuracy_unrounded,
        count(overall_accuracy) as accuracy_replays,
        sum(overall_accuracy) as accuracy_sum,
        sum(overall_accuracy * overall_accuracy) as accuracy_sum_of_squares
    from golden_replays
    group by tenant_id, golden_set, agent_id, run_date
),

with_tenant as (
    select
        per_set_agent_day.*,
        tenants.tenant_key as tenant,
        tenants.tenant_name
    from per_set_agent_day
    left join tenants
        on per_set_agent_day.tenant_id = tenants.source_tenant_id
),

rated as (
    select
        tenant,
        tenant_name,
        tenant_id,
        golden_set,
        agent_id,
        run_date,
        replays,
        passes,
        replays - passes as fails,
        golden_sessions,
        {{ rate_with_interval('passes', 'replays', 'pass_rate') }},
        {{ round_metric('mean_accuracy_unrounded') }} as mean_accuracy,
        accuracy_replays,
        accuracy_sum,
        accuracy_sum_of_squares,
        {{ round_metric(bounded_mean_low(
            'accuracy_replays', 'accuracy_sum', 'accuracy_sum_of_squares'
        )) }} as mean_accuracy_ci_low,
        {{ round_metric(bounded_mean_high(
            'accuracy_replays', 'accuracy_sum', 'accuracy_sum_of_squares'
        )) }} as mean_accuracy_ci_high
    from with_tenant
)

select * from rated
