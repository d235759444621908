{#
    Data tests on the new loads only. The test of a large model says in its
    YAML `config: {where: "new_loads_only(COLUMN)"}`, or, for a key test,
    `where: "new_loads_only(COLUMN, KEY, ...)"`; the project's
    get_where_subquery reads it when the test runs (not when dbt parses, so
    a new instant each night keeps partial parsing) and gives the test:
    - with no instant (tests_since_text() is ''), on --full-refresh and on
      Spark: the whole model, exactly as without the config;
    - otherwise the rows of the loads since that instant: COLUMN `load_id`
      keeps the rows whose load finished after it (raw.load_manifest),
      another COLUMN (`held_at` of an incremental model) the rows whose
      COLUMN is after it;
    - with KEY columns, also every row that shares its key with such a row:
      a new row duplicating the key of an old one still fails the key test.
#}
{% macro get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') or '' -%}
    {%- set scoped = modules.re.fullmatch('\\s*new_loads_only\\(([^)]*)\\)\\s*', where) -%}
    {%- if scoped -%}
        {%- set arguments = [] -%}
        {%- for argument in scoped.group(1).split(',') if argument.strip() -%}
            {%- do arguments.append(argument.strip()) -%}
        {%- endfor -%}
        {%- if arguments | length == 0 -%}
            {{ exceptions.raise_compiler_error(
                "new_loads_only() needs the column that dates a row's load"
            ) }}
        {%- endif -%}
        {%- do return(new_loads_subquery(relation, arguments[0], arguments[1:])) -%}
    {%- endif -%}
    {%- do return(adapter.dispatch('get_where_subquery', 'dbt')(relation)) -%}
{%- endmacro %}

{# The relation a test reads under new_loads_only (see above): the whole relation when the tests are full. #}
{% macro new_loads_subquery(relation, load_column, key_columns=[]) -%}
    {%- set since = tests_since_text() -%}
    {%- if since == '' -%}
        {%- do return(relation) -%}
    {%- endif -%}
    {%- set filtered -%}
        (
            select tested.* from {{ relation }} as tested
            where {{ is_new_load('tested', load_column, since) }}
            {%- if key_columns %}
                or exists (
                    select 1 from {{ relation }} as new_rows
                    where {{ is_new_load('new_rows', load_column, since) }}
                    {%- for key in key_columns %}
                        and new_rows.{{ key }} = tested.{{ key }}
                    {%- endfor %}
                )
            {%- endif %}
        ) dbt_subquery
    {%- endset -%}
    {%- do return(filtered) -%}
{%- endmacro %}

{# Whether the row `alias` came with a load after `since` (by its load_id, else by its timestamp `load_column`). #}
{% macro is_new_load(alias, load_column, since) -%}
    {%- if load_column == 'load_id' -%}
        {{ alias }}.load_id in (
            select manifest.load_id from raw.load_manifest as manifest
            where manifest.finished_at > cast('{{ since }}' as {{ dbt.type_timestamp() }})
        )
    {%- else -%}
        {{ alias }}.{{ load_column }} > cast('{{ since }}' as {{ dbt.type_timestamp() }})
    {%- endif -%}
{%- endmacro %}

{#
    The instant after which loads are new, as UTC text, from var
    tests_new_loads_since, else the environment variable FEEDBACK_TESTS_SINCE
    (read when the SQL runs, like FEEDBACK_AS_OF: `feedback-analytics build`
    and `nightly` pass the instant of the last successful build that way);
    '' (every row tested) when neither is set, on --full-refresh and on Spark.
#}
{% macro tests_since_text() -%}
    {%- if not execute or flags.FULL_REFRESH or target.type == 'spark' -%}
        {{ return('') }}
    {%- endif -%}
    {%- set value = var('tests_new_loads_since', none) -%}
    {%- if value is none or (value | string | trim) == '' -%}
        {%- set value = env_var('FEEDBACK_TESTS_SINCE', '') -%}
    {%- endif -%}
    {%- set value = value | string | trim -%}
    {%- set instant = '\\d{4}-\\d{2}-\\d{2}([ T]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?)?' -%}
    {%- if value != '' and not modules.re.fullmatch(instant, value) -%}
        {{ exceptions.raise_compiler_error(
            "tests_new_loads_since / FEEDBACK_TESTS_SINCE: expected a UTC timestamp YYYY-MM-DD HH:MM:SS, got " ~ value
        ) }}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}
