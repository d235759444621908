-- One row per reaction row read from the platform's index (raw.reaction_index,
-- unique on index_key), removed ones too: removed_at says from when the index
-- no longer had it (a newer user reaction replaced it, or a clear removed it).
-- Enums lower-cased; a user reaction without a confidence counts as 1.0, as in
-- stg_reactions__turn_reactions.

with source as (
    select * from {{ source('reactions', 'reaction_index') }}
),

renamed as (
    select
        index_key,
        rn as reaction_rn,
        database_name,
        schema_name,
        index_id,
        tenant,
        project,
        user_id,
        conversation_id,
        bundle_id,
        turn_id,
        message_id,
        lower(trim(user_type)) as user_type,
        lower(trim(origin)) as origin,
        lower(trim(reaction)) as reaction,
        case
            when lower(trim(origin)) = 'user' then coalesce(confidence, 1.0)
            else confidence
        end as confidence,
        ts as reacted_at,
        index_ts as indexed_at,
        text as comment_text,
        {{ array_contains('tags', "'kind:turn.log.reaction'") }} as has_legacy_tag,
        _loaded_at as loaded_at,
        _removed_at as removed_at,
        _load_id as load_id,
        _removed_by_load as removed_by_load_id,
        _source_uri as source_uri
    from source
)

select * from renamed
