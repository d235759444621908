-- One row per FINISHED replay of a session golden at the report instant
-- (the replays eval_set_accuracy_trend counts), with the names the matrix
-- shows and the tenant key: the rows the semantic layer's eval metrics
-- count (eval pass rate, mean accuracy; models/marts/semantic/).

with replay_outcomes as (
    select * from {{ ref('int_evals__replay_outcomes') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
    where source_system = 'workspace'
),

agent_configs as (
    select * from {{ ref('int_evals__agent_configs') }}
),

golden_sessions as (
    select * from {{ ref('int_evals__golden_sessions') }}
),

finished_golden_replays as (
    select
        replay_outcomes.replay_session_id,
        replay_outcomes.golden_session_id,
        golden_sessions.golden_session_label,
        replay_outcomes.golden_set,
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        replay_outcomes.tenant_id,
        replay_outcomes.agent_id,
        replay_outcomes.replayed_at,
        replay_outcomes.passed,
        replay_outcomes.overall_accuracy,
        agent_configs.agent_config_label,
        cast(replay_outcomes.replayed_at as date) as run_date
    from replay_outcomes
    left join tenants
        on replay_outcomes.tenant_id = tenants.source_tenant_id
    left join agent_configs
        on replay_outcomes.agent_id = agent_configs.agent_id
    left join golden_sessions
        on replay_outcomes.golden_session_id = golden_sessions.golden_session_id
    where replay_outcomes.has_golden_source and replay_outcomes.is_finished
)

select * from finished_golden_replays
