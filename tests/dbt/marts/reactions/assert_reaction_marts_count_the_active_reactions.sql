-- Must hold: reaction_satisfaction_daily and conversation_feedback_summary
-- count exactly the rows of turn_reactions_active: per day and origin for
-- the first, in total for the second. Returns each mismatch.

with active as (
    select * from {{ ref('turn_reactions_active') }}
),

satisfaction as (
    select * from {{ ref('reaction_satisfaction_daily') }}
),

conversations as (
    select * from {{ ref('conversation_feedback_summary') }}
),

active_per_day_and_origin as (
    select
        reaction_date,
        origin,
        count(*) as reactions
    from active
    group by reaction_date, origin
),

daily_mismatches as (
    select
        'reaction_satisfaction_daily' as checked_mart,
        coalesce(
            active_per_day_and_origin.reaction_date, satisfaction.reaction_date
        ) as reaction_date,
        coalesce(active_per_day_and_origin.origin, satisfaction.origin) as origin,
        active_per_day_and_origin.reactions as expected_reactions,
        satisfaction.reactions as actual_reactions
    from active_per_day_and_origin
    full outer join satisfaction
        on
            active_per_day_and_origin.reaction_date = satisfaction.reaction_date
            and active_per_day_and_origin.origin = satisfaction.origin
    where active_per_day_and_origin.reactions is distinct from satisfaction.reactions
),

active_total as (
    select count(*) as reactions from active
),

summary_total as (
    select coalesce(sum(total), 0) as reactions from conversations
),

conversation_mismatches as (
    select
        'conversation_feedback_summary' as checked_mart,
        cast(null as date) as reaction_date,
        cast(null as {{ dbt.type_string() }}) as origin,
        active_total.reactions as expected_reactions,
        summary_total.reactions as actual_reactions
    from active_total
    cross join summary_total
    where active_total.reactions is distinct from summary_total.reactions
),

violations as (
    select * from daily_mismatches
    union all
    select * from conversation_mismatches
)

select * from violations
