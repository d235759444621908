-- One row per eval replay that started at or before the report instant
-- (created_at <= as_of): the replay session (metadata.eval_source = its
-- golden session) with its state at as_of and, once finished, its outcome.
-- - replay_state at as_of (docs/metrics.md (part 2), "A replay"):
--   finished: status `completed`, an `eval_result` object, and it completed
--     at or before as_of (coalesce(completed_at, created_at) <= as_of);
--   abandoned: status `failed` (the replay failed to run) or `cancelled`,
--     and it ended at or before as_of (completed_at null or <= as_of);
--   pending: anything else: still running (or any other status), completed
--     after as_of, or completed without an eval_result yet.
--   Only finished replays count as pass or fail.
-- - replayed_at: when a finished replay's result came (completed_at, else
--   created_at); null unless finished.
-- - passed: finished, and every dimension of its eval result passed; a
--   finished replay without dimensions, or with a dimension whose `passed`
--   is missing, did not pass. Null unless finished (neither pass nor fail).
-- - has_golden_source: the eval_source is a session of the replay's own
--   tenant that was golden at as_of: promoted at or before as_of
--   (metadata.golden.promoted_at; when missing or not a timestamp, the
--   golden session's created_at). Replays of anything else (another
--   tenant's golden session included) are kept here, flagged, and left out
--   of every mart.
-- - replay_recency_rank: among the FINISHED replays of a cell (golden
--   session x agent config; the flagged replays without a golden source
--   ranked apart), 1 for the latest, 2 for the one before, ...
--   (by replayed_at, ties: by replay id); null unless finished.

with sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

dimension_results as (
    select * from {{ ref('int_evals__dimension_results') }}
),

divergences as (
    select * from {{ ref('int_evals__divergences') }}
),

replays as (
    select
        session_id as replay_session_id,
        eval_source_session_id as golden_session_id,
        tenant_id,
        agent_id,
        status as replay_status,
        created_at,
        completed_at,
        eval_overall_accuracy as overall_accuracy,
        coalesce(eval_session_type, session_type) as session_type,
        {{ json_is_object('metadata', 'eval_result') }} as has_eval_result
    from sessions
    where is_replay
),

replays_by_as_of as (
    select * from replays
    where created_at <= {{ as_of_timestamp() }}
),

replay_states as (
    select
        *,
        case
            when
                replay_status = 'completed'
                and has_eval_result
                and coalesce(completed_at, created_at) <= {{ as_of_timestamp() }}
                then 'finished'
            when
                replay_status in ('failed', 'cancelled')
                and (completed_at is null or completed_at <= {{ as_of_timestamp() }})
                then 'abandoned'
            else 'pending'
        end as replay_state
    from replays_by_as_of
),

golden_sessions as (
    select
        session_id as golden_session_id,
        tenant_id,
        golden_set,
        coalesce(golden_promoted_at, created_at) as golden_since
    from sessions
    where is_golden
),

golden_sessions_by_as_of as (
    select * from golden_sessions
    where golden_since <= {{ as_of_timestamp() }}
),

dimension_summary as (
    select
        replay_session_id,
        count(*) as dimensions,
        count(case when passed then null else 1 end) as failed_dimensions,
        {{ dbt.listagg(
            'case when passed then null else dimension end',
            "', '",
            'order by dimension'
        ) }} as failed_dimension_names
    from dimension_results
    group by replay_session_id
),

divergence_summary as (
    select
        replay_session_id,
        count(*) as divergence_count
    from divergences
    group by replay_session_id
),

outcomes as (
    select
        replay_states.replay_session_id,
        replay_states.golden_session_id,
        golden_sessions_by_as_of.golden_set,
        replay_states.tenant_id,
        replay_states.agent_id,
        replay_states.session_type,
        replay_states.replay_status,
        replay_states.replay_state,
        replay_states.has_eval_result,
        replay_states.created_at,
        replay_states.completed_at,
        replay_states.overall_accuracy,
        dimension_summary.failed_dimension_names,
        replay_states.replay_state = 'finished' as is_finished,
        case
            when replay_states.replay_state = 'finished'
                then coalesce(replay_states.completed_at, replay_states.created_at)
        end as replayed_at,
        golden_sessions_by_as_of.golden_session_id is not null as has_golden_source,
        coalesce(dimension_summary.dimensions, 0) as dimensions,
        coalesce(dimension_summary.failed_dimensions, 0) as failed_dimensions,
        coalesce(divergence_summary.divergence_count, 0) as divergence_count,
        case
            when replay_states.replay_state = 'finished'
                then
                    coalesce(dimension_summary.dimensions, 0) > 0
                    and coalesce(dimension_summary.failed_dimensions, 0) = 0
        end as passed
    from replay_states
    left join golden_sessions_by_as_of
        on
            replay_states.golden_session_id = golden_sessions_by_as_of.golden_session_id
            and replay_states.tenant_id is not distinct from golden_sessions_by_as_of.tenant_id
    left join dimension_summary
        on replay_states.replay_session_id = dimension_summary.replay_session_id
    left join divergence_summary
        on replay_states.replay_session_id = divergence_summary.replay_session_id
),

ranked as (
    select
        *,
        case
            when is_finished
                then row_number() over (
                    partition by golden_session_id, agent_id, has_golden_source, is_finished
                    order by replayed_at desc, replay_session_id desc
                )
        end as replay_recency_rank
    from outcomes
)

select * from ranked
