-- The successes and trials behind every rate the dashboard shows over a
-- period, one row per metric, segment, tenant, project and UTC day, on one
-- shape (metric_rates_by_period sums them over periods):
-- - session_positive_rate: positive / (positive + negative) end-of-session
--   answers, all surfaces, by surface, by modality and by turn-count bucket;
-- - session_skip_rate: skip / responses, the same segments;
-- - reaction_satisfaction: ok / active turn reactions, all origins and by
--   origin, per tenant and project (int_reactions__counted);
-- - reaction_flip_rate: (replacements + clears) / user reactions;
-- - correction_rate: weighted corrections / invocations, all skills and by
--   skill (the daily history, which outlives purges);
-- - eval_pass_rate: passing / finished replays, all golden sets and by
--   golden set and agent config, per tenant.
-- segment_label names the segment in words: the surface, modality,
-- turn-count bucket, origin or skill as it is; an eval segment as
-- `<agent config label> on <golden set> at <tenant name>`.
-- A metric without a tenant (or project) carries the all-members key in
-- that column, and is_tenant_scoped (is_project_scoped) false: the
-- dashboard's tenant filter does not apply to it.
-- is_retained: the day is inside the window of the retention policy that
-- governs the series (retention_policy_windows, as of the build), i.e. the
-- retention-filtered dashboard shows it.

{%- set all_members = "'" ~ var('all_members_key') ~ "'" %}

with session_daily as (
    select * from {{ ref('session_feedback_daily') }}
),

session_by_turn_bucket as (
    select * from {{ ref('session_feedback_by_turn_bucket') }}
),

session_by_modality as (
    select * from {{ ref('session_feedback_by_modality') }}
),

reaction_counted as (
    select * from {{ ref('int_reactions__counted') }}
),

reaction_changes as (
    select * from {{ ref('reaction_changes_daily') }}
),

skill_daily as (
    select * from {{ ref('skill_correction_daily_history') }}
),

eval_daily as (
    select * from {{ ref('eval_set_accuracy_trend') }}
),

agent_configs as (
    select * from {{ ref('int_evals__agent_configs') }}
),

retention_windows as (
    select * from {{ ref('retention_policy_windows') }}
),

-- the eval segments' names: the agent config's label (unique within its
-- tenant), the golden set and the tenant's name, as the Evals page names them
eval_labelled as (
    select
        eval_daily.*,
        {{ dbt.concat([
            'coalesce(agent_configs.agent_config_label, eval_daily.agent_id)',
            "' on '",
            'eval_daily.golden_set',
            "' at '",
            "coalesce(eval_daily.tenant_name, eval_daily.tenant, 'no tenant')",
        ]) }} as agent_segment_label
    from eval_daily
    left join agent_configs
        on eval_daily.agent_id = agent_configs.agent_id
),

reaction_counts as (
    select
        reaction_date,
        origin,
        tenant,
        project,
        cast(sum(ok) as bigint) as ok,
        cast(sum(reactions) as bigint) as reactions
    from reaction_counted
    group by reaction_date, origin, tenant, project
),

