-- One row per (eval replay, dimension) of the replay's eval result
-- (`metadata.eval_result.dimensions`, an object name -> {passed, score, ...}),
-- unnested with json_object_entries_join (adapter-specific,
-- macros/cross_db/json_unnest.sql). Every replay is here whatever its date:
-- the as-of cut is made once, in int_evals__replay_outcomes, and the marts
-- join to it. A dimension whose `passed` is missing or not a boolean has
-- passed = null (it does not count as passed downstream).

with sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

replays_with_dimensions as (
    select
        session_id as replay_session_id,
        eval_source_session_id as golden_session_id,
        tenant_id,
        agent_id,
        eval_dimensions
    from sessions
    where
        is_replay
        and {{ json_is_object('metadata', 'eval_result.dimensions') }}
),

dimension_entries as (
    select
        replays_with_dimensions.replay_session_id,
        replays_with_dimensions.golden_session_id,
        replays_with_dimensions.tenant_id,
        replays_with_dimensions.agent_id,
        dimension_entry.dimension_name,
        dimension_entry.dimension_result
    from replays_with_dimensions
    {{ json_object_entries_join(
        'replays_with_dimensions.eval_dimensions',
        'dimension_entry',
        'dimension_name',
        'dimension_result'
    ) }}
),

parsed as (
    select
        replay_session_id,
        golden_session_id,
        tenant_id,
        agent_id,
        dimension_name as dimension,
        {{ dbt.safe_cast(
            json_extract_scalar('dimension_result', 'passed'),
            dbt.type_boolean()
        ) }} as passed,
        {{ dbt.safe_cast(
            json_extract_scalar('dimension_result', 'score'),
            dbt.type_float()
        ) }} as score
    from dimension_entries
)

select * from parsed
