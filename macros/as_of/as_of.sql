{#
    The report's reference instant, from var `as_of` (else the environment
    variable FEEDBACK_AS_OF, read only when the SQL runs: `feedback-analytics
    build` passes the instant that way, because a changed var makes dbt parse
    the whole project again, about 8 s), as a UTC timestamp:
    - null / empty: for a build of everything, the instant the dbt command
      started (run_started_at, one instant for every model); for a build of
      a selection (--select, --exclude or --selector), the as-of the
      warehouse's marts were built at (marts.build_info, see
      warehouse_as_of_text), so the models it rebuilds agree with the ones
      it leaves alone (check_selection_as_of refuses a different one);
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
    {%- set text = as_of_text() -%}
    {%- if text == '' -%}
        {{ utc_now() }}
    {%- else -%}
        cast('{{ text }}' as {{ dbt.type_timestamp() }})
    {%- endif -%}
{% endmacro %}

{#
    The as-of this run builds at, as UTC text 'YYYY-MM-DD HH:MM:SS.ffffff'
    (as_of_timestamp says which); '' while dbt parses (no instant yet).
#}
{% macro as_of_text() %}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set value = given_as_of() -%}
    {%- if value != '' -%}
        {{ return(as_of_utc_text(value)) }}
    {%- endif -%}
    {%- if is_selection() -%}
        {%- set stored = warehouse_as_of_text() -%}
        {%- if stored != '' -%}
            {{ return(stored) }}
        {%- endif -%}
    {%- endif -%}
    {%- set started = run_started_at -%}
    {%- if started.tzinfo is not none -%}
        {%- set started = started.astimezone(modules.pytz.utc).replace(tzinfo=none) -%}
    {%- endif -%}
    {{ return(started.isoformat(sep=' ', timespec='microseconds')) }}
{% endmacro %}

{# The as_of the run was given (var, else FEEDBACK_AS_OF when the SQL runs), as text; '' when none. #}
{% macro given_as_of() %}
    {%- set value = var('as_of', none) -%}
    {%- if (value is none or (value | string | trim) == '') and execute -%}
        {#- read when the SQL runs, not when dbt parses: a new instant keeps partial parsing -#}
        {%- set value = env_var('FEEDBACK_AS_OF', '') -%}
    {%- endif -%}
    {{ return('' if value is none else (value | string | trim)) }}
{% endmacro %}

{#
    Whether the command builds a selection rather than the whole project:
    some model of the project is not among dbt's selected_resources (an
    --exclude of tests only, `--exclude resource_type:test`, builds every
    model and is no selection). False while dbt parses.
#}
{% macro is_selection() %}
    {%- if not execute -%}
        {{ return(false) }}
    {%- endif -%}
    {%- for node in graph.nodes.values() -%}
        {%- if node.resource_type == 'model' and node.package_name == project_name
            and node.unique_id not in selected_resources -%}
            {{ return(true) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(false) }}
{% endmacro %}

{#
    The as-of the warehouse's marts were last built at (marts.build_info),
    as UTC text; '' when no build recorded one.
#}
{% macro warehouse_as_of_text() %}
    {%- set relation = adapter.get_relation(
        database=target.database, schema='marts', identifier='build_info'
    ) -%}
    {%- if relation is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- set as_text = 'cast(max(as_of_at) as ' ~ dbt.type_string() ~ ')' -%}
    {%- set stored_sql = 'select ' ~ as_text ~ ' from ' ~ relation -%}
    {%- set rows = run_query(stored_sql).rows -%}
    {%- if rows | length == 0 or rows[0][0] is none -%}
        {{ return('') }}
    {%- endif -%}
    {{ return(as_of_utc_text(rows[0][0] | string)) }}
{% endmacro %}

{#
    on-run-start: a build or run of a selection given an as-of other than the
    warehouse's stops before it changes anything; the models it rebuilt
    would disagree with the ones it leaves alone (and a publish would mix
    two as-ofs). Build everything to move the as-of; or, on purpose (a past
    number of some marts in a scratch copy), pass var allow_mixed_as_of: true
    and the selection builds at the given as-of while the rest keep theirs.
#}
{% macro check_selection_as_of() %}
    {%- set builds = flags.WHICH in ['build', 'run'] -%}
    {%- set allowed = var('allow_mixed_as_of', false) -%}
    {%- if execute and builds and not allowed and is_selection() and given_as_of() != '' -%}
        {%- set stored = warehouse_as_of_text() -%}
        {%- set given = as_of_utc_text(given_as_of()) -%}
        {%- if stored != '' and stored != given -%}
            {{ exceptions.raise_compiler_error(
                "the warehouse's marts are built as of " ~ stored ~ " UTC; a build of a selection keeps that"
                ~ " as-of (give none, or that one): build everything to build as of " ~ given ~ " UTC"
            ) }}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
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
