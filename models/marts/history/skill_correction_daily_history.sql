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

with skill_events as (
    select * from {{ ref('int_analyzer__skill_events_daily') }}
),

counts as (
    select
        invoked_date,
        skill_id,
        cast(sum(corrections) as {{ dbt.type_bigint() }}) as corrections,
        cast(sum(partials) as {{ dbt.type_bigint() }}) as partials,
        cast(sum(acceptances) as {{ dbt.type_bigint() }}) as acceptances,
        cast(sum(invocations) as {{ dbt.type_bigint() }}) as sample_size,
        sum(weighted_corrections) as weighted_corrections
    from skill_events
    where invoked_date is not null
    group by invoked_date, skill_id
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
