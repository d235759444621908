{#-
    True when the array (list) column holds `value`, false otherwise, also
    when the array itself is null: never null. `value` is a SQL expression,
    so a literal needs its quotes: array_contains('tags', "'kind:turn.log.reaction'").
-#}
{% macro array_contains(array_column, value) -%}
    {{ return(adapter.dispatch('array_contains', 'feedback_analytics')(array_column, value)) }}
{%- endmacro %}

{% macro default__array_contains(array_column, value) -%}
    coalesce(array_contains({{ array_column }}, {{ value }}), false)
{%- endmacro %}

{% macro duckdb__array_contains(array_column, value) -%}
    coalesce(list_contains({{ array_column }}, {{ value }}), false)
{%- endmacro %}
