{#
    The report's reference instant, from var `as_of` (else the environment
    variable FEEDBACK_AS_OF, read only when the SQL runs: `feedback-analytics
    build` passes the instant that way, because a changed var makes dbt parse
    the whole project again, about 8 s), as a UTC timestamp:
    - null / empty: now;
    - a date (YYYY-MM-DD, or any ISO-8601 date without a time): the end of
      that day, 23:59:59.999999 UTC, so the day itself counts;
    - an ISO-8601 timestamp: with an offset (Z, +02:00, -05:00) that instant
      converted to UTC; without one, taken as UTC. Fractional seconds are kept
      to the microsecond.
    Events after it are ignored everywhere, so a past as_of reproduces a past
    report. `feedback-analytics build`, `purge` and `nightly` parse --as-of
    the same way (warehouse/as_of.py) and pass dbt the UTC instant.
#}
{% macro as_of_timestamp() %}
    {%- set value = var('as_of', none) -%}
    {%- if (value is none or (value | string | trim) == '') and execute -%}
        {#- read when the SQL runs, not when dbt parses: a new instant keeps partial parsing -#}
        {%- set value = env_var('FEEDBACK_AS_OF', '') -%}
    {%- endif -%}
    {%- if value is none or (value | string | trim) == '' -%}
        {{ utc_now() }}
    {%- else -%}
        cast('{{ as_of_utc_text(value) }}' as {{ dbt.type_timestamp() }})
    {%- endif -%}
{% endmacro %}

{#
    The UTC wall time of an as_of value, as 'YYYY-MM-DD HH:MM:SS.ffffff'.
    A YAML var may arrive as a date or datetime object (`--vars '{as_of:
    2026-11-15}'`); its text form parses the same way.
#}
{% macro as_of_utc_text(value) %}
    {%- set text = value | string | trim -%}
    {#- a date, ordinal date or week date, then optionally a time and an offset -#}
    {%- set iso_8601_pattern = '^[0-9]{4}-?(W?[0-9]{2}-?[0-9]{1,2}|[0-9]{3})'
        ~ '([T ][0-9:.,]+([Zz]|[+-][0-9:]+)?)?$' -%}
    {%- if not modules.re.match(iso_8601_pattern, text) -%}
        {{ exceptions.raise_compiler_error(
            "var as_of = '" ~ text ~ "' is not a date (YYYY-MM-DD) or an ISO-8601 timestamp"
            ~ " (e.g. 2026-11-15T12:00:00Z)"
        ) }}
    {%- endif -%}
    {%- if 'T' not in text.upper() and ' ' not in text -%}
        {{ return(modules.datetime.date.fromisoformat(text).isoformat() ~ ' 23:59:59.999999') }}
    {%- endif -%}
    {%- set parsed = modules.datetime.datetime.fromisoformat(text) -%}
    {%- if parsed.tzinfo is not none -%}
        {%- set parsed = parsed.astimezone(modules.pytz.utc).replace(tzinfo=none) -%}
    {%- endif -%}
    {{ return(parsed.isoformat(sep=' ', timespec='microseconds')) }}
{% endmacro %}
