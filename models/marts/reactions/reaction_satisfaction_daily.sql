-- Satisfaction per UTC day and origin (user, machine) from the active
-- reactions as of the report instant:
--   satisfaction_rate = ok / (ok + not_ok + neutral)
-- with its 95% Wilson interval (reaction_satisfaction_rate). The counts are
-- int_reactions__counted's, summed over tenants, projects, conversations
-- and turns.

with counted as (
    select * from {{ ref('int_reactions__counted') }}
),

counts_per_day_and_origin as (
    select
        reaction_date,
        origin,
        cast(sum(ok) as bigint) as ok,
        cast(sum(not_ok) as bigint) as not_ok,
        cast(sum(neutral) as bigint) as neutral,
        cast(sum(reactions) as bigint) as reactions
    from counted
    group by reaction_date, origin
),

rates as (
    select
        reaction_date,
        origin,
        ok,
        not_ok,
        neutral,
        reactions,
        {{ reaction_satisfaction_rate() }}
    from counts_per_day_and_origin
)

select * from rates
