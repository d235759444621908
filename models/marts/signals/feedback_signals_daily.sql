-- Signals per UTC day, source system, tenant and rating (the overview chart
-- and its tenant filter), from feedback_signals (so: at or before the report
-- instant, active reactions only). Only the combinations that occurred are
-- present: a missing row means zero signals. The tenant is the one tenant
-- key across sources (with its display name), null for the sources that
-- carry none (analyzer events, session feedback).

with feedback_signals as (
    select * from {{ ref('feedback_signals') }}
),

per_day as (
    select
        occurred_date as signal_date,
        source_system,
        tenant,
        tenant_name,
        rating,
        retention_policy,
        count(*) as signals,
        count(case when origin = 'user' then 1 end) as user_signals,
        count(case when origin = 'machine' then 1 end) as machine_signals,
        count(case when origin = 'implicit' then 1 end) as implicit_signals
    from feedback_signals
    group by occurred_date, source_system, tenant, tenant_name, rating, retention_policy
)

select * from per_day
