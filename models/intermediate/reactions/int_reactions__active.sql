-- The reactions that count, as of the report instant (int_reactions__history):
-- where the index decides, those whose index row exists by then; each user's
-- latest reaction per turn, and machine reactions at or above
-- `machine_confidence_threshold`, a null one as neutral (counted_reaction).

with history as (
    select * from {{ ref('int_reactions__history') }}
),

active as (
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
        counted_reaction,
        confidence,
        reacted_at,
        comment_text,
        has_legacy_tag,
        active_part
    from history
    where is_active
)

select * from active
