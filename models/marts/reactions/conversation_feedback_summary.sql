-- One row per conversation with at least one active reaction as of the
-- report instant: the feedback counts of the conversations-in-period report
-- (by origin and by reaction, active reactions only) and when the first and
-- the last of those reactions were given. `tenant` is the one tenant key
-- across sources, with its display name (int_tenants__mapped);
-- source_tenant_id is the reactions' own tenant.

with counted as (
    select * from {{ ref('int_reactions__counted') }}
),

sums_per_conversation as (
    select
        tenant,
        tenant_name,
        source_tenant_id,
        project,
        conversation_id,
        max(last_reacted_at) as last_activity_at,
        sum(reactions) as total,
        sum(case when origin = 'user' then reactions else 0 end) as user_reactions,
        sum(case when origin = 'machine' then reactions else 0 end) as machine_reactions,
        sum(ok) as ok,
        sum(not_ok) as not_ok,
        sum(neutral) as neutral,
        min(first_reacted_at) as first_activity_at,
        count(distinct turn_id) as turns_with_feedback
    from counted
    group by tenant, tenant_name, source_tenant_id, project, conversation_id
),

-- counts as bigint, as the counts they sum (a DuckDB sum of bigint is a hugeint)
counts_per_conversation as (
    select
        tenant,
        tenant_name,
        source_tenant_id,
        project,
        conversation_id,
        last_activity_at,
        cast(total as bigint) as total,
        -- `user` and `machine` are the report's names (not reserved in DuckDB or Spark)
        cast(user_reactions as bigint) as user,  -- noqa: RF04
        cast(machine_reactions as bigint) as machine,
        cast(ok as bigint) as ok,
        cast(not_ok as bigint) as not_ok,
        cast(neutral as bigint) as neutral,
        first_activity_at,
        turns_with_feedback
    from sums_per_conversation
)

-- Stored by last activity (noqa: sorted on purpose): the dashboard lists the
-- conversations of a period and reads only the row groups of that period.
select * from counts_per_conversation  -- noqa: CV13
order by last_activity_at, tenant, project, conversation_id
