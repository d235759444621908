-- One row per active turn reaction as of the report instant (the reactions
-- the conversations-in-period report returns as feedback items), each with
-- its artifact resource name `rn`, which every report row must carry.
-- `tenant` is the one tenant key across sources, with its display name
-- (int_tenants__mapped); source_tenant_id is the reactions' own tenant.

with active as (
    select * from {{ ref('int_reactions__active') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
    where source_system = 'turn_reactions'
),

report_rows as (
    select
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        active.tenant as source_tenant_id,
        active.project,
        active.conversation_id,
        active.turn_id,
        active.origin,
        active.reaction,
        active.counted_reaction,
        active.confidence,
        active.reacted_at,
        active.reaction_rn as rn,
        active.user_id,
        active.comment_text,
        active.bundle_id,
        active.track_id,
        active.user_type,
        active.active_part,
        cast(active.reacted_at as date) as reaction_date
    from active
    left join tenants
        on active.tenant = tenants.source_tenant_id
)

select * from report_rows
