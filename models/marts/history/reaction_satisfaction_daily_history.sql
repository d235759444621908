-- Daily reaction satisfaction counts that outlive the raw reactions:
-- incremental on the day (see session_feedback_daily_history). Counts only.
{{
    config(
        incremental_strategy=daily_incremental_strategy(),
        unique_key='reaction_date',
        partition_by=['reaction_date'] if target.type == 'spark' else none,
        full_refresh=false,
    )
}}

with daily as (
    select * from {{ ref('reaction_satisfaction_daily') }}
),

-- the daily mart's counts and rate as they are (reaction_satisfaction_rate),
-- stamped with the build's report instant
stamped as (
    select
        reaction_date,
        origin,
        ok,
        not_ok,
        neutral,
        reactions,
        satisfaction_rate,
        satisfaction_rate_ci_low,
        satisfaction_rate_ci_high,
        {{ as_of_timestamp() }} as computed_as_of
    from daily
)

select * from stamped
