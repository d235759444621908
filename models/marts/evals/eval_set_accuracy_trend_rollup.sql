-- Pass rate and mean accuracy per golden set, agent config and run day, for
-- one tenant (tenant_filter = its key) or for all tenants together
-- (tenant_filter = the all-members key, var all_members_key): the Evals
-- page's trend for any tenant filter. Sums eval_set_accuracy_trend over its
-- tenants; mean_accuracy is the summed accuracies over the summed replays
-- that have one (as each tenant's mean), its interval
-- (bounded_mean_low/high) from the summed count, sum and sum of squares.

{%- set all_members = "'" ~ var('all_members_key') ~ "'" %}

with trend as (
    select * from {{ ref('eval_set_accuracy_trend') }}
),

tenant_rollups as (
    select
        tenant as tenant_filter,
        golden_set,
        agent_id,
        run_date,
        replays,
        passes,
        accuracy_replays,
        accuracy_sum,
        accuracy_sum_of_squares
    from trend
    union all
    select
        {{ all_members }} as tenant_filter,
        golden_set,
        agent_id,
        run_date,
        replays,
        passes,
        accuracy_replays,
        accuracy_sum,
        accuracy_sum_of_squares
    from trend
),

summed as (
    select
        tenant_filter,
        golden_set,
        agent_id,
        run_date,
        cast(sum(replays) as bigint) as replays,
        cast(sum(passes) as bigint) as passes,
        cast(sum(accuracy_replays) as bigint) as accuracy_replays,
        sum(accuracy_sum) as accuracy_sum,
        sum(accuracy_sum_of_squares) as accuracy_sum_of_squares
    from tenant_rollups
    group by tenant_filter, golden_set, agent_id, run_date
),

rates as (
    select
        tenant_filter,
        golden_set,
        agent_id,
        run_date,
        replays,
        passes,
        {{ rate_with_interval('passes', 'replays', 'pass_rate') }},
        {{ round_metric(ratio('accuracy_sum', 'nullif(accuracy_replays, 0)')) }} as mean_accuracy,
        accuracy_replays,
        {{ round_metric(bounded_mean_low(
            'accuracy_replays', 'accuracy_sum', 'accuracy_sum_of_squares'
        )) }} as mean_accuracy_ci_low,
        {{ round_metric(bounded_mean_high(
            'accuracy_replays', 'accuracy_sum', 'accuracy_sum_of_squares'
        )) }} as mean_accuracy_ci_high
    from summed
)

select * from rates
