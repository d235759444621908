-- Satisfaction per UTC day and origin (user, machine) from the active
-- reactions as of the report instant:
--   satisfaction_rate = ok / (ok + not_ok + neutral)
-- with its 95% Wilson interval.

with active as (
    select * from {{ ref('int_reactions__active') }}
),

counts_per_day_and_origin as (
    select
        cast(reacted_at as date) as reaction_date,
        origin,
        count(case when counted_reaction = 'ok' then 1 end) as ok,
        count(case when counted_reaction = 'not_ok' then 1 end) as not_ok,
        -- a machine reaction without a value is neutral (counted_reaction)
        count(case when counted_reaction = 'neutral' then 1 end) as neutral,
        count(*) as reactions
    from active
    group by cast(reacted_at as date), origin
),

rates as (
    select
        reaction_date,
        origin,
        ok,
        not_ok,
        neutral,
        reactions,
        {{ rate_with_interval('ok', 'ok + not_ok + neutral', 'satisfaction_rate') }}
    from counts_per_day_and_origin
)

select * from rates
