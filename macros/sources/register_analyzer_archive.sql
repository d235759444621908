{#-
    The analyzer archive as a relation of its own, `raw.analyzer_events_archive`,
    so that source('analyzer', 'analyzer_events_archive') means the same rows
    on every engine. Runs at the start of every dbt run (on-run-start in
    dbt_project.yml).

    `feedback-analytics purge` moves analyzer events older than the
    `analyzer_events_archive` policy (90 days) out of raw.analyzer_events into
    Parquet files and logs each file in raw.purge_log (archive_uri) in the same
    transaction that deletes the rows. The archive relation reads exactly the
    logged files that still exist: a file a killed purge left behind is not
    logged (its rows are still in the raw table), and a file the 365-day policy
    emptied is gone. Staging unions it with the raw table, so archived events
    stay in every metric, and a past as_of reproduces a past report after
    purges.

    One statement per call (Spark accepts no `;`-joined statements).
-#}
{% macro register_analyzer_archive() -%}
    {{ return(adapter.dispatch('register_analyzer_archive', 'feedback_analytics')()) }}
{%- endmacro %}

{% macro default__register_analyzer_archive() -%}
    {{ exceptions.raise_compiler_error(
        "no analyzer archive registration for adapter '" ~ adapter.type() ~ "' yet: "
        ~ "write a " ~ adapter.type() ~ "__register_analyzer_archive macro (macros/sources/register_analyzer_archive.sql)"
    ) }}
{%- endmacro %}

{% macro duckdb__register_analyzer_archive() -%}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set raw_tables = run_query(
        "select table_name from information_schema.tables"
        ~ " where table_schema = 'raw' and table_catalog = current_database()"
        ~ " and table_name in ('analyzer_events', 'purge_log')"
    ).columns[0].values() -%}
    {%- if 'analyzer_events' not in raw_tables -%}
        {#- nothing loaded yet: the build itself says that raw.analyzer_events is missing -#}
        {{ return('') }}
    {%- endif -%}
    {%- set files = analyzer_archive_files() if 'purge_log' in raw_tables else [] -%}
    {%- set sql -%}
        create or replace view raw.analyzer_events_archive as
        select * from raw.analyzer_events where false
        {%- if files %}
        union all by name
        select * from read_parquet(
            [{%- for file in files %}'{{ file | replace("'", "''") }}'{{ ', ' if not loop.last }}{% endfor -%}],
            union_by_name = true
        )
        {%- endif %}
    {%- endset -%}
    {% do run_query(sql) %}
    {{ log("analyzer archive: " ~ files | length ~ " Parquet file(s) registered as raw.analyzer_events_archive") }}
    {{ return('') }}
{%- endmacro %}

{#- The archive files that committed purges logged and that still exist, in name order. -#}
{% macro analyzer_archive_files() -%}
    {%- set logged = run_query(
        "select distinct archive_uri from raw.purge_log"
        ~ " where table_name = 'analyzer_events' and archive_uri is not null and not is_dry_run"
    ).columns[0].values() | list -%}
    {%- if not logged -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set folders = [] -%}
    {%- for uri in logged -%}
        {%- set folder = uri.rsplit('/', 1)[0] -%}
        {%- if folder not in folders -%}
            {%- do folders.append(folder) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set globbed -%}
        {%- for folder in folders %}
        select file from glob('{{ (folder ~ "/*.parquet") | replace("'", "''") }}')
        {{- ' union all' if not loop.last }}
        {%- endfor %}
    {%- endset -%}
    {%- set existing = run_query(globbed).columns[0].values() | list -%}
    {%- set files = [] -%}
    {%- for uri in logged | sort if uri in existing -%}
        {%- do files.append(uri) -%}
    {%- endfor -%}
    {{ return(files) }}
{%- endmacro %}
