-- How often users change their mind, per UTC day, from every user reaction
-- given up to the report instant (replaced and cleared ones included):
--   user_reactions = new_reactions + replacements + clears
--   new_reactions  = a reaction on a turn with no standing reaction of the user
--   replacements   = a reaction that replaced the user's standing reaction on the turn
--   reversals      = replacements with a different value (e.g. ok -> not_ok)
--   clears         = a clear (reaction null) of the user's reaction on the turn
--   flip_rate      = (replacements + clears) / user_reactions, with its 95% Wilson interval

with history as (
    select * from {{ ref('int_reactions__history') }}
),

user_reactions as (
    select
        cast(reacted_at as date) as reaction_date,
        is_clear,
        is_replacement,
        is_replacement and reaction != previous_user_reaction as is_reversal
    from history
    where origin = 'user'
),

counts_per_day as (
    select
        reaction_date,
        count(*) as user_reactions,
        count(case when not is_clear and not is_replacement then 1 end) as new_reactions,
        count(case when is_replacement then 1 end) as replacements,
        count(case when is_reversal then 1 end) as reversals,
        count(case when is_clear then 1 end) as clears
    from user_reactions
    group by reaction_date
),

rates as (
    select
        reaction_date,
        user_reactions,
        new_reactions,
        replacements,
        reversals,
        clears,
        {{ rate_with_interval('replacements + clears', 'user_reactions', 'flip_rate') }}
    from counts_per_day
)

select * from rates
