-- One tenant identity across sources: every tenant id a source uses (the
-- reactions' `tenant`, a name; the workspace's `tenant_id`, a uuid) with the
-- one tenant key and display name the seed `tenants` gives it. The only
-- place the mapping is applied: every mart that shows a tenant joins here
-- on (source_system, source_tenant_id). An id the seed does not list maps to
-- itself (key and name = the id), so its rows never vanish; is_mapped says
-- which. Ids come from every stored row, whatever its date (a mapping has no
-- as-of), and every seed row is kept too.

with tenant_seed as (
    select * from {{ ref('tenants') }}
),

reactions as (
    select * from {{ ref('stg_reactions__turn_reactions') }}
),

workspace_feedback as (
    select * from {{ ref('stg_workspace__feedback') }}
),

workspace_sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

workspace_eval_runs as (
    select * from {{ ref('stg_workspace__eval_runs') }}
),

source_tenant_ids as (
    select
        'turn_reactions' as source_system,
        tenant as source_tenant_id
    from reactions
    where tenant is not null
    union
    select
        'workspace' as source_system,
        tenant_id as source_tenant_id
    from workspace_feedback
    where tenant_id is not null
    union
    select
        'workspace' as source_system,
        tenant_id as source_tenant_id
    from workspace_sessions
    where tenant_id is not null
    union
    select
        'workspace' as source_system,
        tenant_id as source_tenant_id
    from workspace_eval_runs
    where tenant_id is not null
    union
    select
        source_system,
        source_tenant_id
    from tenant_seed
),

mapped as (
    select
        source_tenant_ids.source_system,
        source_tenant_ids.source_tenant_id,
        coalesce(tenant_seed.tenant_key, source_tenant_ids.source_tenant_id) as tenant_key,
        coalesce(tenant_seed.tenant_name, source_tenant_ids.source_tenant_id) as tenant_name,
        tenant_seed.tenant_key is not null as is_mapped
    from source_tenant_ids
    left join tenant_seed
        on
            source_tenant_ids.source_system = tenant_seed.source_system
            and source_tenant_ids.source_tenant_id = tenant_seed.source_tenant_id
)

select * from mapped
