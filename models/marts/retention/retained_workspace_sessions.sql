-- Workspace sessions the retention policies still keep as of the report
-- instant (sessions created after as_of are not shown):
-- - golden sessions (policy `golden_sessions`, action never): always, whatever
--   their age, also when they are replays that were promoted;
-- - eval replays (policy `replay_sessions`): created at or after as_of minus
--   keep_days (seed retention_policies);
-- - every other session: no policy applies, so it is kept (retention_policy
--   null).

with sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

retained as (
    select
        sessions.session_id,
        sessions.tenant_id,
        sessions.agent_id,
        sessions.session_type,
        sessions.status,
        sessions.created_at,
        sessions.completed_at,
        sessions.metadata,
        sessions.is_golden,
        sessions.golden_set,
        sessions.golden_promoted_at,
        sessions.golden_promoted_by,
        sessions.eval_source_session_id,
        sessions.is_replay,
        sessions.eval_session_type,
        sessions.eval_overall_accuracy,
        sessions.eval_dimensions,
        sessions.eval_divergences,
        sessions.loaded_at,
        sessions.load_id,
        sessions.source_uri,
        case
            when sessions.is_golden then 'golden_sessions'
            when sessions.is_replay then 'replay_sessions'
        end as retention_policy
    from sessions
    where
        sessions.created_at <= {{ as_of_timestamp() }}
        and (
            sessions.is_golden
            or not sessions.is_replay
            or sessions.created_at >= {{
                retention_cutoff_at(retention_keep_days('replay_sessions'))
            }}
        )
)

select * from retained
