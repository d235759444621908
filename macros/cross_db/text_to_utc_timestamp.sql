{#-
    An ISO-8601 text timestamp (as JSON payloads carry them, e.g.
    `2026-05-28T09:54:52.043724Z` or `...+02:00`) as a UTC `timestamp`
    without time zone, the type of every `*_at` column in the warehouse;
    null when the text is not a timestamp. Text without an offset is read as
    UTC (the profile sets the session time zone to UTC).

    Not dbt.safe_cast(..., dbt.type_timestamp()): DuckDB's cast of text to a
    timestamp without time zone drops the offset (`09:54+02:00` would become
    09:54 instead of 07:54 UTC).
-#}
{% macro text_to_utc_timestamp(text_expression) -%}
    {{ return(adapter.dispatch('text_to_utc_timestamp', 'feedback_analytics')(text_expression)) }}
{%- endmacro %}

{#- Spark: a timestamp is an instant; the cast honours the offset. -#}
{% macro default__text_to_utc_timestamp(text_expression) -%}
    {{ dbt.safe_cast(text_expression, dbt.type_timestamp()) }}
{%- endmacro %}

{% macro duckdb__text_to_utc_timestamp(text_expression) -%}
    timezone('UTC', try_cast({{ text_expression }} as timestamptz))
{%- endmacro %}
