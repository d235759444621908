-- Eval runs the retention policy still keeps as of the report instant:
-- policy `eval_runs` deletes runs started before as_of minus keep_days (365
-- by default). Runs after as_of are not shown either.

with eval_runs as (
    select * from {{ ref('stg_workspace__eval_runs') }}
),

retention_policies as (
    select * from {{ ref('retention_policies') }}
),

policy as (
    select
        policy as retention_policy,
        keep_days
    from retention_policies
    where policy = 'eval_runs'
),

retained as (
    select
        eval_runs.eval_run_id,
        eval_runs.tenant_id,
        eval_runs.run_name,
        eval_runs.set_name,
        eval_runs.agent_id,
        eval_runs.triggered_by,
        eval_runs.started_at,
        eval_runs.completed_at,
        eval_runs.golden_session_count,
        eval_runs.passed_count,
        eval_runs.failed_count,
        eval_runs.results,
        eval_runs.created_by,
        eval_runs.loaded_at,
        eval_runs.load_id,
        eval_runs.source_uri,
        policy.retention_policy
    from eval_runs
    cross join policy
    where
        eval_runs.started_at >= {{ retention_cutoff_at('policy.keep_days') }}
        and eval_runs.started_at <= {{ as_of_timestamp() }}
)

select * from retained
