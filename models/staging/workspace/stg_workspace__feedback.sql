-- One row per workspace feedback input (raw.workspace_feedback, already
-- unique on id): enums lower-cased, `context` kept as JSON.

with source as (
    select * from {{ source('workspace', 'workspace_feedback') }}
),

normalised as (
    select
        *,
        lower(trim(source_type)) as source_type_normalised,
        lower(trim(rating)) as rating_normalised,
        lower(trim(status)) as status_normalised
    from source
),

renamed as (
    select
        id as feedback_id,
        tenant_id,
        source_type_normalised as source_type,
        rating_normalised as rating,
        comment,
        session_id,
        entity_id,
        agent_id,
        context,
        status_normalised as status,
        reviewed_by_agent_id,
        reviewed_by_user_id,
        reviewed_at,
        review_notes,
        created_by,
        created_at,
        _loaded_at as loaded_at,
        _load_id as load_id,
        _source_uri as source_uri
    from normalised
)

select * from renamed
