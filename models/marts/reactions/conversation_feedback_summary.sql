-- One row per conversation with at least one active reaction as of the
-- report instant: the feedback counts of the conversations-in-period report
-- (by origin and by reaction, active reactions only) and when the first and
-- the last of those reactions were given.

with active as (
    select * from {{ ref('int_reactions__active') }}
),

counts_per_conversation as (
    select
        tenant,
        project,
        conversation_id,
        max(reacted_at) as last_activity_at,
        count(*) as total,
        -- `user` and `machine` are the report's names (not reserved in DuckDB or Spark)
        count(case when origin = 'user' then 1 end) as user,  -- noqa: RF04
        count(case when origin = 'machine' then 1 end) as machine,
        count(case when reaction = 'ok' then 1 end) as ok,
        count(case when reaction = 'not_ok' then 1 end) as not_ok,
        count(case when reaction = 'neutral' then 1 end) as neutral,
        min(reacted_at) as first_activity_at,
        count(distinct turn_id) as turns_with_feedback
    from active
    group by tenant, project, conversation_id
)

-- Stored by last activity (noqa: sorted on purpose): the dashboard lists the
-- conversations of a period and reads only the row groups of that period.
select * from counts_per_conversation  -- noqa: CV13
order by last_activity_at, tenant, project, conversation_id
