-- One row per attempt to deliver an alert notification, as of the build:
-- the Alerts page's delivery log. A delivery is one notification (firing,
-- resolved, reminder of one episode) on one channel; it was delivered when
-- its last attempt was.

with notifications as (
    select * from {{ ref('stg_warehouse_ops__alert_notifications') }}
),

as_of_the_build as (
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
        outcome = 'delivered' as is_delivered
    from notifications
    where delivered_at <= {{ as_of_timestamp() }}
)

select * from as_of_the_build
