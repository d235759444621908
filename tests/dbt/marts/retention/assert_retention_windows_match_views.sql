-- retention_policy_windows.rows_kept equals the rows its policy's
-- retained_* view shows (the same cutoff macros feed both; for the archive
-- policy, the view's `active` tier). Returns one row per policy whose
-- counts differ.

with windows as (
    select * from {{ ref('retention_policy_windows') }}
),

retained_session_feedback as (
    select * from {{ ref('retained_session_feedback') }}
),

retained_analyzer_events as (
    select * from {{ ref('retained_analyzer_events') }}
),

retained_turn_reactions as (
    select * from {{ ref('retained_turn_reactions') }}
),

retained_workspace_feedback as (
    select * from {{ ref('retained_workspace_feedback') }}
),

retained_workspace_sessions as (
    select * from {{ ref('retained_workspace_sessions') }}
),

retained_eval_runs as (
    select * from {{ ref('retained_eval_runs') }}
),

view_counts as (
    select
        'session_feedback' as policy_name,
        count(*) as view_rows
    from retained_session_feedback
    union all
    select
        'analyzer_events' as policy_name,
        count(*) as view_rows
    from retained_analyzer_events
    union all
    select
        'analyzer_events_archive' as policy_name,
        count(*) as view_rows
    from retained_analyzer_events
    where storage_tier = 'active'
    union all
    select
        'turn_reactions' as policy_name,
        count(*) as view_rows
    from retained_turn_reactions
    union all
    select
        'workspace_feedback' as policy_name,
        count(*) as view_rows
    from retained_workspace_feedback
    union all
    select
        retention_policy as policy_name,
        count(*) as view_rows
    from retained_workspace_sessions
    where retention_policy is not null
    group by retention_policy
    union all
    select
        'eval_runs' as policy_name,
        count(*) as view_rows
    from retained_eval_runs
),

compared as (
    select
        windows.policy,
        windows.rows_kept,
        coalesce(view_counts.view_rows, 0) as view_rows
    from windows
    left join view_counts
        on windows.policy = view_counts.policy_name
),

mismatched as (
    select * from compared
    where rows_kept != view_rows
)

select * from mismatched
