{#-
    dbt.type_float for DuckDB: `double`. dbt's default translates the label
    "float", which DuckDB reads as a 4-byte REAL (0.7 comes back as
    0.699999988...). Every other adapter dbt supports gives a double for
    "float" (Snowflake, BigQuery FLOAT64, Postgres float8) except Spark,
    where dbt-spark passes "float" through as Spark's 4-byte FLOAT; both get
    `double` here, so confidences, scores and rates keep full precision.
-#}
{% macro duckdb__type_float() -%}
    {{ return("double") }}
{%- endmacro %}

{#- dbt.type_float on Spark: `double` too (dbt-spark passes "float" through, Spark's 4-byte FLOAT). -#}
{% macro spark__type_float() -%}
    {{ return("double") }}
{%- endmacro %}
