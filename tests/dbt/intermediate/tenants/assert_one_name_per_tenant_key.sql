-- A tenant key has one display name: the seed `tenants` gives every row of
-- a key the same tenant_name, and no id that maps to itself (key and name =
-- the id) equals a key the seed names otherwise. Otherwise a tenant would
-- show twice in a filter and split the per-tenant counts of the marts that
-- group by key and name. Returns one row per such key, with two of its names.

with mapped as (
    select * from {{ ref('int_tenants__mapped') }}
),

names_per_key as (
    select
        tenant_key,
        count(distinct tenant_name) as name_count,
        min(tenant_name) as first_name,
        max(tenant_name) as last_name
    from mapped
    group by tenant_key
),

conflicting as (
    select * from names_per_key
    where name_count > 1
)

select * from conflicting
