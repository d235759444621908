{#-
    One row per UTC day from `start_date` to `end_date` (both included,
    SQL expressions of type date), in a column `spine_date`. A dense day axis
    for window sums (`rows between N - 1 preceding and current row` is then
    "the last N days").
-#}
{% macro day_spine(start_date, end_date) -%}
    {{ return(adapter.dispatch('day_spine', 'feedback_analytics')(start_date, end_date)) }}
{%- endmacro %}

{#- Spark and the default: sequence() of dates, exploded. -#}
{% macro default__day_spine(start_date, end_date) -%}
    select explode(sequence({{ start_date }}, {{ end_date }}, interval 1 day)) as spine_date
{%- endmacro %}

{% macro duckdb__day_spine(start_date, end_date) -%}
    select cast(generate_series as date) as spine_date
    from generate_series(
        cast({{ start_date }} as timestamp), cast({{ end_date }} as timestamp), interval 1 day
    )
{%- endmacro %}
