-- Eval runs the retention policy still keeps as of the report instant:
-- policy `eval_runs` deletes runs started before as_of minus keep_days (seed
-- retention_policies). Runs after as_of are not shown either.

with eval_runs as (
    select * from {{ ref('stg_workspace__eval_runs') }}
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
        'eval_runs' as retention_policy
    from eval_runs
    where
        eval_runs.started_at >= {{ retention_cutoff_at(retention_keep_days('eval_runs')) }}
        and eval_runs.started_at <= {{ as_of_timestamp() }}
)

select * from retained
