-- Must hold: per skill, the hotspot occurrences (corrections and partials
-- with a dimension, lookback window) never exceed the corrections and
-- partials skill_correction_rates counts in the same window; every skill
-- with a hotspot has a correction rate. Returns the skills that break it.

with hotspots as (
    select * from {{ ref('skill_dimension_hotspots') }}
),

rates as (
    select * from {{ ref('skill_correction_rates') }}
),

occurrences_per_skill as (
    select
        skill_id,
        sum(occurrences) as attributed,
        sum(corrections) as attributed_corrections,
        sum(partials) as attributed_partials
    from hotspots
    group by skill_id
),

violations as (
    select
        occurrences_per_skill.skill_id,
        occurrences_per_skill.attributed,
        rates.corrections,
        rates.partials
    from occurrences_per_skill
    left join rates
        on occurrences_per_skill.skill_id = rates.skill_id
    where
        rates.skill_id is null
        or occurrences_per_skill.attributed_corrections > rates.corrections
        or occurrences_per_skill.attributed_partials > rates.partials
)

select * from violations
