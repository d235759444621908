-- One row per row or line a load rejected (raw.quarantine); first_reason is
-- the reason's first clause (reasons list clauses separated by `;`).
-- quarantine_key identifies a row: the raw table has no key (line_number and
-- record_key are null where the input has none), so it hashes the load, the
-- place in the input and the rejected text.

with source as (
    select * from {{ source('warehouse_ops', 'quarantine') }}
),

renamed as (
    select
        {{ dbt.hash(dbt.concat([
            'load_id', "'|'", "coalesce(source_uri, '')", "'|'",
            "coalesce(cast(line_number as " ~ dbt.type_string() ~ "), '')", "'|'",
            "coalesce(record_key, '')", "'|'", "coalesce(raw_text, '')",
        ])) }} as quarantine_key,
        load_id,
        source,
        target_table,
        source_uri,
        line_number,
        record_key,
        raw_text,
        reason,
        {{ dbt.split_part('reason', "';'", 1) }} as first_reason,
        quarantined_at
    from source
)

select * from renamed
