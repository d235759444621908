-- Drill-down of the eval matrix: one row per (replay, dimension) for every
-- FINISHED replay of a golden session (golden at as_of) at or before the
-- report instant, with the dimension's result (passed, score) and the
-- divergences the replay reported on that dimension (a JSON array in
-- upstream order, '[]' when none). Pending, failed-to-run and cancelled
-- replays are left out: their results, if any, do not count (a replay that
-- completed after as_of must not show its future result in a past report).
-- is_latest_replay marks the replay that decides its matrix cell. `tenant`
-- is the one tenant key across sources, with its display name
-- (int_tenants__mapped); tenant_id is the workspace's uuid.

with replay_outcomes as (
    select * from {{ ref('int_evals__replay_outcomes') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
    where source_system = 'workspace'
),

dimension_results as (
    select * from {{ ref('int_evals__dimension_results') }}
),

divergences as (
    select * from {{ ref('int_evals__divergences') }}
),

golden_replays as (
    select * from replay_outcomes
    where has_golden_source and is_finished
),

divergences_per_dimension as (
    select
        replay_session_id,
        dimension,
        count(*) as divergence_count,
        {{ dbt.concat([
            "'['",
            dbt.listagg('divergence_json', "','", 'order by divergence_position'),
            "']'",
        ]) }} as divergences
    from divergences
    group by replay_session_id, dimension
),

cell_dimensions as (
    select
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        golden_replays.tenant_id,
        golden_replays.golden_set,
        golden_replays.golden_session_id,
        golden_replays.agent_id,
        golden_replays.replay_session_id,
        golden_replays.replayed_at,
        golden_replays.passed as replay_passed,
        dimension_results.dimension,
        dimension_results.score,
        golden_replays.replay_recency_rank = 1 as is_latest_replay,
        coalesce(dimension_results.passed, false) as passed,
        coalesce(divergences_per_dimension.divergence_count, 0) as divergence_count,
        coalesce(divergences_per_dimension.divergences, '[]') as divergences
    from golden_replays
    inner join dimension_results
        on golden_replays.replay_session_id = dimension_results.replay_session_id
    left join divergences_per_dimension
        on
            dimension_results.replay_session_id = divergences_per_dimension.replay_session_id
            and dimension_results.dimension = divergences_per_dimension.dimension
    left join tenants
        on golden_replays.tenant_id = tenants.source_tenant_id
)

select * from cell_dimensions
