-- One row per retention policy (seed retention_policies) as of the report
-- instant: its cutoff, how many rows of its scope it still keeps and how
-- many fall outside its window, i.e. what the next purge run at as_of will
-- delete (or, for the `archive` policy, move to the analyzer archive: those
-- rows stay visible). Rows dated after as_of are in neither count. The
-- cutoffs come from the same macros as the retained_* views, so
-- rows_kept equals the row count of the policy's view (per scope).
-- A policy measured on a date column (session feedback's recorded_date)
-- compares dates: cutoff_at is then the cutoff date at 00:00. Analyzer
-- events are dated by event_dated_at (an undated event by its loaded_at).

with retention_policies as (
    select * from {{ ref('retention_policies') }}
),

session_feedback as (
    select * from {{ ref('stg_session_feedback__records') }}
),

analyzer_events as (
    select * from {{ ref('int_analyzer__events_as_of') }}
),

reactions as (
    select * from {{ ref('stg_reactions__turn_reactions') }}
),

reaction_index_rows as (
    select * from {{ ref('stg_reactions__index_rows') }}
),

workspace_feedback as (
    select * from {{ ref('stg_workspace__feedback') }}
),

workspace_sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

eval_runs as (
    select * from {{ ref('stg_workspace__eval_runs') }}
),

policy_cutoffs as (
    select
        policy,
        raw_table,
        scope,
        action,
        date_column,
        keep_days,
        case
            when keep_days is null then null
            when {{ dbt.right('date_column', 5) }} = '_date'
                then cast({{ retention_cutoff_date('keep_days') }} as {{ dbt.type_timestamp() }})
            else {{ retention_cutoff_at('keep_days') }}
        end as cutoff_at
    from retention_policies
),

-- The rows of each table scope, dated on the column its policies measure
-- (retention_policies.date_column), at or before as_of.
dated_rows as (
    select
        'session_feedback' as raw_table,
        'all' as scope,
        cast(recorded_date as {{ dbt.type_timestamp() }}) as dated_at
    from session_feedback
    where recorded_at <= {{ as_of_timestamp() }}
    union all
    select
        'analyzer_events' as raw_table,
        'all' as scope,
        event_dated_at as dated_at
    from analyzer_events
    union all
    select
        'turn_reactions' as raw_table,
        'all' as scope,
        reacted_at as dated_at
    from reactions
    where reacted_at <= {{ as_of_timestamp() }}
    union all
    select
        'reaction_index' as raw_table,
        'all' as scope,
        reacted_at as dated_at
    from reaction_index_rows
    where reacted_at <= {{ as_of_timestamp() }}
    union all
    select
        'workspace_feedback' as raw_table,
        'all' as scope,
        created_at as dated_at
    from workspace_feedback
    where created_at <= {{ as_of_timestamp() }}
    union all
    select
        'workspace_sessions' as raw_table,
        case when is_golden then 'golden' else 'replay' end as scope,
        created_at as dated_at
    from workspace_sessions
    where
        (is_golden or is_replay)
        and created_at <= {{ as_of_timestamp() }}
    union all
    select
        'workspace_eval_runs' as raw_table,
        'all' as scope,
        started_at as dated_at
    from eval_runs
    where started_at <= {{ as_of_timestamp() }}
),

policy_rows as (
    select
        policy_cutoffs.policy,
        count(dated_rows.dated_at) as rows_in_scope,
        count(
            case
                when policy_cutoffs.action = 'never' then dated_rows.dated_at
                when dated_rows.dated_at >= policy_cutoffs.cutoff_at then dated_rows.dated_at
            end
        ) as rows_kept
    from policy_cutoffs
    left join dated_rows
        on
            policy_cutoffs.raw_table = dated_rows.raw_table
            and policy_cutoffs.scope = dated_rows.scope
    group by policy_cutoffs.policy
),

windows as (
    select
        policy_cutoffs.policy,
        policy_cutoffs.raw_table,
        policy_cutoffs.scope,
        policy_cutoffs.action,
        policy_cutoffs.date_column,
        policy_cutoffs.keep_days,
        {{ as_of_timestamp() }} as as_of_at,
        policy_cutoffs.cutoff_at,
        policy_rows.rows_kept,
        policy_rows.rows_in_scope - policy_rows.rows_kept as rows_outside_window
    from policy_cutoffs
    inner join policy_rows
        on policy_cutoffs.policy = policy_rows.policy
)

select * from windows
