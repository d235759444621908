-- One row per raw table and kind of input it was loaded from, as of the build
-- (the Warehouse page): where each source's rows came from, how many inputs
-- and rows, and what the table's rows are for (`purpose`): for turn reactions,
-- the blobs and exports are the history and the platform's index decides
-- which reactions are active (reaction_sources has the split per tenant and
-- project).

with loads as (
    select * from {{ ref('stg_warehouse_ops__load_manifest') }}
),

classified as (
    select
        *,
        case
            when uri like 'postgres%' or uri like '%#%' then 'PostgreSQL'
            when lower(uri) like '%.jsonl' or lower(uri) like '%.ndjson' then 'JSON-lines file'
            when lower(uri) like '%.parquet' then 'Parquet file'
            when target_table = 'turn_reactions' then 'folder of JSON blobs'
            when target_table = 'session_feedback' then 'SQLite file'
            else 'file'
        end as input_kind
    from loads
),

per_kind as (
    select
        target_table as raw_table,
        input_kind,
        count(distinct uri) as inputs,
        count(*) as loads,
        cast(sum(rows_read) as {{ dbt.type_bigint() }}) as rows_read,
        cast(sum(rows_loaded) as {{ dbt.type_bigint() }}) as rows_loaded,
        cast(sum(rows_quarantined) as {{ dbt.type_bigint() }}) as rows_quarantined,
        cast(sum(rows_duplicate) as {{ dbt.type_bigint() }}) as rows_duplicate,
        cast(sum(rows_skipped) as {{ dbt.type_bigint() }}) as rows_skipped,
        cast(sum(rows_removed) as {{ dbt.type_bigint() }}) as rows_removed,
        max(finished_at) as last_load_at
    from classified
    group by target_table, input_kind
),

with_purpose as (
    select
        *,
        case raw_table
            when 'reaction_index'
                then 'decides which turn reactions are active (the index of the platform)'
            when 'turn_reactions'
                then 'history of every reaction written; decides only where no index is loaded'
            when 'analyzer_events' then 'every event counts once (by event_id)'
            when 'session_feedback' then 'every record counts once (by id)'
            else 'the latest version of each row counts (by id)'
        end as purpose
    from per_kind
)

select * from with_purpose
