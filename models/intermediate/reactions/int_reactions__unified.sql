-- Every turn reaction the warehouse knows, once (one row per rn), from its
-- two parts: the blobs (and JSONL exports: the history of every reaction ever
-- written, cleared ones included) and the platform's index (which reactions
-- are active). A reaction read from both is one reaction: its blob's fields,
-- the index's status.
--
-- active_part says which part decides whether it is active: `index` when the
-- warehouse holds an index for its tenant and project (then it is active only
-- while its index row exists: is_indexed and not yet index_removed_at; a
-- reaction only the blobs know was replaced or cleared before any load read
-- the index), `blobs` otherwise (each user's latest reaction per turn, unless
-- an older export marks it cleared: blobs cannot tell a clear, which writes
-- no artifact).

with blob_reactions as (
    select * from {{ ref('stg_reactions__turn_reactions') }}
),

index_rows as (
    select * from {{ ref('stg_reactions__index_rows') }}
),

-- one index row per rn (an rn is one blob: two rows naming it are one reaction)
index_reactions as (
    select *
    from (
        select
            *,
            row_number() over (partition by reaction_rn order by index_key) as rn_copy
        from index_rows
    ) as numbered
    where rn_copy = 1
),

indexed_scopes as (
    select distinct
        tenant,
        project
    from index_rows
),

unified as (
    select
        coalesce(blob_reactions.reaction_rn, index_reactions.reaction_rn) as reaction_rn,
        coalesce(blob_reactions.tenant, index_reactions.tenant) as tenant,
        coalesce(blob_reactions.project, index_reactions.project) as project,
        coalesce(blob_reactions.user_id, index_reactions.user_id) as user_id,
        coalesce(blob_reactions.conversation_id, index_reactions.conversation_id) as conversation_id,
        coalesce(blob_reactions.bundle_id, index_reactions.bundle_id) as bundle_id,
        coalesce(blob_reactions.turn_id, index_reactions.turn_id) as turn_id,
        blob_reactions.track_id,
        coalesce(blob_reactions.user_type, index_reactions.user_type) as user_type,
        coalesce(blob_reactions.origin, index_reactions.origin) as origin,
        case
            when blob_reactions.reaction_rn is not null then blob_reactions.reaction
            else index_reactions.reaction
        end as reaction,
        coalesce(blob_reactions.is_clear, false) as is_clear,
        case
            when blob_reactions.reaction_rn is not null then blob_reactions.confidence
            else index_reactions.confidence
        end as confidence,
        coalesce(blob_reactions.reacted_at, index_reactions.reacted_at) as reacted_at,
        coalesce(blob_reactions.comment_text, index_reactions.comment_text) as comment_text,
        coalesce(blob_reactions.has_legacy_tag, index_reactions.has_legacy_tag) as has_legacy_tag,
        blob_reactions.reaction_rn is not null as is_in_blobs,
        index_reactions.reaction_rn is not null as is_indexed,
        index_reactions.removed_at as index_removed_at
    from blob_reactions
    full outer join index_reactions
        on blob_reactions.reaction_rn = index_reactions.reaction_rn
),

with_part as (
    select
        unified.*,
        case when indexed_scopes.tenant is not null then 'index' else 'blobs' end as active_part
    from unified
    left join indexed_scopes
        on
            unified.tenant is not distinct from indexed_scopes.tenant
            and unified.project is not distinct from indexed_scopes.project
)

select * from with_part
