{#-
    Seconds from `start` to `end` (two timestamps), to the millisecond, as a
    double. DuckDB counts the millisecond boundaries with dbt.datediff;
    dbt-spark's datediff in milliseconds is wrong by a factor of 1000, so
    Spark subtracts unix_millis.
-#}
{% macro seconds_between(start, end) -%}
    {{ return(adapter.dispatch('seconds_between', 'feedback_analytics')(start, end)) }}
{%- endmacro %}

{% macro default__seconds_between(start, end) -%}
    {{ dbt.datediff(start, end, 'millisecond') }} / 1000.0e0
{%- endmacro %}

{% macro spark__seconds_between(start, end) -%}
    (unix_millis({{ end }}) - unix_millis({{ start }})) / 1000.0e0
{%- endmacro %}
