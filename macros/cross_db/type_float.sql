{#-
    dbt.type_float for DuckDB: `double`. dbt's default translates the label
    "float", which DuckDB reads as a 4-byte REAL (0.7 comes back as
    0.699999988...). Every other adapter dbt supports gives a double for
    "float" (Snowflake, BigQuery FLOAT64, Postgres float8, Spark through
    dbt-spark's own DOUBLE), so confidences, scores and rates keep full
    precision here too.
-#}
{% macro duckdb__type_float() -%}
    {{ return("double") }}
{%- endmacro %}
