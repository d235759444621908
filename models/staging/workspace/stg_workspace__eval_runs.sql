-- One row per eval run over a golden set (raw.workspace_eval_runs, already
-- unique on id): `name` becomes run_name, triggered_by lower-cased, the
-- per-session `results` kept as JSON, the name of the agent config the run
-- evaluated lifted out of it (`results.agent_config`, blank is none).

with source as (
    select * from {{ source('workspace', 'workspace_eval_runs') }}
),

normalised as (
    select
        *,
        lower(trim(triggered_by)) as triggered_by_normalised,
        nullif(trim({{ json_extract_scalar('results', 'agent_config') }}), '') as agent_config_name
    from source
),

renamed as (
    select
        id as eval_run_id,
        tenant_id,
        name as run_name,
        set_name,
        agent_id,
        agent_config_name,
        triggered_by_normalised as triggered_by,
        started_at,
        completed_at,
        golden_session_count,
        passed_count,
        failed_count,
        results,
        created_by,
        _loaded_at as loaded_at,
        _load_id as load_id,
        _source_uri as source_uri
    from normalised
)

select * from renamed
