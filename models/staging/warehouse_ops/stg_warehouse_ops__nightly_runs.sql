-- One row per nightly run (raw.nightly_runs), as the nightly wrote it. The
-- source is optional (check_raw_tables skips it): on a warehouse without
-- raw.nightly_runs this reads no rows, with the same columns.
{%- set nightly_runs = source('warehouse_ops', 'nightly_runs') %}
{%- set text, instant = dbt.type_string(), dbt.type_timestamp() %}
{%- set no_runs -%}
    (
        select
            cast(null as {{ text }}) as run_id,
            cast(null as {{ instant }}) as started_at,
            cast(null as {{ instant }}) as finished_at,
            cast(null as {{ instant }}) as as_of,
            cast(null as {{ text }}) as status,
            cast(null as {{ text }}) as failed_steps
        where false
    )
{%- endset %}
{%- set is_present = (load_relation(nightly_runs) is not none) if execute else true %}

with source as (
    select
        run_id,
        started_at,
        finished_at,
        as_of,
        status,
        failed_steps
    from {{ nightly_runs if is_present else no_runs }} as nightly_runs
),

renamed as (
    select
        run_id,
        started_at,
        finished_at,
        as_of,
        status,
        coalesce(failed_steps, '') as failed_steps,
        coalesce(failed_steps, '') != '' as has_failed_step
    from source
)

select * from renamed
