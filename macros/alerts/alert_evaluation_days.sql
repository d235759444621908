{#-
    The evaluation days of the alert rules, defined once for the statistical
    and the operational checks (docs/alerts.md, "Evaluation days"): the as-of
    day and the `alert_backfill_days` - 1 days before it, one row per day
    (`evaluated_on`) with the instant its windows end (`evaluated_at`).
-#}
{% macro alert_evaluation_days() -%}
    {%- set as_of_date = 'cast(' ~ as_of_timestamp() ~ ' as date)' -%}
    {%- set first_date = dbt.dateadd('day', 1 - var('alert_backfill_days'), as_of_date) -%}
    select
        cast(spine_date as date) as evaluated_on,
        {{ alert_evaluated_at('spine_date') }} as evaluated_at
    from (
        {{ day_spine('cast(' ~ first_date ~ ' as date)', as_of_date) }}
    ) as spine
{%- endmacro %}

{#-
    The instant an evaluation day's windows end: the end of the UTC day
    (day_end_at), the as-of day's at the as-of instant.
-#}
{% macro alert_evaluated_at(day) -%}
    least({{ day_end_at(day) }}, {{ as_of_timestamp() }})
{%- endmacro %}
