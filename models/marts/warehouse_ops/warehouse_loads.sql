-- One row per file or table a load read (the load manifest), with how long
-- reading it took: the Warehouse page's latest loads.

with manifest as (
    select * from {{ ref('stg_warehouse_ops__load_manifest') }}
),

loads as (
    select
        load_id,
        finished_at,
        source,
        target_table,
        uri,
        rows_read,
        rows_loaded,
        rows_quarantined,
        rows_duplicate,
        rows_skipped,
        rows_removed,
        {{ seconds_between('started_at', 'finished_at') }} as seconds
    from manifest
)

select * from loads
