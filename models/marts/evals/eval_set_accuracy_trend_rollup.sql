-- Pass rate and mean accuracy per golden set, agent config and run day, for
-- one tenant (tenant_filter = its key) or for all tenants together
-- (tenant_filter = the all-members key, var all_members_key): the Evals
-- page's trend for any tenant filter. Sums eval_set_accuracy_trend over its
-- tenants; mean_accuracy is the tenants' mean accuracies weighted by their
-- replays.

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
        mean_accuracy
    from trend
    union all
    select
        {{ all_members }} as tenant_filter,
        golden_set,
        agent_id,
        run_date,
        replays,
        passes,
        mean_accuracy
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
        sum(mean_accuracy * replays) as weighted_accuracy
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
        {{ round_metric('weighted_accuracy / nullif(replays, 0)') }} as mean_accuracy
    from summed
)

select * from rates
