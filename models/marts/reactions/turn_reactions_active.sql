-- One row per active turn reaction as of the report instant (the reactions
-- the conversations-in-period report returns as feedback items), each with
-- its artifact resource name `rn`, which every report row must carry.

-- A view: a filter on int_reactions__history (a table, the same rows plus
-- the replaced and cleared ones), cheaper to read than to store again.
{{ config(materialized='view') }}

with active as (
    select * from {{ ref('int_reactions__active') }}
),

report_rows as (
    select
        tenant,
        project,
        conversation_id,
        turn_id,
        origin,
        reaction,
        confidence,
        reacted_at,
        reaction_rn as rn,
        user_id,
        comment_text,
        bundle_id,
        track_id,
        user_type,
        cast(reacted_at as date) as reaction_date
    from active
)

select * from report_rows
