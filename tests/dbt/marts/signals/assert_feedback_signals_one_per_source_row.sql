-- feedback_signals holds exactly one signal per source row at or before
-- as_of: every session feedback record, every active turn reaction, every
-- dated deduplicated analyzer event (an undated one has no time to be a
-- signal at) and every workspace feedback row; and the daily mart adds up
-- to it. Returns one row per source system whose counts differ.

with session_feedback as (
    select * from {{ ref('stg_session_feedback__records') }}
),

active_reactions as (
    select * from {{ ref('int_reactions__active') }}
),

analyzer_events as (
    select * from {{ ref('int_analyzer__events_as_of') }}
),

workspace_feedback as (
    select * from {{ ref('stg_workspace__feedback') }}
),

feedback_signals as (
    select * from {{ ref('feedback_signals') }}
),

feedback_signals_daily as (
    select * from {{ ref('feedback_signals_daily') }}
),

source_counts as (
    select
        'session_feedback' as source_system,
        count(*) as source_rows
    from session_feedback
    where recorded_at <= {{ as_of_timestamp() }}
    union all
    select
        'turn_reactions' as source_system,
        count(*) as source_rows
    from active_reactions
    union all
    select
        'analyzer' as source_system,
        count(*) as source_rows
    from analyzer_events
    where invoked_at is not null
    union all
    select
        'workspace' as source_system,
        count(*) as source_rows
    from workspace_feedback
    where created_at <= {{ as_of_timestamp() }}
),

signal_counts as (
    select
        source_system,
        count(*) as signals
    from feedback_signals
    group by source_system
),

daily_counts as (
    select
        source_system,
        sum(signals) as daily_signals
    from feedback_signals_daily
    group by source_system
),

compared as (
    select
        source_counts.source_system,
        source_counts.source_rows,
        coalesce(signal_counts.signals, 0) as signals,
        coalesce(daily_counts.daily_signals, 0) as daily_signals
    from source_counts
    left join signal_counts
        on source_counts.source_system = signal_counts.source_system
    left join daily_counts
        on source_counts.source_system = daily_counts.source_system
),

mismatched as (
    select * from compared
    where source_rows != signals or source_rows != daily_signals
)

select * from mismatched
