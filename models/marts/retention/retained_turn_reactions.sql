-- Turn reaction artifacts (all of them, replaced and cleared ones too, as
-- the raw table holds them) the retention policy still keeps as of the
-- report instant: policy `turn_reactions` deletes reactions given before
-- as_of minus keep_days (seed retention_policies). Reactions after as_of are not
-- shown either. The rows of stored_turn_reactions that it marks
-- is_retained: the rule is written there, once.

with stored as (
    select * from {{ ref('stored_turn_reactions') }}
),

retained as (
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
        loaded_at,
        load_id,
        source_uri,
        retention_policy
    from stored
    where is_retained
)

select * from retained
