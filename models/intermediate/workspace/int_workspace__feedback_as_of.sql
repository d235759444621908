-- Workspace feedback rows given at or before the report instant, with their
-- review status as it stood then: a row reviewed after as_of was still
-- `pending` at as_of (the table keeps only the current status, so a row
-- reviewed without a reviewed_at keeps its current status). A past as_of
-- thus reproduces a past backlog.

with feedback as (
    select * from {{ ref('stg_workspace__feedback') }}
),

created_by_as_of as (
    select * from feedback
    where created_at <= {{ as_of_timestamp() }}
),

status_at_as_of as (
    select
        feedback_id,
        tenant_id,
        source_type,
        rating,
        session_id,
        entity_id,
        agent_id,
        status as current_status,
        case
            when reviewed_at > {{ as_of_timestamp() }} then 'pending'
            else status
        end as status,
        reviewed_at <= {{ as_of_timestamp() }} as is_reviewed_by_as_of,
        reviewed_at,
        created_by,
        created_at
    from created_by_as_of
)

select * from status_at_as_of
