-- One row per golden session with a replay at or before the report instant
-- (int_evals__replay_outcomes, has_golden_source): its set and the label the
-- matrix shows (docs/metrics.md (part 2), "Names"): the first six words of
-- its input snapshot's initial message (an ellipsis when there are more; at
-- most 60 characters, macro first_words), with the id in parentheses when
-- another golden session of the same tenant and set begins with the same
-- words; the id when the snapshot has no initial message.

with replays as (
    select * from {{ ref('int_evals__replay_outcomes') }}
    where has_golden_source
),

sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

golden_sessions as (
    select distinct
        golden_session_id,
        tenant_id,
        golden_set
    from replays
),

worded as (
    select
        golden_sessions.golden_session_id,
        golden_sessions.tenant_id,
        golden_sessions.golden_set,
        {{ first_words('sessions.golden_initial_message', 6) }} as first_words
    from golden_sessions
    left join sessions
        on golden_sessions.golden_session_id = sessions.session_id
),

counted as (
    select
        *,
        count(*) over (partition by tenant_id, golden_set, first_words) as sessions_with_the_words
    from worded
),

labelled as (
    select
        golden_session_id,
        tenant_id,
        golden_set,
        case
            when first_words is null then golden_session_id
            when sessions_with_the_words > 1 then first_words || ' (' || golden_session_id || ')'
            else first_words
        end as golden_session_label
    from counted
),

-- a label that still repeats within the tenant and set (an initial message
-- that reads like another session's label with its id) gets the id in
-- brackets: ids are unique, so the labels are
deduplicated as (
    select
        golden_session_id,
        tenant_id,
        golden_set,
        case
            when count(*) over (partition by tenant_id, golden_set, golden_session_label) > 1
                then golden_session_label || ' [' || golden_session_id || ']'
            else golden_session_label
        end as golden_session_label
    from labelled
)

select * from deduplicated
