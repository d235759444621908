{#-
    dbt.safe_cast for DuckDB. dbt-duckdb ships no implementation, so
    dbt.safe_cast falls back to dbt's default__safe_cast, a plain cast that
    fails the whole query on one bad value. try_cast gives null instead, as
    safe_cast does on the adapters that implement it (Snowflake try_cast,
    BigQuery safe_cast, Spark with ANSI mode off).

    Models call the cross-database macro, never this one:
        {{ dbt.safe_cast("confidence", dbt.type_float()) }}
    (dbt looks in the root project first when it dispatches in the `dbt`
    namespace, so this macro takes over on DuckDB.)
-#}
{% macro duckdb__safe_cast(field, type) -%}
    try_cast({{ field }} as {{ type }})
{%- endmacro %}
