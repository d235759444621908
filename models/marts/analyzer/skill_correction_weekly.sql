-- Weekly correction rate per skill for trend charts: every week (starting
-- Monday, UTC) with at least one event up to as_of, the same formula and
-- weights as skill_correction_rates, with its 95% Wilson interval.
-- is_complete_week is true once as_of has reached the week's last instant
-- (Sunday 23:59:59.999999 UTC, so a date as_of on a Sunday completes it),
-- false for the week that as_of cuts short, Sunday afternoon included.
-- Undated events (no invocation time) belong to no week and are left out.

with events as (
    select * from {{ ref('int_analyzer__events_weighted') }}
),

events_by_week as (
    select
        cast({{ dbt.date_trunc('week', 'invoked_at') }} as date) as week_start,
        skill_id,
        is_correction,
        is_partial,
        is_acceptance,
        correction_weight
    from events
    where invoked_at is not null
),

counts_per_week as (
    select
        week_start,
        skill_id,
        count(*) as sample_size,
        count(case when is_correction then 1 end) as corrections,
        count(case when is_partial then 1 end) as partials,
        count(case when is_acceptance then 1 end) as acceptances,
        sum(correction_weight) as weighted_corrections
    from events_by_week
    group by week_start, skill_id
),

rates as (
    select
        week_start,
        skill_id,
        sample_size,
        corrections,
        partials,
        acceptances,
        weighted_corrections,
        {{ rate_with_interval('weighted_corrections', 'sample_size', 'correction_rate') }},
        cast({{ dbt.dateadd('day', 7, 'week_start') }} as {{ dbt.type_timestamp() }})
        <= {{ dbt.dateadd('microsecond', 1, as_of_timestamp()) }} as is_complete_week
    from counts_per_week
)

select * from rates
