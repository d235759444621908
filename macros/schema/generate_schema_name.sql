{#-
    Use a model's custom schema name as is (`staging`, `intermediate`,
    `marts`, `seeds`) instead of dbt's default `<target_schema>_<custom>`,
    so the warehouse reads raw -> staging -> intermediate -> marts and the
    dashboard can query `marts.<model>` whatever the target. Models without a
    custom schema land in the target schema (`main`).
-#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
