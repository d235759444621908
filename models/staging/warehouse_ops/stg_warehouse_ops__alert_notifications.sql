-- One row per attempt to deliver an alert notification
-- (raw.alert_notifications, written by `feedback-analytics alerts` and the
-- nightly's alerts step). A warehouse where no alert was ever delivered has
-- the table empty: every writable connection creates it (warehouse/raw_tables.py).

with source as (
    select * from {{ source('warehouse_ops', 'alert_notifications') }}
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
