-- One row per eval replay at or before the report instant: the replay
-- session (metadata.eval_source = its golden session) with its outcome.
-- - replayed_at: when the replay completed, else when it started.
-- - passed: every dimension of its eval result passed; a replay without
--   dimensions, or with a dimension whose `passed` is missing, did not pass.
-- - has_golden_source: the eval_source is a session that is golden now.
--   Replays of anything else are kept here, flagged, and left out of the
--   matrix and the trend (they belong to no golden set).
-- - replay_recency_rank: 1 for the latest replay of its cell (golden session
--   x agent config), 2 for the one before, ... (ties: by replay id).

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
        coalesce(completed_at, created_at) as replayed_at
    from sessions
    where is_replay
),

replays_by_as_of as (
    select * from replays
    where replayed_at <= {{ as_of_timestamp() }}
),

golden_sessions as (
    select
        session_id as golden_session_id,
        golden_set
    from sessions
    where is_golden
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
        replays_by_as_of.replay_session_id,
        replays_by_as_of.golden_session_id,
        golden_sessions.golden_set,
        replays_by_as_of.tenant_id,
        replays_by_as_of.agent_id,
        replays_by_as_of.session_type,
        replays_by_as_of.replay_status,
        replays_by_as_of.created_at,
        replays_by_as_of.completed_at,
        replays_by_as_of.replayed_at,
        replays_by_as_of.overall_accuracy,
        dimension_summary.failed_dimension_names,
        golden_sessions.golden_session_id is not null as has_golden_source,
        coalesce(dimension_summary.dimensions, 0) as dimensions,
        coalesce(dimension_summary.failed_dimensions, 0) as failed_dimensions,
        coalesce(divergence_summary.divergence_count, 0) as divergence_count,
        coalesce(dimension_summary.dimensions, 0) > 0
        and coalesce(dimension_summary.failed_dimensions, 0) = 0 as passed
    from replays_by_as_of
    left join golden_sessions
        on replays_by_as_of.golden_session_id = golden_sessions.golden_session_id
    left join dimension_summary
        on replays_by_as_of.replay_session_id = dimension_summary.replay_session_id
    left join divergence_summary
        on replays_by_as_of.replay_session_id = divergence_summary.replay_session_id
),

ranked as (
    select
        *,
        row_number() over (
            partition by golden_session_id, agent_id
            order by replayed_at desc, replay_session_id desc
        ) as replay_recency_rank
    from outcomes
)

select * from ranked
