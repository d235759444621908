-- One row per workspace session (raw.workspace_sessions, already unique on
-- id): enums lower-cased and the eval metadata lifted out of the JSON
-- `metadata`: a golden session's `golden` object (set, promotion, the
-- snapshot's initial message) and a
-- replay's `eval_source` and `eval_result` (dimensions, overall accuracy,
-- divergences). Whether a replay passed is decided downstream.

with source as (
    select * from {{ source('workspace', 'workspace_sessions') }}
),

normalised as (
    select
        *,
        lower(trim(session_type)) as session_type_normalised,
        lower(trim(status)) as status_normalised,
        {{ json_is_object('metadata', 'golden') }} as is_golden,
        {{ json_extract_scalar('metadata', 'golden.set') }} as golden_set,
        {{ text_to_utc_timestamp(json_extract_scalar('metadata', 'golden.promoted_at')) }}
            as golden_promoted_at,
        {{ json_extract_scalar('metadata', 'golden.promoted_by') }} as golden_promoted_by,
        {{ json_extract_scalar('metadata', 'golden.snapshot.initial_message') }}
            as golden_initial_message,
        {{ json_extract_scalar('metadata', 'eval_source') }} as eval_source_session_id,
        {{ json_extract_scalar('metadata', 'eval_source') }} is not null as is_replay,
        lower(trim({{ json_extract_scalar('metadata', 'eval_result.session_type') }}))
            as eval_session_type,
        {{ dbt.safe_cast(
            json_extract_scalar('metadata', 'eval_result.overall_accuracy'),
            dbt.type_float()
        ) }} as eval_overall_accuracy,
        {{ json_extract_fragment('metadata', 'eval_result.dimensions') }} as eval_dimensions,
        {{ json_extract_fragment('metadata', 'eval_result.divergences') }} as eval_divergences
    from source
),

renamed as (
    select
        id as session_id,
        tenant_id,
        agent_id,
        session_type_normalised as session_type,
        status_normalised as status,
        created_at,
        completed_at,
        metadata,
        is_golden,
        golden_set,
        golden_promoted_at,
        golden_promoted_by,
        golden_initial_message,
        eval_source_session_id,
        is_replay,
        eval_session_type,
        eval_overall_accuracy,
        eval_dimensions,
        eval_divergences,
        _loaded_at as loaded_at,
        _load_id as load_id,
        _source_uri as source_uri
    from normalised
)

select * from renamed
