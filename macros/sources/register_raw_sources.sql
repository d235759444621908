{#-
    The raw sources, registered per engine at the start of every dbt run
    (on-run-start in dbt_project.yml), so that source('raw', ...) means the
    same rows on DuckDB and on Spark. One statement per call (Spark accepts
    no `;`-joined statements).

    - DuckDB: the raw tables live in the warehouse file. The run stops at once
      when one is missing (check_raw_tables), then the analyzer archive is
      registered as the view raw.analyzer_events_archive (below).
    - Spark: every raw table, and the analyzer archive, is a folder of the
      Parquet lake that `feedback-analytics build --target spark` writes
      (operations/lake.py); each is registered as the external table
      raw.<table> over its folder, its day partitions recovered.

    The analyzer archive: `feedback-analytics purge` moves analyzer events
    older than the `analyzer_events_archive` policy (90 days) out of
    raw.analyzer_events into Parquet files and logs each file in
    raw.purge_log (archive_uri) in the same transaction that deletes the rows.
    The archive relation reads exactly the logged files that still exist: a
    file a killed purge left behind is not logged (its rows are still in the
    raw table), and a file the 365-day policy emptied is gone. Staging unions
    it with the raw table, so archived events stay in every metric, and a past
    as_of reproduces a past report after purges.
-#}
{% macro register_raw_sources() -%}
    {{ return(adapter.dispatch('register_raw_sources', 'feedback_analytics')()) }}
{%- endmacro %}

{% macro default__register_raw_sources() -%}
    {{ exceptions.raise_compiler_error(
        "no raw source registration for adapter '" ~ adapter.type() ~ "': "
        ~ "write a " ~ adapter.type() ~ "__register_raw_sources macro (macros/sources/register_raw_sources.sql)"
    ) }}
{%- endmacro %}

{% macro duckdb__register_raw_sources() -%}
    {%- do check_raw_tables() -%}
    {%- do register_duckdb_analyzer_archive() -%}
    {{ return('') }}
{%- endmacro %}

{#-
    The lake's folder: the dbt var `lake_path`, else FEEDBACK_LAKE, else
    `lake` in FEEDBACK_SPARK_WAREHOUSE (what `feedback-analytics build
    --target spark` sets). Any path Spark reads: a local folder, hdfs://, s3a://.
-#}
{% macro spark__register_raw_sources() -%}
    {%- if not execute or flags.WHICH not in ('build', 'run', 'test', 'seed') -%}
        {{ return('') }}
    {%- endif -%}
    {%- set lake = var('lake_path', none) or env_var('FEEDBACK_LAKE', '') -%}
    {%- if not lake -%}
        {%- set spark_warehouse = env_var('FEEDBACK_SPARK_WAREHOUSE', '') -%}
        {%- if not spark_warehouse -%}
            {{ exceptions.raise_compiler_error(
                "no Parquet lake named: run `feedback-analytics build --target spark` (it writes the lake), "
                ~ "or set FEEDBACK_LAKE to the lake's folder"
            ) }}
        {%- endif -%}
        {%- set lake = spark_warehouse.rstrip('/') ~ '/lake' -%}
    {%- endif -%}
    {%- set tables = [] -%}
    {%- for source in graph.sources.values() if source.schema == 'raw' and source.identifier not in tables -%}
        {%- do tables.append(source.identifier) -%}
    {%- endfor -%}
    {% do run_query("create database if not exists raw") %}
    {%- for table in tables | sort -%}
        {% do run_query("drop table if exists raw." ~ table) %}
        {% do run_query(
            "create table raw." ~ table ~ " using parquet options (mergeSchema 'true')"
            ~ " location '" ~ lake.rstrip('/') ~ "/" ~ table ~ "'"
        ) %}
        {% do run_query("msck repair table raw." ~ table) %}
    {%- endfor -%}
    {{ log("lake " ~ lake ~ ": " ~ tables | length ~ " raw table(s) registered") }}
    {{ return('') }}
{%- endmacro %}

{#- DuckDB: the archive files as the view raw.analyzer_events_archive (see above). -#}
{% macro register_duckdb_analyzer_archive() -%}
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
