{#
    The report's reference instant, from var `as_of` (UTC):
    - null / empty: now;
    - a date (YYYY-MM-DD): the end of that day, so the day itself counts;
    - an ISO-8601 timestamp, with or without an offset (Z, +02:00): that instant in UTC.
    Events after it are ignored everywhere, so a past as_of reproduces a past report.
#}
{% macro as_of_timestamp() %}
    {%- set value = var('as_of', none) -%}
    {%- if value is none or (value | string | trim) == '' -%}
        {{ adapter.dispatch('utc_now', 'feedback_analytics')() }}
    {%- else -%}
        {%- set text = value | string | trim -%}
        {%- if text | length == 10 -%}
            cast('{{ text }} 23:59:59.999999' as {{ dbt.type_timestamp() }})
        {%- else -%}
            {%- set parsed = modules.datetime.datetime.fromisoformat(text.replace('Z', '+00:00')) -%}
            {%- if parsed.tzinfo is not none -%}
                {%- set parsed = parsed.astimezone(modules.datetime.timezone.utc).replace(tzinfo=none) -%}
            {%- endif -%}
            cast('{{ parsed.isoformat(sep=" ") }}' as {{ dbt.type_timestamp() }})
        {%- endif -%}
    {%- endif -%}
{% endmacro %}

{% macro default__utc_now() -%}
    cast(current_timestamp as {{ dbt.type_timestamp() }})
{%- endmacro %}

{# DuckDB: now() is a timestamptz; the profile's TimeZone is UTC, so the cast yields UTC wall time. #}
{% macro duckdb__utc_now() -%}
    cast(now() as timestamp)
{%- endmacro %}
