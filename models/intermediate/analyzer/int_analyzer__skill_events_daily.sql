-- The analyzer outcomes counted once: per UTC day of invocation, skill and
-- dimension hint, the events as of the report instant with their outcome
-- counts and summed correction weights (int_analyzer__events_weighted).
-- Every correction-rate mart rolls these counts up (skill_correction_rates,
-- _weekly, _trends, skill_dimension_hotspots, skill_dimension_changes,
-- skill_correction_daily_history, skill_invocations_daily); none counts
-- events itself.
-- The metric windows end at the as_of instant, so their start can fall
-- inside a day: the grain also says which windows the events are in
-- (lookback: as_of - `correction_lookback_days` <= invoked_at; recent:
-- as_of - `trend_window_days` <= invoked_at; prior: as_of - 2 *
-- `trend_window_days` <= invoked_at < the recent start). A day a window
-- boundary cuts has a row on either side of it; every other day one row.
-- Undated events (null invoked_at) make the rows whose invoked_date is null,
-- in no window: skill_correction_rates counts them apart.

{%- set lookback_days = var('correction_lookback_days') %}
{%- set lookback_start_at = dbt.dateadd('day', -lookback_days, as_of_timestamp()) %}
{%- set recent_start_at = dbt.dateadd('day', -var('trend_window_days'), as_of_timestamp()) %}
{%- set prior_start_at = dbt.dateadd('day', -2 * var('trend_window_days'), as_of_timestamp()) %}

with events as (
    select * from {{ ref('int_analyzer__events_weighted') }}
),

events_in_windows as (
    select
        cast(invoked_at as date) as invoked_date,
        skill_id,
        dimension_hint as dimension,
        coalesce(invoked_at >= {{ lookback_start_at }}, false) as is_in_lookback_window,
        coalesce(invoked_at >= {{ recent_start_at }}, false) as is_in_recent_window,
        coalesce(
            invoked_at >= {{ prior_start_at }} and invoked_at < {{ recent_start_at }}, false
        ) as is_in_prior_window,
        invoked_at,
        is_correction,
        is_partial,
        is_acceptance,
        correction_weight
    from events
),

counts as (
    select
        invoked_date,
        skill_id,
        dimension,
        is_in_lookback_window,
        is_in_recent_window,
        is_in_prior_window,
        count(*) as invocations,
        count(case when is_correction then 1 end) as corrections,
        count(case when is_partial then 1 end) as partials,
        count(case when is_acceptance then 1 end) as acceptances,
        sum(correction_weight) as weighted_corrections,
        max(invoked_at) as last_invoked_at
    from events_in_windows
    group by
        invoked_date,
        skill_id,
        dimension,
        is_in_lookback_window,
        is_in_recent_window,
        is_in_prior_window
)

select * from counts
