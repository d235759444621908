-- One row per divergence of an eval replay (`metadata.eval_result.divergences`,
-- an ordered array of mismatches with the golden session, each
-- {dimension, severity, expected, actual, ...}), unnested with
-- json_array_elements_join (adapter-specific, macros/cross_db/json_unnest.sql).
-- The position keeps the upstream order for the drill-down. Every replay is
-- here whatever its date: the as-of cut is made in int_evals__replay_outcomes.

with sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

replays_with_divergences as (
    select
        session_id as replay_session_id,
        eval_divergences
    from sessions
    where
        is_replay
        and {{ json_is_array('metadata', 'eval_result.divergences') }}
),

divergence_elements as (
    select
        replays_with_divergences.replay_session_id,
        divergence_element.divergence_position,
        divergence_element.divergence
    from replays_with_divergences
    {{ json_array_elements_join(
        'replays_with_divergences.eval_divergences',
        'divergence_element',
        'divergence_position',
        'divergence'
    ) }}
),

parsed as (
    select
        replay_session_id,
        {{ dbt.safe_cast('divergence_position', dbt.type_int()) }} as divergence_position,
        {{ json_extract_scalar('divergence', 'dimension') }} as dimension,
        {{ json_extract_scalar('divergence', 'severity') }} as severity,
        {{ json_extract_scalar('divergence', 'expected') }} as expected_value,
        {{ json_extract_scalar('divergence', 'actual') }} as actual_value,
        {{ dbt.safe_cast('divergence', dbt.type_string()) }} as divergence_json
    from divergence_elements
)

select * from parsed
