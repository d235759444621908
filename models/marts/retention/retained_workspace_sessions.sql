-- Workspace sessions the retention policies still keep as of the report
-- instant (sessions created after as_of are not shown):
-- - golden sessions (policy `golden_sessions`, action never): always, whatever
--   their age, also when they are replays that were promoted;
-- - eval replays (policy `replay_sessions`): created at or after as_of minus
--   keep_days (365 by default);
-- - every other session: no policy applies, so it is kept (retention_policy
--   null).

with sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

retention_policies as (
    select * from {{ ref('retention_policies') }}
),

golden_policy as (
    select policy as golden_retention_policy
    from retention_policies
    where policy = 'golden_sessions'
),

replay_policy as (
    select
        policy as replay_retention_policy,
        keep_days as replay_keep_days
    from retention_policies
    where policy = 'replay_sessions'
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
            when sessions.is_golden then golden_policy.golden_retention_policy
            when sessions.is_replay then replay_policy.replay_retention_policy
        end as retention_policy
    from sessions
    cross join golden_policy
    cross join replay_policy
    where
        sessions.created_at <= {{ as_of_timestamp() }}
        and (
            sessions.is_golden
            or not sessions.is_replay
            or sessions.created_at >= {{ retention_cutoff_at('replay_policy.replay_keep_days') }}
        )
)

select * from retained
