-- The eval drill-down's divergences as a table: one row per (finished
-- golden replay, dimension, divergence), expected against actual. Every
-- dimension the replay has a result for has at least one row (divergence_rank
-- 1 and no expected/actual when it has no divergence); a dimension with n
-- divergences has n rows, ranked in the upstream order. A divergence on a
-- dimension without a result is kept (passed and score null). The JSON is
-- parsed once, in int_evals__divergences; the same replays as
-- eval_cell_dimensions (finished replays of sessions golden at as_of, at or
-- before the report instant). `tenant` is the one tenant key across sources.

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

dimensions_and_divergences as (
    select
        dimension_results.passed,
        dimension_results.score,
        divergences.divergence_position,
        divergences.severity,
        divergences.expected_value,
        divergences.actual_value,
        coalesce(dimension_results.replay_session_id, divergences.replay_session_id)
            as replay_session_id,
        coalesce(dimension_results.dimension, divergences.dimension) as dimension,
        divergences.replay_session_id is not null as has_divergence
    from dimension_results
    full outer join divergences
        on
            dimension_results.replay_session_id = divergences.replay_session_id
            and dimension_results.dimension = divergences.dimension
),

ranked as (
    select
        *,
        cast(row_number() over (
            partition by replay_session_id, dimension
            order by divergence_position
        ) as bigint) as divergence_rank  -- row_number is an int on Spark
    from dimensions_and_divergences
    where dimension is not null
),

cell_divergences as (
    select
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        golden_replays.golden_set,
        golden_replays.golden_session_id,
        golden_replays.agent_id,
        golden_replays.replay_session_id,
        golden_replays.replayed_at,
        ranked.dimension,
        ranked.divergence_rank,
        ranked.passed,
        ranked.score,
        ranked.has_divergence,
        ranked.severity,
        ranked.expected_value,
        ranked.actual_value,
        golden_replays.replay_recency_rank = 1 as is_latest_replay
    from golden_replays
    inner join ranked
        on golden_replays.replay_session_id = ranked.replay_session_id
    left join tenants
        on golden_replays.tenant_id = tenants.source_tenant_id
)

select * from cell_divergences
