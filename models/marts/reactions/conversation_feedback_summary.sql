-- One row per conversation with at least one active reaction as of the
-- report instant: the feedback counts of the conversations-in-period report
-- (by origin and by reaction, active reactions only) and when the first and
-- the last of those reactions were given. `tenant` is the one tenant key
-- across sources, with its display name (int_tenants__mapped);
-- source_tenant_id is the reactions' own tenant.

with active as (
    select * from {{ ref('int_reactions__active') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
    where source_system = 'turn_reactions'
),

counts_per_conversation as (
    select
        tenant as source_tenant_id,
        project,
        conversation_id,
        max(reacted_at) as last_activity_at,
        count(*) as total,
        -- `user` and `machine` are the report's names (not reserved in DuckDB or Spark)
        count(case when origin = 'user' then 1 end) as user,  -- noqa: RF04
        count(case when origin = 'machine' then 1 end) as machine,
        count(case when counted_reaction = 'ok' then 1 end) as ok,
        count(case when counted_reaction = 'not_ok' then 1 end) as not_ok,
        -- a machine reaction without a value is neutral (counted_reaction), as in the platform's report
        count(case when counted_reaction = 'neutral' then 1 end) as neutral,
        min(reacted_at) as first_activity_at,
        count(distinct turn_id) as turns_with_feedback
    from active
    group by tenant, project, conversation_id
),

with_tenant as (
    select
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        counts_per_conversation.source_tenant_id,
        counts_per_conversation.project,
        counts_per_conversation.conversation_id,
        counts_per_conversation.last_activity_at,
        counts_per_conversation.total,
        counts_per_conversation.user,  -- noqa: RF04
        counts_per_conversation.machine,
        counts_per_conversation.ok,
        counts_per_conversation.not_ok,
        counts_per_conversation.neutral,
        counts_per_conversation.first_activity_at,
        counts_per_conversation.turns_with_feedback
    from counts_per_conversation
    left join tenants
        on counts_per_conversation.source_tenant_id = tenants.source_tenant_id
)

-- Stored by last activity (noqa: sorted on purpose): the dashboard lists the
-- conversations of a period and reads only the row groups of that period.
select * from with_tenant  -- noqa: CV13
order by last_activity_at, tenant, project, conversation_id
