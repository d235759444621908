-- The eval pass/fail matrix: one cell per (golden session, agent config)
-- with at least one replay at or before the report instant. The latest
-- replay decides the cell; cell_status, first match wins
-- (docs/metrics.md (part 2), "Cell status"):
--   1. regressed: the latest replay failed and the previous one passed;
--   2. fixed: the latest replay passed and the previous one failed;
--   3. flaky: the last `flaky_window` replays (var, default 5) hold both
--      passes and fails;
--   4. pass / fail: the latest replay's outcome, stable over the window.
-- Regressed and fixed come first: they describe the latest change, which is
-- what a reader acts on; flaky describes the window around it.

{%- set flaky_window = var('flaky_window', 5) | int %}
{%- if flaky_window < 1 %}
    {{ exceptions.raise_compiler_error("var flaky_window must be a whole number >= 1, got " ~ var('flaky_window')) }}
{%- endif %}

with replay_outcomes as (
    select * from {{ ref('int_evals__replay_outcomes') }}
),

golden_replays as (
    select * from replay_outcomes
    where has_golden_source
),

latest_replays as (
    select * from golden_replays
    where replay_recency_rank = 1
),

previous_replays as (
    select
        golden_session_id,
        agent_id,
        replay_session_id as previous_replay_session_id,
        replayed_at as previous_replayed_at,
        passed as previous_passed,
        overall_accuracy as previous_overall_accuracy
    from golden_replays
    where replay_recency_rank = 2
),

window_summary as (
    select
        golden_session_id,
        agent_id,
        count(*) as replays_in_window,
        count(case when passed then 1 end) as passes_in_window
    from golden_replays
    where replay_recency_rank <= {{ flaky_window }}
    group by golden_session_id, agent_id
),

history_summary as (
    select
        golden_session_id,
        agent_id,
        count(*) as total_replays,
        min(replayed_at) as first_replayed_at
    from golden_replays
    group by golden_session_id, agent_id
),

cells as (
    select
        latest_replays.tenant_id,
        latest_replays.golden_set,
        latest_replays.golden_session_id,
        latest_replays.agent_id,
        latest_replays.session_type,
        latest_replays.replay_session_id,
        latest_replays.replayed_at,
        latest_replays.passed,
        latest_replays.overall_accuracy,
        latest_replays.dimensions,
        latest_replays.failed_dimensions,
        latest_replays.failed_dimension_names,
        latest_replays.divergence_count,
        previous_replays.previous_replay_session_id,
        previous_replays.previous_replayed_at,
        previous_replays.previous_passed,
        previous_replays.previous_overall_accuracy,
        window_summary.replays_in_window,
        window_summary.passes_in_window,
        history_summary.total_replays,
        history_summary.first_replayed_at
    from latest_replays
    inner join window_summary
        on
            latest_replays.golden_session_id = window_summary.golden_session_id
            and latest_replays.agent_id is not distinct from window_summary.agent_id
    inner join history_summary
        on
            latest_replays.golden_session_id = history_summary.golden_session_id
            and latest_replays.agent_id is not distinct from history_summary.agent_id
    left join previous_replays
        on
            latest_replays.golden_session_id = previous_replays.golden_session_id
            and latest_replays.agent_id is not distinct from previous_replays.agent_id
),

classified as (
    select
        *,
        case
            when not passed and previous_passed then 'regressed'
            when passed and not previous_passed then 'fixed'
            when passes_in_window > 0 and passes_in_window < replays_in_window then 'flaky'
            when passed then 'pass'
            else 'fail'
        end as cell_status
    from cells
)

select * from classified
