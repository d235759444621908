-- One row per retention policy a purge run applied (raw.purge_log);
-- rows_deleted_from_archive is 0, not null, in rows written before that
-- column existed (nothing was deleted from an archive then).

with source as (
    select * from {{ source('warehouse_ops', 'purge_log') }}
),

renamed as (
    select
        purge_id,
        policy,
        table_name,
        cutoff,
        rows_archived,
        rows_deleted,
        applied_at,
        is_dry_run,
        archive_uri,
        coalesce(rows_deleted_from_archive, 0) as rows_deleted_from_archive
    from source
)

select * from renamed
