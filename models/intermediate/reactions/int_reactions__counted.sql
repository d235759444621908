-- The active reactions (int_reactions__active) counted once, as of the
-- report instant, at the finest grain any reaction mart reports: UTC day x
-- tenant x project x conversation x turn x origin. reaction_satisfaction_daily
-- (per day and origin), conversation_feedback_summary (per conversation) and
-- metric_rates_daily (per day, origin, tenant and project) are sums of these
-- rows; the turn is in the grain so that a conversation's turns with
-- feedback stay countable. `tenant` is the one tenant key across sources,
-- with its display name (int_tenants__mapped); source_tenant_id is the
-- reactions' own tenant.

with active as (
    select * from {{ ref('int_reactions__active') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
    where source_system = 'turn_reactions'
),

counted as (
    select
        cast(reacted_at as date) as reaction_date,
        tenant as source_tenant_id,
        project,
        conversation_id,
        turn_id,
        origin,
        count(case when counted_reaction = 'ok' then 1 end) as ok,
        count(case when counted_reaction = 'not_ok' then 1 end) as not_ok,
        -- a machine reaction without a value is neutral (counted_reaction), as in the platform's report
        count(case when counted_reaction = 'neutral' then 1 end) as neutral,
        count(*) as reactions,
        min(reacted_at) as first_reacted_at,
        max(reacted_at) as last_reacted_at
    from active
    group by cast(reacted_at as date), tenant, project, conversation_id, turn_id, origin
),

with_tenant as (
    select
        counted.reaction_date,
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        counted.source_tenant_id,
        counted.project,
        counted.conversation_id,
        counted.turn_id,
        counted.origin,
        counted.ok,
        counted.not_ok,
        counted.neutral,
        counted.reactions,
        counted.first_reacted_at,
        counted.last_reacted_at
    from counted
    left join tenants
        on counted.source_tenant_id = tenants.source_tenant_id
)

select * from with_tenant
