{#-
    dbt-spark's create_schema, with a location: each schema (Spark database)
    the project builds lands in FEEDBACK_SPARK_WAREHOUSE/<schema>.db/, so its
    tables are ordinary managed Parquet tables there (dropped with their
    files on a rebuild) whatever warehouse folder the Thrift Server was
    started with. Without FEEDBACK_SPARK_WAREHOUSE: the server's own folder.
    A database that exists already keeps its location.
-#}
{% macro spark__create_schema(relation) -%}
    {%- set spark_warehouse = env_var('FEEDBACK_SPARK_WAREHOUSE', '') -%}
    {%- call statement('create_schema') -%}
        create schema if not exists {{ relation }}
        {%- if spark_warehouse %}
        location '{{ spark_warehouse.rstrip("/") }}/{{ relation.schema }}.db'
        {%- endif %}
    {%- endcall %}
{%- endmacro %}
