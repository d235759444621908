{#-
    The last instant of the UTC day `day` (a SQL expression of type date):
    `day` 23:59:59.999999 as a timestamp, the end of an evaluation day
    (the same instant as_of_timestamp gives a date as_of). DuckDB adds the
    day's length less a microsecond; dbt-spark's dateadd truncates sub-second
    steps to whole seconds, so Spark counts in unix microseconds.
-#}
{% macro day_end_at(day) -%}
    {{ return(adapter.dispatch('day_end_at', 'feedback_analytics')(day)) }}
{%- endmacro %}

{% macro default__day_end_at(day) -%}
    timestamp_micros(unix_micros(cast(date_add({{ day }}, 1) as timestamp)) - 1)
{%- endmacro %}

{% macro duckdb__day_end_at(day) -%}
    (cast({{ day }} as timestamp) + interval 1 day - interval 1 microsecond)
{%- endmacro %}
