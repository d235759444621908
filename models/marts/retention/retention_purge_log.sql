-- One row per retention policy a purge run applied (the purge log), as of
-- the build: the Retention page's purge history.

with purge_log as (
    select * from {{ ref('stg_warehouse_ops__purge_log') }}
),

applied as (
    select
        purge_id,
        applied_at,
        policy,
        table_name,
        cutoff,
        rows_archived,
        rows_deleted,
        rows_deleted_from_archive,
        is_dry_run,
        archive_uri
    from purge_log
)

select * from applied
