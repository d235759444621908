-- One row per finished replay of an eval matrix cell (golden session x agent
-- config), from its dimension results: whether every dimension passed, the
-- mean dimension score and the divergences counted. The Evals page's
-- history of a cell.

with dimensions as (
    select * from {{ ref('eval_cell_dimensions') }}
),

replays as (
    select
        replay_session_id,
        golden_session_id,
        agent_id,
        tenant,
        replayed_at,
        min(case when passed then 1 when not passed then 0 end) = 1 as passed,
        {{ round_metric('avg(score)') }} as mean_score,
        cast(sum(divergence_count) as bigint) as divergences
    from dimensions
    group by replay_session_id, golden_session_id, agent_id, tenant, replayed_at
)

select * from replays
