-- One row per agent config (agent_id) with a replay of a golden session at
-- or before the report instant, or an eval run started by then: its name and
-- the label the matrix shows (docs/metrics.md (part 2), "Names").
-- - agent_config_name: from the latest eval run started at or before as_of
--   (by started_at, then run id) that names it (`results.agent_config`);
--   null when none does.
-- - agent_config_label: the name; the name and the id in parentheses when
--   another agent config of the same tenant carries the same name; the id
--   when no run names it; a label that still repeats within the tenant (a
--   name that reads like another's label or id) gets the id in brackets.
--   Ids are unique, so labels are unique per tenant.

with runs as (
    select * from {{ ref('stg_workspace__eval_runs') }}
    where started_at <= {{ as_of_timestamp() }}
),

replays as (
    select * from {{ ref('int_evals__replay_outcomes') }}
    where has_golden_source
),

seen as (
    select
        agent_id,
        tenant_id
    from replays
    union all
    select
        agent_id,
        tenant_id
    from runs
),

agents as (
    select
        agent_id,
        min(tenant_id) as tenant_id
    from seen
    where agent_id is not null
    group by agent_id
),

named_runs as (
    select
        agent_id,
        agent_config_name,
        row_number() over (
            partition by agent_id
            order by started_at desc, eval_run_id desc
        ) as name_recency_rank
    from runs
    where agent_id is not null and agent_config_name is not null
),

named as (
    select
        agents.agent_id,
        agents.tenant_id,
        named_runs.agent_config_name,
        count(*) over (
            partition by agents.tenant_id, named_runs.agent_config_name
        ) as agents_with_the_name
    from agents
    left join named_runs
        on
            agents.agent_id = named_runs.agent_id
            and named_runs.name_recency_rank = 1
),

labelled as (
    select
        agent_id,
        tenant_id,
        agent_config_name,
        case
            when agent_config_name is null then agent_id
            when agents_with_the_name > 1 then agent_config_name || ' (' || agent_id || ')'
            else agent_config_name
        end as agent_config_label
    from named
),

-- a label that still repeats within the tenant (a name that reads like
-- another config's label with its id, or like another config's id) gets the
-- id in brackets: ids are unique, so the labels are
deduplicated as (
    select
        agent_id,
        tenant_id,
        agent_config_name,
        case
            when count(*) over (partition by tenant_id, agent_config_label) > 1
                then agent_config_label || ' [' || agent_id || ']'
            else agent_config_label
        end as agent_config_label
    from labelled
)

select * from deduplicated
