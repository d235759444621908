-- The eval pass/fail matrix: one cell per (golden session, agent config)
-- with at least one finished or pending replay at or before the report
-- instant (docs/metrics.md (part 2), "The matrix cell"). Only FINISHED
-- replays count as pass or fail (int_evals__replay_outcomes); the latest
-- finished replay decides the cell, `previous_*` is the finished one before
-- it, and the flaky window holds the last `flaky_window` finished replays
-- (var, dbt_project.yml). A flip is a pair of consecutive finished replays of the
-- window with different outcomes. cell_status, first match wins:
--   1. pending: the cell has no finished replay yet, only pending ones;
--   2. flaky: at least two flips in the window;
--   3. regressed: the latest finished replay failed, the previous passed;
--   4. fixed: the latest finished replay passed, the previous failed;
--   5. pass / fail: the latest finished replay's outcome.
-- Flaky comes first: on a cell that keeps flipping, the last flip is noise,
-- not news. Failed-to-run and cancelled replays do not count at all.
-- has_pending_replay: a pending replay started after the latest finished
-- one (any pending replay, when there is none); it will decide the cell
-- when it finishes. `tenant` is the one tenant key across sources, with its
-- display name (int_tenants__mapped); tenant_id is the workspace's uuid.
-- Names (docs/metrics.md (part 2), "Names"): agent_config_name and _label
-- (int_evals__agent_configs), golden_session_label
-- (int_evals__golden_sessions). The pinned baseline (seed eval_baselines)
-- names an agent config per golden set; baseline_agent_id is the tenant's
-- agent config of that name (two of one name: the one replayed last on the
-- set, then the smaller id). versus_baseline compares the latest finished
-- outcomes of this cell and of the baseline's cell on the same golden
-- session: `better` (this one passed, the baseline failed), `worse`, `same`;
-- null on the baseline's own cells, when the set has no baseline, or when
-- either cell has no finished replay.

{%- set flaky_window = var('flaky_window') | int %}
{%- if flaky_window < 1 %}
    {{ exceptions.raise_compiler_error("var flaky_window must be a whole number >= 1, got " ~ var('flaky_window')) }}
{%- endif %}

