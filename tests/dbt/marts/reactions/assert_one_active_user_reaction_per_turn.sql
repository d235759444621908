-- Must hold: a user has at most one active reaction per turn (a newer one
-- replaces it, a clear removes it), and a user reaction that was replaced or
-- cleared later never appears in turn_reactions_active. Returns the turns
-- with several active user reactions and the replaced reactions still shown.

with active as (
    select * from {{ ref('turn_reactions_active') }}
),

history as (
    select * from {{ ref('int_reactions__history') }}
),

turns_with_several as (
    select
        conversation_id,
        turn_id,
        user_id,
        cast(null as {{ dbt.type_string() }}) as rn,
        count(*) as active_user_reactions
    from active
    where origin = 'user'
    group by conversation_id, turn_id, user_id
    having count(*) > 1
),

replaced_but_shown as (
    select
        active.conversation_id,
        active.turn_id,
        active.user_id,
        active.rn,
        1 as active_user_reactions
    from active
    inner join history
        on active.rn = history.reaction_rn
    where history.replaced_by_rn is not null
),

violations as (
    select * from turns_with_several
    union all
    select * from replaced_but_shown
)

select * from violations
