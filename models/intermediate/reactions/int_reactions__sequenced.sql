-- Every turn reaction (int_reactions__unified: the blobs' and the index's,
-- once each), whatever the report instant, with its
-- neighbours in its sequence: the reactions of one (conversation_id,
-- turn_id, user_id, origin), ordered by reacted_at, then rn. next_rn and
-- next_reacted_at name the reaction that follows it, previous_rn and
-- previous_reaction the one before it. int_reactions__history cuts the
-- sequences at the report instant (a next reaction after as_of does not
-- follow yet) and decides which reactions count.
--
-- Incremental on DuckDB (a table on Spark, whose Parquet tables have no
-- delete): a build adds the reactions it does not hold yet, each sequence
-- whole. Before that, the pre-hook (delete_changed_rows) deletes every held
-- sequence that gained a reaction, or lost or changed one in a purge or an
-- erasure, or whose reaction int_reactions__unified computed again with other
-- values (read from the index first, its blob later: its held_at is then
-- newer), so those sequences are read again in full: a nightly build reads
-- the sequences its new loads touched, not the history, and equals a
-- --full-refresh build of the same data.
{%- set reaction_columns = [
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
{%- set sequence_columns = ['conversation_id', 'turn_id', 'user_id', 'origin'] %}

{{
    config(
        incremental_strategy='append',
        pre_hook="{{ delete_changed_rows(ref('int_reactions__unified'), 'reaction_rn', "
            ~ (reaction_columns | tojson) ~ ", " ~ (sequence_columns | tojson) ~ ", 'held_at', "
            ~ "['turn_reactions', 'reaction_index'], ['reacted_at']) }}",
    )
}}

with reactions as (
    select * from {{ ref('int_reactions__unified') }}
),

not_yet_held as (
    select
        {{ reaction_columns | join(',\n        ') }}
    from reactions
    {% if is_incremental() -%}
        where not exists (
            select 1 from {{ this }} as held
            where held.reaction_rn = reactions.reaction_rn
        )
    {%- endif %}
),

sequenced as (
    select
        *,
        lead(reaction_rn) over sequence_order as next_rn,
        lead(reacted_at) over sequence_order as next_reacted_at,
        lag(reaction_rn) over sequence_order as previous_rn,
        lag(reaction) over sequence_order as previous_reaction,
        {{ utc_now() }} as held_at
    from not_yet_held
    window sequence_order as (
        partition by {{ sequence_columns | join(', ') }}
        order by reacted_at asc, reaction_rn asc
    )
)

select * from sequenced