with replay_outcomes as (
    select * from {{ ref('int_evals__replay_outcomes') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
    where source_system = 'workspace'
),

agent_configs as (
    select * from {{ ref('int_evals__agent_configs') }}
),

golden_sessions as (
    select * from {{ ref('int_evals__golden_sessions') }}
),

baselines as (
    select * from {{ ref('eval_baselines') }}
),

golden_replays as (
    select * from replay_outcomes
    where has_golden_source
),

finished_replays as (
    select
        *,
        -- the outcome of the finished replay just before this one
        lead(passed) over (
            partition by golden_session_id, agent_id
            order by replay_recency_rank
        ) as older_passed
    from golden_replays
    where is_finished
),

latest_replays as (
    select * from finished_replays
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
    from finished_replays
    where replay_recency_rank = 2
),

window_summary as (
    select
        golden_session_id,
        agent_id,
        count(*) as replays_in_window,
        count(case when passed then 1 end) as passes_in_window,
        -- pairs (rank r, rank r + 1) both inside the window
        count(
            case
                when
                    replay_recency_rank < {{ flaky_window }}
                    and passed != older_passed
                    then 1
            end
        ) as flips_in_window
    from finished_replays
    where replay_recency_rank <= {{ flaky_window }}
    group by golden_session_id, agent_id
),

history_summary as (
    select
        golden_session_id,
        agent_id,
        count(*) as total_replays,
        min(replayed_at) as first_replayed_at
    from finished_replays
    group by golden_session_id, agent_id
),

pending_candidates as (
    select
        golden_replays.tenant_id,
        golden_replays.golden_set,
        golden_replays.golden_session_id,
        golden_replays.agent_id,
        golden_replays.session_type,
        golden_replays.replay_session_id,
        golden_replays.created_at
    from golden_replays
    left join latest_replays
        on
            golden_replays.golden_session_id = latest_replays.golden_session_id
            and golden_replays.agent_id is not distinct from latest_replays.agent_id
    where
        golden_replays.replay_state = 'pending'
        and (
            latest_replays.replay_session_id is null
            or golden_replays.created_at > latest_replays.created_at
        )
),

pending_ranked as (
    select
        *,
        row_number() over (
            partition by golden_session_id, agent_id
            order by created_at desc, replay_session_id desc
        ) as pending_recency_rank,
        count(*) over (partition by golden_session_id, agent_id) as pending_replays,
        min(created_at) over (partition by golden_session_id, agent_id) as pending_since
    from pending_candidates
),

pending_summary as (
    select
        tenant_id,
        golden_set,
        golden_session_id,
        agent_id,
        session_type,
        replay_session_id as pending_replay_session_id,
        created_at as latest_pending_at,
        pending_since,
        pending_replays
    from pending_ranked
    where pending_recency_rank = 1
),

cell_keys as (
    select
        golden_session_id,
        agent_id,
        tenant_id,
        golden_set,
        session_type
    from latest_replays
    union all
    select
        pending_summary.golden_session_id,
        pending_summary.agent_id,
        pending_summary.tenant_id,
        pending_summary.golden_set,
        pending_summary.session_type
    from pending_summary
    left join latest_replays
        on
            pending_summary.golden_session_id = latest_replays.golden_session_id
            and pending_summary.agent_id is not distinct from latest_replays.agent_id
    where latest_replays.replay_session_id is null
),

cells as (
    select
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        cell_keys.tenant_id,
        cell_keys.golden_set,
        cell_keys.golden_session_id,
        cell_keys.agent_id,
        cell_keys.session_type,
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
        history_summary.first_replayed_at,
        pending_summary.pending_replay_session_id,
        pending_summary.latest_pending_at,
        pending_summary.pending_since,
        coalesce(window_summary.replays_in_window, 0) as replays_in_window,
        coalesce(window_summary.passes_in_window, 0) as passes_in_window,
        coalesce(window_summary.flips_in_window, 0) as flips_in_window,
        coalesce(history_summary.total_replays, 0) as total_replays,
        pending_summary.pending_replay_session_id is not null as has_pending_replay,
        coalesce(pending_summary.pending_replays, 0) as pending_replays
    from cell_keys
    left join latest_replays
        on
            cell_keys.golden_session_id = latest_replays.golden_session_id
            and cell_keys.agent_id is not distinct from latest_replays.agent_id
    left join window_summary
        on
            cell_keys.golden_session_id = window_summary.golden_session_id
            and cell_keys.agent_id is not distinct from window_summary.agent_id
    left join history_summary
        on
            cell_keys.golden_session_id = history_summary.golden_session_id
            and cell_keys.agent_id is not distinct from history_summary.agent_id
    left join previous_replays
        on
            cell_keys.golden_session_id = previous_replays.golden_session_id
            and cell_keys.agent_id is not distinct from previous_replays.agent_id
    left join pending_summary
        on
            cell_keys.golden_session_id = pending_summary.golden_session_id
            and cell_keys.agent_id is not distinct from pending_summary.agent_id
    left join tenants
        on cell_keys.tenant_id = tenants.source_tenant_id
),

classified as (
    select
        *,
        case
            when replay_session_id is null then 'pending'
            when flips_in_window >= 2 then 'flaky'
            when not passed and previous_passed then 'regressed'
            when passed and not previous_passed then 'fixed'
            when passed then 'pass'
            else 'fail'
        end as cell_status
    from cells
),

named as (
    select
        classified.*,
        -- every golden replay's agent config and golden session has its name there
        agent_configs.agent_config_name,
        agent_configs.agent_config_label,
        golden_sessions.golden_session_label
    from classified
    left join agent_configs
        on classified.agent_id = agent_configs.agent_id
    left join golden_sessions
        on classified.golden_session_id = golden_sessions.golden_session_id
),

baseline_candidates as (
    select
        named.tenant_id,
        named.golden_set,
        named.agent_id,
        row_number() over (
            partition by named.tenant_id, named.golden_set
            order by max(named.replayed_at) desc nulls last, named.agent_id
        ) as baseline_rank
    from named
    inner join baselines
        on
            named.golden_set = baselines.golden_set
            and named.agent_config_name = baselines.baseline_agent_config
    group by named.tenant_id, named.golden_set, named.agent_id
),

baseline_agents as (
    select
        tenant_id,
        golden_set,
        agent_id as baseline_agent_id
    from baseline_candidates
    where baseline_rank = 1
),

compared as (
    select
        named.*,
        baseline_agents.baseline_agent_id,
        baseline_cells.passed as baseline_passed,
        coalesce(named.agent_id = baseline_agents.baseline_agent_id, false) as is_baseline,
        case
            when
                baseline_agents.baseline_agent_id is null
                or named.agent_id = baseline_agents.baseline_agent_id
                or named.passed is null
                or baseline_cells.passed is null
                then null
            when named.passed = baseline_cells.passed then 'same'
            when named.passed then 'better'
            else 'worse'
        end as versus_baseline
    from named
    left join baseline_agents
        on
            named.tenant_id is not distinct from baseline_agents.tenant_id
            and named.golden_set = baseline_agents.golden_set
    left join named as baseline_cells
        on
            named.golden_session_id = baseline_cells.golden_session_id
            and baseline_agents.baseline_agent_id = baseline_cells.agent_id
)

select * from compared
