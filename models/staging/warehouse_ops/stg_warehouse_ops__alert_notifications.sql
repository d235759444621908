-- One row per attempt to deliver an alert notification
-- (raw.alert_notifications, written by `feedback-analytics alerts` and the
-- nightly's alerts step). A warehouse where no alert was ever delivered has
-- the table empty: every writable connection of this version creates it
-- (warehouse/raw_tables.py). The source is optional (check_raw_tables skips
-- it): on a warehouse of an earlier version without it this reads no rows,
-- with the same columns.
{%- set alert_notifications = source('warehouse_ops', 'alert_notifications') %}
{%- set text, instant = dbt.type_string(), dbt.type_timestamp() %}
{%- set no_notifications -%}
    (
        select
            cast(null as {{ text }}) as delivery_id,
            cast(null as {{ dbt.type_bigint() }}) as attempt,
            cast(null as {{ text }}) as run_id,
            cast(null as {{ instant }}) as delivered_at,
            cast(null as {{ text }}) as channel,
            cast(null as {{ text }}) as target,
            cast(null as {{ text }}) as rule_id,
            cast(null as {{ text }}) as subject,
            cast(null as date) as firing_since,
            cast(null as {{ text }}) as kind,
            cast(null as {{ text }}) as outcome,
            cast(null as {{ dbt.type_bigint() }}) as http_status,
            cast(null as {{ text }}) as error,
            cast(null as {{ dbt.type_float() }}) as seconds,
            cast(null as {{ instant }}) as as_of_at
        where false
    )
{%- endset %}
{%- set is_present = (load_relation(alert_notifications) is not none) if execute else true %}

with source as (
    select *
    from {{ alert_notifications if is_present else no_notifications }} as alert_notifications
),

renamed as (
    select
        delivery_id,
        attempt,
        run_id,
        delivered_at,
        channel,
        target,
        rule_id,
        subject,
        firing_since,
        kind,
        outcome,
        http_status,
        error,
        seconds,
        as_of_at
    from source
)

select * from renamed
