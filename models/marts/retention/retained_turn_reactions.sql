-- Turn reaction artifacts (all of them, replaced and cleared ones too, as
-- the raw table holds them) the retention policy still keeps as of the
-- report instant: policy `turn_reactions` deletes reactions given before
-- as_of minus keep_days (365 by default). Reactions after as_of are not
-- shown either.

with reactions as (
    select * from {{ ref('stg_reactions__turn_reactions') }}
),

retained as (
    select
        reactions.reaction_rn,
        reactions.tenant,
        reactions.project,
        reactions.user_id,
        reactions.conversation_id,
        reactions.bundle_id,
        reactions.turn_id,
        reactions.track_id,
        reactions.user_type,
        reactions.origin,
        reactions.reaction,
        reactions.is_clear,
        reactions.confidence,
        reactions.reacted_at,
        reactions.comment_text,
        reactions.has_legacy_tag,
        reactions.loaded_at,
        reactions.load_id,
        reactions.source_uri,
        'turn_reactions' as retention_policy
    from reactions
    where
        reactions.reacted_at >= {{ retention_cutoff_at(retention_keep_days('turn_reactions')) }}
        and reactions.reacted_at <= {{ as_of_timestamp() }}
)

select * from retained
