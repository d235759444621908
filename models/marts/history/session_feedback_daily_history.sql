-- Daily session feedback counts that outlive the raw records: incremental on
-- the day. Each build replaces the days the raw data still covers; days whose
-- records were purged keep the counts stored when they were still there.
-- Counts only, no identifiers (so `forget` leaves nothing behind here).
{{
    config(
        incremental_strategy=daily_incremental_strategy(),
        unique_key='feedback_date',
        partition_by=['feedback_date'] if target.type == 'spark' else none,
        full_refresh=false,
    )
}}

with daily as (
    select * from {{ ref('session_feedback_daily') }}
),

-- the daily mart's counts and rates as they are (session_answer_rates),
-- stamped with the build's report instant
stamped as (
    select
        feedback_date,
        source,
        positive,
        negative,
        skip,
        responses,
        positive_rate,
        positive_rate_ci_low,
        positive_rate_ci_high,
        skip_rate,
        skip_rate_ci_low,
        skip_rate_ci_high,
        {{ as_of_timestamp() }} as computed_as_of
    from daily
)

select * from stamped
