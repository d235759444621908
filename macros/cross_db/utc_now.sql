{#-
    The current instant as a UTC timestamp without time zone, the type of
    every `*_at` column in the warehouse. as_of_timestamp() falls back to it
    when var `as_of` is not set.
-#}
{% macro utc_now() -%}
    {{ return(adapter.dispatch('utc_now', 'feedback_analytics')()) }}
{%- endmacro %}

{% macro default__utc_now() -%}
    cast(current_timestamp as {{ dbt.type_timestamp() }})
{%- endmacro %}

{# DuckDB: now() is a timestamptz; the profile's TimeZone is UTC, so the cast yields UTC wall time. #}
{% macro duckdb__utc_now() -%}
    cast(now() as timestamp)
{%- endmacro %}
