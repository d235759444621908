-- Every turn reaction the warehouse knows, once (one row per rn), from its
-- two parts: the blobs (and JSONL exports: the history of every reaction ever
-- written, cleared ones included) and the platform's index (which reactions
-- are active). A reaction read from both is one reaction: its blob's fields,
-- the index's status.
--
-- active_part says which part decides whether it is active: `index` when the
-- warehouse holds an index for its tenant and project, `blobs` otherwise
-- (each user's latest reaction per turn, unless an older export marks it
-- cleared: blobs cannot tell a clear, which writes no artifact). Where the
-- index decides, a reaction counts until index_removed_at: for one read from
-- the index, the check that found its row gone; for one only the blobs hold,
-- the first check of the index after it was given, which did not find it
-- (replaced or cleared by then); before that check, and while no check
-- followed it yet, the blobs' rule decides.
--
-- Incremental on DuckDB (a table on Spark, whose Parquet tables have no
-- delete): a build adds the reactions it does not hold yet. Before that, two
-- pre-hooks delete what must be computed again: delete_changed_rows the held
-- reactions whose blob a purge or an erasure deleted or rewrote, and
-- delete_index_decided_rows every held reaction the index can decide (its
-- rn or its tenant and project in the index, or decided by the index when
-- held): index loads update their rows in place and each check moves the
-- removal of the reactions before it, so those are computed again whole each
-- build. A nightly build therefore reads the new blob reactions and the
-- indexed scopes, not the blob history, and equals a --full-refresh build.
{%- set blob_columns = [
    'reaction_rn',
    'tenant',
    'project',
    'user_id',
    'conversation_id',
    'bundle_id',
    'turn_id',
    'track_id',
    'user_type',
    'origin',
    'reaction',
    'is_clear',
    'confidence',
    'reacted_at',
    'comment_text',
    'has_legacy_tag',
] %}

{{
    config(
        incremental_strategy='append',
        on_schema_change='append_new_columns',
        pre_hook=[
            "{{ delete_changed_rows(ref('stg_reactions__turn_reactions'), 'reaction_rn', "
                ~ (blob_columns | tojson) ~ ", purged_tables=['turn_reactions'], dated_by=['reacted_at']) }}",
            "{{ delete_index_decided_rows(ref('stg_reactions__index_rows')) }}",
        ],
    )
}}

with stored_blob_reactions as (
    select * from {{ ref('stg_reactions__turn_reactions') }}
),

-- on an incremental build, those not held yet
blob_reactions as (
    select * from stored_blob_reactions
    {% if is_incremental() -%}
        where not exists (
            select 1 from {{ this }} as held
            where held.reaction_rn = stored_blob_reactions.reaction_rn
        )
    {%- endif %}
),

index_rows as (
    select * from {{ ref('stg_reactions__index_rows') }}
),

index_checks as (
    select * from {{ ref('int_reactions__index_checks') }}
),

-- one index row per rn (an rn is one blob: two rows naming it are one
-- reaction): a row still present before a removed one, then the latest
index_reactions as (
    select *
    from (
        select
            *,
            row_number() over (
                partition by reaction_rn
                order by
                    case when removed_at is null then 0 else 1 end asc, index_id desc, index_key asc
            ) as rn_copy
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
        blob_reactions.track_id,
        index_reactions.removed_at as index_removed_at,
        coalesce(blob_reactions.reaction_rn, index_reactions.reaction_rn) as reaction_rn,
        coalesce(blob_reactions.tenant, index_reactions.tenant) as tenant,
        coalesce(blob_reactions.project, index_reactions.project) as project,
        coalesce(blob_reactions.user_id, index_reactions.user_id) as user_id,
        coalesce(blob_reactions.conversation_id, index_reactions.conversation_id)
            as conversation_id,
        coalesce(blob_reactions.bundle_id, index_reactions.bundle_id) as bundle_id,
        coalesce(blob_reactions.turn_id, index_reactions.turn_id) as turn_id,
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
        index_reactions.reaction_rn is not null as is_indexed
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
),

-- the reactions only the blobs hold where the index decides, and the checks
-- of the index, on one time line per tenant and project: each reaction's
-- first check after it (a check at the same instant comes after it)
time_line as (
    select
        reaction_rn,
        tenant,
        project,
        reacted_at as happened_at,
        0 as event_order,
        cast(null as {{ dbt.type_timestamp() }}) as checked_at
    from with_part
    where active_part = 'index' and not is_indexed
    union all
    select
        cast(null as {{ dbt.type_string() }}) as reaction_rn,
        tenant,
        project,
        checked_at as happened_at,
        1 as event_order,
        checked_at
    from index_checks
),

first_check_after as (
    select
        reaction_rn,
        min(checked_at) over (
            partition by tenant, project
            order by happened_at, event_order
            rows between 1 following and unbounded following
        ) as first_check_at
    from time_line
),

with_removal as (
    select
        with_part.reaction_rn,
        with_part.tenant,
        with_part.project,
        with_part.user_id,
        with_part.conversation_id,
        with_part.bundle_id,
        with_part.turn_id,
        with_part.track_id,
        with_part.user_type,
        with_part.origin,
        with_part.reaction,
        with_part.is_clear,
        with_part.confidence,
        with_part.reacted_at,
        with_part.comment_text,
        with_part.has_legacy_tag,
        with_part.is_in_blobs,
        with_part.is_indexed,
        with_part.active_part,
        case
            when with_part.is_indexed then with_part.index_removed_at
            else first_check_after.first_check_at
        end as index_removed_at,
        {{ utc_now() }} as held_at
    from with_part
    left join first_check_after
        on with_part.reaction_rn = first_check_after.reaction_rn
)

select * from with_removal
