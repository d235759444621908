-- Every feedback signal of every source on one shape (docs/metrics.md,
-- "Unified feedback signals"): one row per signal at or before the report instant, its
-- source label mapped to the common rating (positive / negative / neutral /
-- skip) by the seed feedback_label_ratings. A label the seed does not map
-- keeps a null rating (the not_null test on rating fails the build: add the
-- label to the seed). `tenant` is the one tenant key across sources, with its
-- display name, from int_tenants__mapped (the seed `tenants`; an id the seed
-- does not list is its own key); source_tenant_id is the source's own id.
--
-- The signals of each source, before the label is mapped:
-- - session_feedback: an end-of-session answer (stg_session_feedback__records),
--   about the opaque session, given by the user;
-- - turn_reactions: an active turn reaction (int_reactions__active: a user's
--   latest reaction per turn unless cleared, machine reactions at or above
--   the confidence threshold), about conversation_id/turn_id;
-- - analyzer: an implicit outcome mined from a coding-agent session
--   (int_analyzer__events_as_of, one per event_id), about the skill;
--   an undated event (no invocation time) is no signal;
-- - workspace: a workspace feedback row (int_workspace__feedback_as_of),
--   about its session, else its entity, else its agent; `session` rows are
--   written by the system (failed sessions, failed eval replays), so their
--   origin is machine.
-- signal_id is the source's own key prefixed with the source system, unique
-- across sources. rating_source_system / source_label are the key of the
-- seed feedback_label_ratings. confidence: the source's own where it has one
-- (reactions, analyzer); 1.0 for the explicit answers of session feedback and
-- workspace feedback, which carry none. source_tenant_id: the tenant as the
-- source names it (the reactions' name, the workspace's uuid; null for the
-- other two), mapped to the one tenant key below.
-- retention_policy: the policy of the seed retention_policies that purges the
-- signal's raw rows (a retention-filtered page cuts each source at its cutoff).

with session_feedback as (
    select * from {{ ref('stg_session_feedback__records') }}
),

active_reactions as (
    select * from {{ ref('int_reactions__active') }}
),

analyzer_events as (
    select * from {{ ref('int_analyzer__events_as_of') }}
),

workspace_feedback as (
    select * from {{ ref('int_workspace__feedback_as_of') }}
),

label_ratings as (
    select * from {{ ref('feedback_label_ratings') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
),

session_feedback_signals as (
    select
        {{ dbt.concat(["'session_feedback:'", 'feedback_id']) }} as signal_id,
        'session_feedback' as source_system,
        'session_feedback' as rating_source_system,
        label as source_label,
        recorded_at as occurred_at,
        cast(null as {{ dbt.type_string() }}) as source_tenant_id,
        'session' as subject_type,
        session_id_opaque as subject_id,
        'user' as origin,
        cast(1.0 as {{ dbt.type_float() }}) as confidence,
        'session_feedback' as retention_policy
    from session_feedback
    where recorded_at <= {{ as_of_timestamp() }}
),

reaction_signals as (
    select
        {{ dbt.concat(["'turn_reactions:'", 'reaction_rn']) }} as signal_id,
        'turn_reactions' as source_system,
        'reactions' as rating_source_system,
        counted_reaction as source_label,
        reacted_at as occurred_at,
        tenant as source_tenant_id,
        'turn' as subject_type,
        {{ dbt.concat(['conversation_id', "'/'", 'turn_id']) }} as subject_id,
        origin,
        cast(confidence as {{ dbt.type_float() }}) as confidence,
        'turn_reactions' as retention_policy
    from active_reactions
),

analyzer_signals as (
    select
        {{ dbt.concat(["'analyzer:'", 'event_id']) }} as signal_id,
        'analyzer' as source_system,
        'analyzer' as rating_source_system,
        outcome as source_label,
        invoked_at as occurred_at,
        cast(null as {{ dbt.type_string() }}) as source_tenant_id,
        'skill' as subject_type,
        skill_id as subject_id,
        'implicit' as origin,
        cast(confidence as {{ dbt.type_float() }}) as confidence,
        'analyzer_events' as retention_policy
    from analyzer_events
    -- an undated event has no time to be a signal at (skill_correction_rates counts it)
    where invoked_at is not null
),

workspace_signals as (
    select
        {{ dbt.concat(["'workspace:'", 'feedback_id']) }} as signal_id,
        'workspace' as source_system,
        'workspace' as rating_source_system,
        rating as source_label,
        created_at as occurred_at,
        tenant_id as source_tenant_id,
        case
            when session_id is not null then 'workspace_session'
            when entity_id is not null then 'workspace_entity'
            when agent_id is not null then 'workspace_agent'
        end as subject_type,
        coalesce(session_id, entity_id, agent_id) as subject_id,
        case when source_type = 'session' then 'machine' else 'user' end as origin,
        cast(1.0 as {{ dbt.type_float() }}) as confidence,
        'workspace_feedback' as retention_policy
    from workspace_feedback
),

signals as (
    select * from session_feedback_signals
    union all
    select * from reaction_signals
    union all
    select * from analyzer_signals
    union all
    select * from workspace_signals
),

rated as (
    select
        signals.signal_id,
        signals.source_system,
        signals.occurred_at,
        cast(signals.occurred_at as date) as occurred_date,
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        signals.source_tenant_id,
        signals.subject_type,
        signals.subject_id,
        signals.origin,
        signals.source_label,
        label_ratings.rating,
        signals.confidence,
        signals.retention_policy
    from signals
    left join label_ratings
        on
            signals.rating_source_system = label_ratings.source_system
            and signals.source_label = label_ratings.label
    left join tenants
        on
            signals.source_system = tenants.source_system
            and signals.source_tenant_id = tenants.source_tenant_id
)

select * from rated
