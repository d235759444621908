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

counts as (
    select
        feedback_date,
        source,
        positive,
        negative,
        skip,
        responses
    from daily
),

rates as (
    select
        feedback_date,
        source,
        positive,
        negative,
        skip,
        responses,
        {{ rate_with_interval('positive', 'positive + negative', 'positive_rate') }},
        {{ rate_with_interval('skip', 'responses', 'skip_rate') }},
        {{ as_of_timestamp() }} as computed_as_of
    from counts
)

select * from rates
