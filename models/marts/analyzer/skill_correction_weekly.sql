-- Weekly correction rate per skill for trend charts: every week (starting
-- Monday, UTC) with at least one event up to as_of, the same formula and
-- weights as skill_correction_rates, with its 95% Wilson interval.
-- is_complete_week is true once as_of has reached the week's last instant
-- (Sunday 23:59:59.999999 UTC, so a date as_of on a Sunday completes it),
-- false for the week that as_of cuts short, Sunday afternoon included.
-- Undated events (no invocation time) belong to no week and are left out.

with skill_events as (
    select * from {{ ref('int_analyzer__skill_events_daily') }}
),

counts_per_week as (
    select
        cast({{ dbt.date_trunc('week', 'invoked_date') }} as date) as week_start,
        skill_id,
        cast(sum(invocations) as {{ dbt.type_bigint() }}) as sample_size,
        cast(sum(corrections) as {{ dbt.type_bigint() }}) as corrections,
        cast(sum(partials) as {{ dbt.type_bigint() }}) as partials,
        cast(sum(acceptances) as {{ dbt.type_bigint() }}) as acceptances,
        sum(weighted_corrections) as weighted_corrections
    from skill_events
    where invoked_date is not null
    group by {{ dbt.date_trunc('week', 'invoked_date') }}, skill_id
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
