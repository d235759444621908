-- Workspace feedback rows the retention policy still keeps as of the report
-- instant: policy `workspace_feedback` deletes rows created before as_of
-- minus keep_days (seed retention_policies). Rows after as_of are not shown either.

with feedback as (
    select * from {{ ref('stg_workspace__feedback') }}
),

retained as (
    select
        feedback.feedback_id,
        feedback.tenant_id,
        feedback.source_type,
        feedback.rating,
        feedback.comment,
        feedback.session_id,
        feedback.entity_id,
        feedback.agent_id,
        feedback.context,
        feedback.status,
        feedback.reviewed_by_agent_id,
        feedback.reviewed_by_user_id,
        feedback.reviewed_at,
        feedback.review_notes,
        feedback.created_by,
        feedback.created_at,
        feedback.loaded_at,
        feedback.load_id,
        feedback.source_uri,
        'workspace_feedback' as retention_policy
    from feedback
    where
        feedback.created_at >= {{ retention_cutoff_at(retention_keep_days('workspace_feedback')) }}
        and feedback.created_at <= {{ as_of_timestamp() }}
)

select * from retained
