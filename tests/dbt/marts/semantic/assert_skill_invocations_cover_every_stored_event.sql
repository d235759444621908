-- Must hold: skill_invocations_daily (the semantic layer's counts, per day,
-- skill and dimension hint) counts every dated stored analyzer event once
-- (an undated one belongs to no day): summed over dimensions, every UTC day
-- and skill has as many invocations as stored_analyzer_events holds dated
-- events. Returns the days and skills where they differ.

with invocations as (
    select * from {{ ref('skill_invocations_daily') }}
),

stored as (
    select * from {{ ref('stored_analyzer_events') }}
),

invocations_per_skill as (
    select
        invoked_date,
        skill_id,
        sum(invocations) as invocations
    from invocations
    group by invoked_date, skill_id
),

stored_per_skill as (
    select
        cast(invoked_at as date) as invoked_date,
        skill_id,
        count(*) as events
    from stored
    where invoked_at is not null
    group by cast(invoked_at as date), skill_id
),

violations as (
    select
        invocations_per_skill.invocations,
        stored_per_skill.events,
        coalesce(invocations_per_skill.invoked_date, stored_per_skill.invoked_date) as invoked_date,
        coalesce(invocations_per_skill.skill_id, stored_per_skill.skill_id) as skill_id
    from invocations_per_skill
    full outer join stored_per_skill
        on
            invocations_per_skill.invoked_date = stored_per_skill.invoked_date
            and invocations_per_skill.skill_id = stored_per_skill.skill_id
    where
        invocations_per_skill.invocations is null
        or stored_per_skill.events is null
        or invocations_per_skill.invocations != stored_per_skill.events
)

select * from violations
