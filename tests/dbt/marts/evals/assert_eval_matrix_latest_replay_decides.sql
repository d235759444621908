-- Every eval matrix cell shows its latest FINISHED replay at or before
-- as_of, and there is exactly one cell per (golden session, agent config)
-- with a finished replay. Returns the cells whose replay is not the latest
-- finished one of the cell, and the (golden session, agent config) pairs
-- with a finished replay but without a cell.

with replay_outcomes as (
    select * from {{ ref('int_evals__replay_outcomes') }}
),

eval_matrix as (
    select * from {{ ref('eval_matrix') }}
),

latest_per_cell as (
    select
        golden_session_id,
        agent_id,
        max(replayed_at) as latest_replayed_at
    from replay_outcomes
    where has_golden_source and is_finished
    group by golden_session_id, agent_id
),

compared as (
    select
        latest_per_cell.golden_session_id,
        latest_per_cell.agent_id,
        latest_per_cell.latest_replayed_at,
        eval_matrix.replayed_at as cell_replayed_at
    from latest_per_cell
    left join eval_matrix
        on
            latest_per_cell.golden_session_id = eval_matrix.golden_session_id
            and latest_per_cell.agent_id is not distinct from eval_matrix.agent_id
),

mismatched as (
    select * from compared
    where cell_replayed_at is distinct from latest_replayed_at
)

select * from mismatched
