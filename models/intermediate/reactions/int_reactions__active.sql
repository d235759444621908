-- The reactions that count, as of the report instant: each user's latest
-- reaction per turn unless it was cleared, and machine reactions at or above
-- `machine_confidence_threshold` (see int_reactions__history).

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
        confidence,
        reacted_at,
        comment_text,
        has_legacy_tag
    from history
    where is_active
)

select * from active
