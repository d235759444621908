-- One row per file or table a load read (raw.load_manifest), as the loader
-- wrote it; loads by versions that neither skipped records nor noticed
-- removals have 0 of each.

with source as (
    select * from {{ source('warehouse_ops', 'load_manifest') }}
),

renamed as (
    select
        load_id,
        source,
        target_table,
        uri,
        checksum,
        size_bytes,
        rows_read,
        rows_loaded,
        rows_quarantined,
        rows_duplicate,
        observed_at,
        started_at,
        finished_at,
        coalesce(rows_skipped, 0) as rows_skipped,
        coalesce(rows_removed, 0) as rows_removed
    from source
)

select * from renamed
