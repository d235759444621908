{#-
    Before a run, build or test: the warehouse must hold the raw tables that
    the sources name. Plain `dbt build` without FEEDBACK_DB opens (and
    creates) ./feedback.duckdb; without this check it failed deep inside with
    a Catalog Error. Now it stops at once with one line naming the file it
    used and how to point dbt at the right one. The archive relation is left
    out: `register_duckdb_analyzer_archive` creates it right after this check.
    So are the sources flagged `meta: {optional: true}` (raw.nightly_runs,
    which only a nightly or an ingest of this version creates): their staging
    model reads no rows when the table is absent.
-#}
{% macro check_raw_tables() -%}
    {%- if not execute or flags.WHICH not in ('build', 'run', 'test') -%}
        {{ return('') }}
    {%- endif -%}
    {%- set expected = [] -%}
    {%- for source in graph.sources.values() if source.schema == 'raw' and source.identifier != 'analyzer_events_archive' -%}
        {%- if not (source.config.meta or source.meta or {}).get('optional', false) -%}
            {%- do expected.append(source.identifier) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set found = run_query(
        "select table_name from information_schema.tables where table_schema = 'raw' and table_catalog = current_database()"
    ).columns[0].values() | list -%}
    {%- set missing = expected | reject('in', found) | unique | sort | list -%}
    {%- if missing -%}
        {{ exceptions.raise_compiler_error(
            "the warehouse " ~ (target.path or target.database) ~ " has no raw." ~ missing[0]
            ~ (" (nor " ~ (missing | length - 1) ~ " other raw table(s))" if missing | length > 1 else "")
            ~ ": load data into it with `feedback-analytics ingest ...`, or point dbt at your warehouse with"
            ~ " FEEDBACK_DB=/path/to/feedback.duckdb (dbt reads it through profiles.yml)"
        ) }}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
