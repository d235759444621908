-- The eval matrix's column totals: one row per (golden set, agent config),
-- over the cells of that column with a finished replay (eval_matrix, pending
-- cells left out): how many there are, how many passed on their latest
-- finished replay, and that pass rate with its 95% Wilson interval. An
-- agent config belongs to one tenant, so a column never mixes tenants.

with matrix as (
    select * from {{ ref('eval_matrix') }}
),

finished_cells as (
    select * from matrix
    where passed is not null
),

per_column as (
    select
        tenant,
        tenant_name,
        golden_set,
        agent_id,
        count(*) as finished_cells,
        count(case when passed then 1 end) as passing_cells
    from finished_cells
    group by tenant, tenant_name, golden_set, agent_id
),

rated as (
    select
        tenant,
        tenant_name,
        golden_set,
        agent_id,
        finished_cells,
        passing_cells,
        {{ rate_with_interval('passing_cells', 'finished_cells', 'pass_rate') }}
    from per_column
)

select * from rated
