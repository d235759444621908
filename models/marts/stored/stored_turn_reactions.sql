-- Every stored turn reaction artifact (replaced and cleared ones too, as the
-- raw table holds them) given at or before the report instant, whatever its
-- retention policy says: the "everything stored" counterpart of
-- retained_turn_reactions, with is_retained telling the rows that view
-- keeps. The dashboard's drill-downs read it when the retention switch is
-- off.

with reactions as (
    select * from {{ ref('stg_reactions__turn_reactions') }}
),

stored as (
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
        'turn_reactions' as retention_policy,
        reactions.reacted_at
        >= {{ retention_cutoff_at(retention_keep_days('turn_reactions')) }} as is_retained
    from reactions
    where reactions.reacted_at <= {{ as_of_timestamp() }}
)

select * from stored
