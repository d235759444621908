-- Per skill and day, the analyzer outcome counts behind the correction rate,
-- kept after the events are archived or deleted: incremental on the day (see
-- session_feedback_daily_history). Counts only. Undated events (no
-- invocation time) belong to no day and are left out.
{{
    config(
        incremental_strategy=daily_incremental_strategy(),
        unique_key='invoked_date',
        partition_by=['invoked_date'] if target.type == 'spark' else none,
        full_refresh=false,
    )
}}

with events as (
    select * from {{ ref('int_analyzer__events_weighted') }}
),

counts as (
    select
        cast(invoked_at as date) as invoked_date,
        skill_id,
        count(case when is_correction then 1 end) as corrections,
        count(case when is_partial then 1 end) as partials,
        count(case when is_acceptance then 1 end) as acceptances,
        count(*) as sample_size,
        sum(correction_weight) as weighted_corrections
    from events
    where invoked_at is not null
    group by cast(invoked_at as date), skill_id
),

rates as (
    select
        invoked_date,
        skill_id,
        corrections,
        partials,
        acceptances,
        sample_size,
        weighted_corrections,
        {{ rate_with_interval('weighted_corrections', 'sample_size', 'correction_rate') }},
        {{ as_of_timestamp() }} as computed_as_of
    from counts
)

select * from rates
