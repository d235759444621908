-- Every turn reaction given up to the report instant (reacted_at <= as_of),
-- with whether it counts. A user has one active reaction per turn: the latest
-- of their reactions on (conversation_id, turn_id, user_id), unless it is a
-- clear (reaction null), which removes it; each earlier one was replaced by
-- the next (replaced_by_rn). Machine reactions are additive: each is active
-- when its confidence reaches `machine_confidence_threshold`. Reactions at
-- the same instant are ordered by their rn.
--
-- The order comes from int_reactions__sequenced (every stored reaction with
-- its neighbours): a reaction's next one follows it only when it was given
-- by as_of too (every later one then is after as_of as well), and its
-- previous one always was. A view: the cut is a filter on the stored table.

with sequenced as (
    select * from {{ ref('int_reactions__sequenced') }}
),

reacted_by_as_of as (
    select
        *,
        origin = 'user' as is_user_reaction,
        case when next_reacted_at <= {{ as_of_timestamp() }} then next_rn end as next_rn_by_as_of
    from sequenced
    where reacted_at <= {{ as_of_timestamp() }}
),

user_sequence as (
    select
        *,
        is_user_reaction and next_rn_by_as_of is null as is_latest_user_reaction_for_turn,
        case when is_user_reaction then next_rn_by_as_of end as replaced_by_rn,
        case when is_user_reaction then previous_rn end as previous_user_rn,
        case when is_user_reaction then previous_reaction end as previous_user_reaction
    from reacted_by_as_of
),

classified as (
    select
        reaction_rn,
        tenant,
        project,
        user_id,
        conversation_id,
        bundle_id,
        turn_id,
        track_id,
        user_type,
        origin,
        reaction,
        is_clear,
        confidence,
        reacted_at,
        comment_text,
        has_legacy_tag,
        is_latest_user_reaction_for_turn,
        replaced_by_rn,
        previous_user_rn,
        previous_user_reaction,
        -- a user reaction that took the place of a standing one (not of a clear)
        coalesce(
            is_user_reaction
            and not is_clear
            and previous_user_rn is not null
            and previous_user_reaction is not null,
            false
        ) as is_replacement,
        case
            when is_clear then false
            when is_user_reaction then is_latest_user_reaction_for_turn
            else coalesce(confidence >= {{ var('machine_confidence_threshold') }}, false)
        end as is_active
    from user_sequence
)

select * from classified