-- One row per source row and segment it counts in; the `all` segment of a
-- metric repeats every row of its primary split (surfaces, origins, skills,
-- golden set x agent), summed below.
series as (
    {%- for rate_name, successes, trials in session_answer_rate_terms() %}
        {%- set metric = 'session_' ~ rate_name %}
        select
            '{{ metric }}' as metric,
            'all' as segment_type,
            'all' as segment,
            'all' as segment_value,
            'all' as segment_label,
            0 as segment_order,
            {{ all_members }} as tenant,
            {{ all_members }} as project,
            feedback_date as metric_date,
            {{ successes }} as successes,
            {{ trials }} as trials,
            'session_feedback' as retention_policy
        from session_daily
        union all
        select
            '{{ metric }}' as metric,
            'surface' as segment_type,
            {{ dbt.concat(["'surface '", 'source']) }} as segment,
            source as segment_value,
            source as segment_label,
            0 as segment_order,
            {{ all_members }} as tenant,
            {{ all_members }} as project,
            feedback_date as metric_date,
            {{ successes }} as successes,
            {{ trials }} as trials,
            'session_feedback' as retention_policy
        from session_daily
        union all
        select
            '{{ metric }}' as metric,
            'turn_count_bucket' as segment_type,
            {{ dbt.concat(["'turns '", 'turn_count_bucket']) }} as segment,
            turn_count_bucket as segment_value,
            turn_count_bucket as segment_label,
            turn_count_bucket_order as segment_order,
            {{ all_members }} as tenant,
            {{ all_members }} as project,
            feedback_date as metric_date,
            {{ successes }} as successes,
            {{ trials }} as trials,
            'session_feedback' as retention_policy
        from session_by_turn_bucket
        union all
        select
            '{{ metric }}' as metric,
            'modality' as segment_type,
            {{ dbt.concat(["'modality '", 'modality']) }} as segment,
            modality as segment_value,
            modality as segment_label,
            0 as segment_order,
            {{ all_members }} as tenant,
            {{ all_members }} as project,
            feedback_date as metric_date,
            {{ successes }} as successes,
            {{ trials }} as trials,
            'session_feedback' as retention_policy
        from session_by_modality
        union all
    {%- endfor %}
    select
        'reaction_satisfaction' as metric,
        'all' as segment_type,
        'all' as segment,
        'all' as segment_value,
        'all' as segment_label,
        0 as segment_order,
        tenant,
        project,
        reaction_date as metric_date,
        ok as successes,
        reactions as trials,
        'turn_reactions' as retention_policy
    from reaction_counts
    union all
    select
        'reaction_satisfaction' as metric,
        'origin' as segment_type,
        {{ dbt.concat(['origin', "' reactions'"]) }} as segment,
        origin as segment_value,
        origin as segment_label,
        0 as segment_order,
        tenant,
        project,
        reaction_date as metric_date,
        ok as successes,
        reactions as trials,
        'turn_reactions' as retention_policy
    from reaction_counts
    union all
    select
        'reaction_flip_rate' as metric,
        'all' as segment_type,
        'all' as segment,
        'all' as segment_value,
        'all' as segment_label,
        0 as segment_order,
        {{ all_members }} as tenant,
        {{ all_members }} as project,
        reaction_date as metric_date,
        replacements + clears as successes,
        user_reactions as trials,
        'turn_reactions' as retention_policy
    from reaction_changes
    union all
    select
        'correction_rate' as metric,
        'all' as segment_type,
        'all' as segment,
        'all' as segment_value,
        'all' as segment_label,
        0 as segment_order,
        {{ all_members }} as tenant,
        {{ all_members }} as project,
        invoked_date as metric_date,
        weighted_corrections as successes,
        sample_size as trials,
        'analyzer_events' as retention_policy
    from skill_daily
    union all
    select
        'correction_rate' as metric,
        'skill' as segment_type,
        {{ dbt.concat(["'skill '", 'skill_id']) }} as segment,
        skill_id as segment_value,
        skill_id as segment_label,
        0 as segment_order,
        {{ all_members }} as tenant,
        {{ all_members }} as project,
        invoked_date as metric_date,
        weighted_corrections as successes,
        sample_size as trials,
        'analyzer_events' as retention_policy
    from skill_daily
    union all
    select
        'eval_pass_rate' as metric,
        'all' as segment_type,
        'all' as segment,
        'all' as segment_value,
        'all' as segment_label,
        0 as segment_order,
        tenant,
        {{ all_members }} as project,
        run_date as metric_date,
        passes as successes,
        replays as trials,
        'replay_sessions' as retention_policy
    from eval_daily
    union all
    select
        'eval_pass_rate' as metric,
        'golden_set_agent' as segment_type,
        {{ dbt.concat(['golden_set', "' / agent '", 'substr(agent_id, 1, 8)']) }} as segment,
        {{ dbt.concat(['golden_set', "' / agent '", 'substr(agent_id, 1, 8)']) }} as segment_value,
        agent_segment_label as segment_label,
        0 as segment_order,
        tenant,
        {{ all_members }} as project,
        run_date as metric_date,
        passes as successes,
        replays as trials,
        'replay_sessions' as retention_policy
    from eval_labelled
),

per_day as (
    select
        metric,
        segment_type,
        segment,
        segment_value,
        tenant,
        project,
        metric_date,
        retention_policy,
        cast(sum(trials) as bigint) as trials,
        min(segment_label) as segment_label,
        min(segment_order) as segment_order,
        sum(successes) as successes
    from series
    group by
        metric, segment_type, segment, segment_value, tenant, project, metric_date, retention_policy
),

flagged as (
    select
        per_day.metric,
        per_day.segment_type,
        per_day.segment,
        per_day.segment_value,
        per_day.segment_label,
        per_day.segment_order,
        per_day.tenant,
        per_day.project,
        per_day.metric_date,
        per_day.metric in ('reaction_satisfaction', 'eval_pass_rate') as is_tenant_scoped,
        per_day.metric = 'reaction_satisfaction' as is_project_scoped,
        cast(per_day.successes as {{ dbt.type_float() }}) as successes,
        per_day.trials,
        per_day.retention_policy,
        (
            retention_windows.cutoff_at is null
            or per_day.metric_date >= cast(retention_windows.cutoff_at as date)
        ) as is_retained
    from per_day
    left join retention_windows
        on per_day.retention_policy = retention_windows.policy
)

select * from flagged
