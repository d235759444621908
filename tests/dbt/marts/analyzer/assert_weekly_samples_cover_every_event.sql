-- Must hold: the weekly correction marts cover every dated deduplicated
-- event up to as_of exactly once (an undated event belongs to no week), so
-- per skill the weekly sample sizes and weighted corrections add up to the
-- skill's dated events and weights. Returns the skills where they do not.

with events as (
    select * from {{ ref('int_analyzer__events_weighted') }}
),

weekly as (
    select * from {{ ref('skill_correction_weekly') }}
),

events_per_skill as (
    select
        skill_id,
        count(*) as events,
        sum(correction_weight) as weighted_corrections
    from events
    where invoked_at is not null
    group by skill_id
),

weekly_per_skill as (
    select
        skill_id,
        sum(sample_size) as events,
        sum(weighted_corrections) as weighted_corrections
    from weekly
    group by skill_id
),

violations as (
    select
        events_per_skill.skill_id,
        events_per_skill.events as events_in_history,
        weekly_per_skill.events as events_in_weeks
    from events_per_skill
    full outer join weekly_per_skill
        on events_per_skill.skill_id = weekly_per_skill.skill_id
    where
        events_per_skill.events is distinct from weekly_per_skill.events
        or events_per_skill.weighted_corrections
        is distinct from weekly_per_skill.weighted_corrections
)

select * from violations
