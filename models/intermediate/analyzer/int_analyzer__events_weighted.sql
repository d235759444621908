-- The analyzer events as of the report instant with their correction weight
-- from the seed analyzer_outcome_weights (correction 1, partial 0.5,
-- acceptance 0): the numerator of every correction rate is the sum of these
-- weights.
-- An undated event (invoked_at null) is here too: every windowed metric
-- leaves it out, skill_correction_rates counts it apart.

with events as (
    select * from {{ ref('int_analyzer__events_as_of') }}
),

outcome_weights as (
    select * from {{ ref('analyzer_outcome_weights') }}
),

weighted as (
    select
        events.event_id,
        events.invoked_at,
        events.session_id,
        events.skill_id,
        events.outcome,
        events.correction_type,
        events.dimension_hint,
        outcome_weights.weight as correction_weight,
        events.outcome = 'correction' as is_correction,
        events.outcome = 'partial' as is_partial,
        events.outcome = 'acceptance' as is_acceptance
    from events
    left join outcome_weights
        on events.outcome = outcome_weights.outcome
)

select * from weighted
