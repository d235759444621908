-- One row per reaction artifact (raw.turn_reactions, already unique on rn),
-- every one kept: replaced and cleared user reactions too (which reaction is
-- active is decided downstream). Enums lower-cased; a null user reaction is a
-- clear (the platform writes none: an older export's way of saying it), a
-- null machine reaction is a reaction without a value (counted as neutral
-- downstream); a user reaction without a confidence counts as 1.0 (users are
-- certain, upstream contract); the historical wrong tag is folded into
-- has_legacy_tag.

{%- set legacy_reaction_tag = 'kind:turn.log.reaction' %}

with source as (
    select * from {{ source('reactions', 'turn_reactions') }}
),

normalised as (
    select
        *,
        lower(trim(origin)) as origin_normalised,
        lower(trim(reaction)) as reaction_normalised,
        lower(trim(user_type)) as user_type_normalised,
        lower(trim(origin)) = 'user' and reaction is null as is_clear,
        case
            when lower(trim(origin)) = 'user' then coalesce(confidence, 1.0)
            else confidence
        end as confidence_defaulted,
        {{ array_contains('tags', "'" ~ legacy_reaction_tag ~ "'") }} as has_legacy_tag
    from source
),

renamed as (
    select
        rn as reaction_rn,
        tenant,
        project,
        user_id,
        conversation_id,
        bundle_id,
        turn_id,
        track_id,
        user_type_normalised as user_type,
        origin_normalised as origin,
        reaction_normalised as reaction,
        is_clear,
        confidence_defaulted as confidence,
        ts as reacted_at,
        text as comment_text,
        has_legacy_tag,
        _loaded_at as loaded_at,
        _load_id as load_id,
        _source_uri as source_uri
    from normalised
)

select * from renamed
