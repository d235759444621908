-- Every feedback signal of every source on one shape (DESIGN.md, "Mart
-- contracts"): one row per signal at or before the report instant, its
-- source label mapped to the common rating (positive / negative / neutral /
-- skip) by the seed feedback_label_ratings. A label the seed does not map
-- keeps a null rating (the not_null test on rating fails the build: add the
-- label to the seed).

-- A view: a union of stored intermediate tables and a join to a small seed,
-- cheaper to read on demand than to store every signal a second time. The
-- dashboard reads feedback_signals_daily.
{{ config(materialized='view') }}

with signals as (
    select * from {{ ref('int_signals__unioned') }}
),

label_ratings as (
    select * from {{ ref('feedback_label_ratings') }}
),

rated as (
    select
        signals.signal_id,
        signals.source_system,
        signals.occurred_at,
        cast(signals.occurred_at as date) as occurred_date,
        signals.tenant,
        signals.subject_type,
        signals.subject_id,
        signals.origin,
        signals.source_label,
        label_ratings.rating,
        signals.confidence
    from signals
    left join label_ratings
        on
            signals.rating_source_system = label_ratings.source_system
            and signals.source_label = label_ratings.label
)

select * from rated
