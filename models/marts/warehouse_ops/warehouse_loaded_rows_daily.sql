-- Rows landed per UTC day a load finished and raw table (the load
-- manifest): the Warehouse page's loads per day.

with manifest as (
    select * from {{ ref('stg_warehouse_ops__load_manifest') }}
),

daily as (
    select
        cast(finished_at as date) as load_date,
        target_table,
        cast(sum(rows_loaded) as bigint) as rows_loaded
    from manifest
    group by cast(finished_at as date), target_table
)

select * from daily
