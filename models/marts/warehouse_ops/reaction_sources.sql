-- One row per tenant and project of the turn reactions, as of the build:
-- where its reactions came from and which part decides what is active (the
-- Warehouse page). active_part `index`: the warehouse holds the platform's
-- index for it, so a reaction is active while its index row exists; `blobs`:
-- only blobs or exports, the history of every reaction ever written, which
-- cannot tell a clear (the platform deletes the index rows and writes no
-- artifact), so a cleared reaction still counts there.

with reactions as (
    select * from {{ ref('int_reactions__unified') }}
),

index_rows as (
    select * from {{ ref('stg_reactions__index_rows') }}
),

blob_rows as (
    select * from {{ ref('stg_reactions__turn_reactions') }}
),

active as (
    select * from {{ ref('int_reactions__active') }}
),

per_scope as (
    select
        tenant,
        project,
        max(active_part) as active_part,
        count(case when is_in_blobs then 1 end) as blob_reactions,
        count(case when is_indexed then 1 end) as indexed_reactions,
        count(case when is_in_blobs and not is_indexed and active_part = 'index' then 1 end)
            as reactions_only_in_blobs
    from reactions
    group by tenant, project
),

index_per_scope as (
    select
        tenant,
        project,
        count(case when removed_at is null then 1 end) as index_rows_present,
        count(removed_at) as index_rows_removed,
        max(loaded_at) as last_index_load_at,
        max(removed_at) as last_removal_at,
        min(schema_name) as index_schema
    from index_rows
    group by tenant, project
),

blobs_per_scope as (
    select
        tenant,
        project,
        max(loaded_at) as last_blob_load_at
    from blob_rows
    group by tenant, project
),

active_per_scope as (
    select
        tenant,
        project,
        count(*) as active_reactions
    from active
    group by tenant, project
),

sources as (
    select
        per_scope.tenant,
        per_scope.project,
        per_scope.active_part,
        index_per_scope.index_schema,
        per_scope.blob_reactions,
        per_scope.indexed_reactions,
        per_scope.reactions_only_in_blobs,
        blobs_per_scope.last_blob_load_at,
        index_per_scope.last_index_load_at,
        index_per_scope.last_removal_at,
        coalesce(index_per_scope.index_rows_present, 0) as index_rows_present,
        coalesce(index_per_scope.index_rows_removed, 0) as index_rows_removed,
        coalesce(active_per_scope.active_reactions, 0) as active_reactions
    from per_scope
    left join index_per_scope
        on
            per_scope.tenant is not distinct from index_per_scope.tenant
            and per_scope.project is not distinct from index_per_scope.project
    left join blobs_per_scope
        on
            per_scope.tenant is not distinct from blobs_per_scope.tenant
            and per_scope.project is not distinct from blobs_per_scope.project
    left join active_per_scope
        on
            per_scope.tenant is not distinct from active_per_scope.tenant
            and per_scope.project is not distinct from active_per_scope.project
)

select * from sources
