-- Quarantined rows per raw table and first clause of the reason, with when
-- the latest one was quarantined: the Warehouse page's quarantine.

with quarantine as (
    select * from {{ ref('stg_warehouse_ops__quarantine') }}
),

reasons as (
    select
        target_table,
        first_reason,
        count(*) as quarantined_rows,
        max(quarantined_at) as last_seen_at
    from quarantine
    group by target_table, first_reason
)

select * from reasons
