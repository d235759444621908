-- The cells of the eval matrix that are currently regressed (the latest
-- finished replay failed, the previous finished one passed, and the cell
-- is not flaky), with what broke: the failing dimensions, the divergences
-- from the golden session (a JSON array, in the upstream order) and the
-- accuracy lost since the previous finished replay. The dashboard's
-- regression list. A newer replay still running does not hide a
-- regression; has_pending_replay says one is on its way.

with eval_matrix as (
    select * from {{ ref('eval_matrix') }}
),

divergences as (
    select * from {{ ref('int_evals__divergences') }}
),

regressed_cells as (
    select * from eval_matrix
    where cell_status = 'regressed'
),

divergences_per_replay as (
    select
        replay_session_id,
        {{ dbt.concat([
            "'['",
            dbt.listagg('divergence_json', "','", 'order by divergence_position'),
            "']'",
        ]) }} as divergences
    from divergences
    group by replay_session_id
),

regressions as (
    select
        regressed_cells.tenant,
        regressed_cells.tenant_name,
        regressed_cells.tenant_id,
        regressed_cells.golden_set,
        regressed_cells.golden_session_id,
        regressed_cells.agent_id,
        regressed_cells.session_type,
        regressed_cells.replay_session_id,
        regressed_cells.replayed_at,
        regressed_cells.overall_accuracy,
        regressed_cells.previous_replay_session_id,
        regressed_cells.previous_replayed_at,
        regressed_cells.previous_overall_accuracy,
        {{ round_metric(
            'regressed_cells.overall_accuracy - regressed_cells.previous_overall_accuracy'
        ) }} as accuracy_change,
        regressed_cells.failed_dimensions,
        regressed_cells.failed_dimension_names,
        regressed_cells.divergence_count,
        coalesce(divergences_per_replay.divergences, '[]') as divergences,
        regressed_cells.has_pending_replay,
        regressed_cells.pending_replay_session_id
    from regressed_cells
    left join divergences_per_replay
        on regressed_cells.replay_session_id = divergences_per_replay.replay_session_id
)

select * from regressions
