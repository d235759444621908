-- Every turn reaction given up to the report instant (reacted_at <= as_of),
-- with whether it counts. Which part decides is the reaction's active_part
-- (int_reactions__unified):
--
-- - `index` (the warehouse holds the platform's index for its tenant and
--   project): a reaction is active until index_removed_at (the check of the
--   index that found its row gone, or, for one only the blobs hold, the first
--   check after it, which did not find it); of a user's reactions on a turn
--   only the latest by as_of counts, so a replacement ends the older one at
--   the newer one's instant (the check that found the older row gone came
--   later).
-- - `blobs`: a user has one active reaction per turn, the latest of their
--   reactions on (conversation_id, turn_id, user_id), unless it is a clear
--   (a null user reaction, as older exports write one), which removes it.
--
-- Either way machine reactions are additive, each active when its confidence
-- reaches `machine_confidence_threshold`, and a machine reaction without a
-- value counts as neutral (counted_reaction), as the platform's own
-- conversations-in-period report counts it. Each earlier user reaction was
-- replaced by the next (replaced_by_rn); reactions at the same instant are
-- ordered by their rn.
--
-- The order comes from int_reactions__sequenced (every reaction with its
-- neighbours): a reaction's next one follows it only when it was given by
-- as_of too (every later one then is after as_of as well), and its previous
-- one always was. Fields and status come from int_reactions__unified, so a
-- reaction the index later removed is current here. Stored (dbt_project.yml):
-- about thirty data tests and six models read it, directly or through
-- int_reactions__active and turn_reactions_active.
--
-- Incremental on DuckDB (a table on Spark, whose Parquet tables have no
-- delete): a build adds the reactions given by as_of that it does not hold.
-- Before that, the pre-hook (delete_rows_to_recompute_as_of) deletes the held
-- reactions whose row may differ now: those int_reactions__unified or
-- int_reactions__sequenced computed again since (their held_at is newer),
-- those gone from the sequences, and those whose reacted_at, next_reacted_at
-- or index_removed_at lies between the as_of of the build that last added
-- rows (held_as_of) and this build's, the three instants the model compares
-- with as_of, and those computed with another machine_confidence_threshold
-- (the var's value each row was computed with). A nightly build therefore
-- reads what the new loads and the night's move of as_of changed, and the
-- reactions of scopes with an index (int_reactions__unified computes them
-- again each build), not the blob history; it equals a --full-refresh build.

{{
    config(
        incremental_strategy='append',
        on_schema_change='append_new_columns',
        pre_hook="{{ delete_rows_to_recompute_as_of('reaction_rn', "
            ~ "[ref('int_reactions__unified'), ref('int_reactions__sequenced')], "
            ~ "ref('int_reactions__sequenced'), "
            ~ "[(ref('int_reactions__unified'), 'reacted_at'), (ref('int_reactions__unified'), 'index_removed_at'), "
            ~ "(ref('int_reactions__sequenced'), 'next_reacted_at')], "
            ~ "{'machine_confidence_threshold': var('machine_confidence_threshold')}) }}",
    )
}}

with stored_sequenced as (
    select * from {{ ref('int_reactions__sequenced') }}
),

-- on an incremental build, the reactions not held (the pre-hook deleted those to compute again)
sequenced as (
    select * from stored_sequenced
    {% if is_incremental() -%}
        where not exists (
            select 1 from {{ this }} as held
            where held.reaction_rn = stored_sequenced.reaction_rn
        )
    {%- endif %}
),

unified as (
    select * from {{ ref('int_reactions__unified') }}
),

reacted_by_as_of as (
    select
        unified.reaction_rn,
        unified.tenant,
        unified.project,
        unified.user_id,
        unified.conversation_id,
        unified.bundle_id,
        unified.turn_id,
        unified.track_id,
        unified.user_type,
        unified.origin,
        unified.reaction,
        unified.is_clear,
        unified.confidence,
        unified.reacted_at,
        unified.comment_text,
        unified.has_legacy_tag,
        unified.active_part,
        unified.is_indexed,
        unified.index_removed_at,
        unified.origin = 'user' as is_user_reaction,
        sequenced.previous_rn,
        sequenced.previous_reaction,
        case
            when sequenced.next_reacted_at <= {{ as_of_timestamp() }} then sequenced.next_rn
        end as next_rn_by_as_of
    from sequenced
    inner join unified
        on sequenced.reaction_rn = unified.reaction_rn
    where unified.reacted_at <= {{ as_of_timestamp() }}
),

user_sequence as (
    select
        *,
        is_user_reaction and next_rn_by_as_of is null as is_latest_user_reaction_for_turn,
        case when is_user_reaction then next_rn_by_as_of end as replaced_by_rn,
        case when is_user_reaction then previous_rn end as previous_user_rn,
        case when is_user_reaction then previous_reaction end as previous_user_reaction,
        coalesce(index_removed_at <= {{ as_of_timestamp() }}, false) as is_removed_from_index,
        coalesce(confidence >= {{ var('machine_confidence_threshold') }}, false) as is_confident
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
        active_part,
        is_indexed,
        is_removed_from_index,
        is_latest_user_reaction_for_turn,
        replaced_by_rn,
        previous_user_rn,
        previous_user_reaction,
        -- what the counts use: a machine reaction without a value is neutral
        coalesce(reaction, 'neutral') as counted_reaction,
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
            when active_part = 'index' and is_removed_from_index then false
            when is_user_reaction then is_latest_user_reaction_for_turn
            else is_confident
        end as is_active,
        cast(
            {{ var('machine_confidence_threshold') }} as {{ dbt.type_float() }}
        ) as machine_confidence_threshold,
        {{ utc_now() }} as held_at,
        {{ as_of_timestamp() }} as held_as_of
    from user_sequence
)

select * from classified
