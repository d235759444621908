-- The cells behind eval_baseline_comparison's `cells_worse`, by name: one
-- row per (golden session, candidate agent config) whose latest finished
-- replay failed where the pinned baseline's passed on the same golden
-- session (eval_matrix versus_baseline = 'worse'), with both replays'
-- overall accuracy and the change (candidate minus baseline, a fraction;
-- null when either has none).

with matrix as (
    select * from {{ ref('eval_matrix') }}
),

worse_cells as (
    select * from matrix
    where versus_baseline = 'worse'
),

baseline_cells as (
    select
        golden_session_id,
        agent_id as baseline_agent_id,
        agent_config_label as baseline_agent_config_label,
        replay_session_id as baseline_replay_session_id,
        overall_accuracy as baseline_overall_accuracy
    from matrix
    where is_baseline
),

compared as (
    select
        worse_cells.tenant,
        worse_cells.tenant_name,
        worse_cells.golden_set,
        worse_cells.golden_session_id,
        worse_cells.golden_session_label,
        worse_cells.agent_id,
        worse_cells.agent_config_label,
        worse_cells.replay_session_id,
        worse_cells.replayed_at,
        worse_cells.passed,
        worse_cells.overall_accuracy,
        worse_cells.failed_dimension_names,
        baseline_cells.baseline_agent_id,
        baseline_cells.baseline_agent_config_label,
        baseline_cells.baseline_replay_session_id,
        worse_cells.baseline_passed,
        baseline_cells.baseline_overall_accuracy,
        {{ round_metric(
            'worse_cells.overall_accuracy - baseline_cells.baseline_overall_accuracy'
        ) }} as accuracy_change
    from worse_cells
    left join baseline_cells
        on
            worse_cells.golden_session_id = baseline_cells.golden_session_id
            and worse_cells.baseline_agent_id = baseline_cells.baseline_agent_id
)

select * from compared
