-- One row per check of the platform's index (a reaction_index load of one
-- schema, raw.load_manifest) and tenant and project the schema holds: when
-- the warehouse last looked, and so from when a reaction it did not find
-- there was gone. checked_at is the instant the check stands for
-- (observed_at: the load's start, or its nightly run's as_of).

with loads as (
    select * from {{ ref('stg_warehouse_ops__load_manifest') }}
    where target_table = 'reaction_index'
),

index_rows as (
    select * from {{ ref('stg_reactions__index_rows') }}
),

-- the manifest names the schema read as <dsn>#<database>.<schema>.conv_messages
checks as (
    select
        load_id,
        regexp_extract(uri, '#(.*)[.]([^.]+)[.]conv_messages$', 1) as database_name,
        regexp_extract(uri, '#(.*)[.]([^.]+)[.]conv_messages$', 2) as schema_name,
        coalesce(observed_at, started_at) as checked_at
    from loads
),

schema_scopes as (
    select distinct
        database_name,
        schema_name,
        tenant,
        project
    from index_rows
),

scoped as (
    select
        checks.load_id,
        schema_scopes.tenant,
        schema_scopes.project,
        checks.database_name,
        checks.schema_name,
        checks.checked_at
    from checks
    inner join schema_scopes
        on
            checks.database_name = schema_scopes.database_name
            and checks.schema_name = schema_scopes.schema_name
)

select * from scoped
