-- Per UTC day up to the as-of day, source system and tenant filter: the
-- source's last signal on or before that day, the days since, and whether the
-- source has stopped arriving (no signal for more than
-- var source_stopped_after_days days). The report's "Needs attention" reads
-- the row of its day; a tenant's row counts only its own signals, and the
-- sources without a tenant (session feedback, analyzer events) have only the
-- row of every tenant (tenant_filter = var all_members_key). Each series
-- starts on its first signal's day.
{%- set all_members = "'" ~ var('all_members_key') ~ "'" %}

with daily as (
    select * from {{ ref('feedback_signals_daily') }}
),

signal_days as (
    select distinct
        signal_date,
        source_system,
        tenant as tenant_filter
    from daily
    where tenant is not null
    union all
    select distinct
        signal_date,
        source_system,
        {{ all_members }} as tenant_filter
    from daily
),

series as (
    select
        source_system,
        tenant_filter,
        min(signal_date) as first_date
    from signal_days
    group by source_system, tenant_filter
),

spine as (
    {{ day_spine(
        '(select min(first_date) from series)',
        'cast(' ~ as_of_timestamp() ~ ' as date)',
    ) }}
),

dense as (
    select
        spine.spine_date as as_of_date,
        series.source_system,
        series.tenant_filter,
        signal_days.signal_date
    from series
    inner join spine on series.first_date <= spine.spine_date
    left join signal_days
        on
            series.source_system = signal_days.source_system
            and series.tenant_filter = signal_days.tenant_filter
            and spine.spine_date = signal_days.signal_date
),

last_signals as (
    select
        as_of_date,
        source_system,
        tenant_filter,
        max(signal_date) over (
            partition by source_system, tenant_filter
            order by as_of_date
            rows between unbounded preceding and current row
        ) as last_signal_date
    from dense
),

aged as (
    select
        as_of_date,
        source_system,
        tenant_filter,
        last_signal_date,
        -- datediff is an int on Spark, a bigint on DuckDB
        cast(
            {{ dbt.datediff('last_signal_date', 'as_of_date', 'day') }}
            as bigint
        ) as days_since_last_signal
    from last_signals
)

select
    as_of_date,
    source_system,
    tenant_filter,
    last_signal_date,
    days_since_last_signal,
    days_since_last_signal > {{ var('source_stopped_after_days') }} as has_stopped,
    {{ var('source_stopped_after_days') }} as stopped_after_days
from aged
