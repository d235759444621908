{#-
    Reading JSON columns (workspace `metadata`, `context`, `results`).

    `path` is a dotted key path without the leading `$`, e.g.
    'eval_result.overall_accuracy'; it becomes the JSONPath `$.<path>`, which
    DuckDB and Spark (get_json_object) both understand. The default
    implementations follow Spark SQL, the adapter the project grows into
    (docs/scale-out.md); DuckDB gets its JSON extension's functions.
-#}

{#- The value at `path` as text (null when absent or JSON null). -#}
{% macro json_extract_scalar(json_column, path) -%}
    {{ return(adapter.dispatch('json_extract_scalar', 'feedback_analytics')(json_column, path)) }}
{%- endmacro %}

{% macro default__json_extract_scalar(json_column, path) -%}
    get_json_object({{ json_column }}, '$.{{ path }}')
{%- endmacro %}

{% macro duckdb__json_extract_scalar(json_column, path) -%}
    json_extract_string({{ json_column }}, '$.{{ path }}')
{%- endmacro %}

{#- The JSON fragment at `path` (an object or array stays JSON; null when absent). -#}
{% macro json_extract_fragment(json_column, path) -%}
    {{ return(adapter.dispatch('json_extract_fragment', 'feedback_analytics')(json_column, path)) }}
{%- endmacro %}

{% macro default__json_extract_fragment(json_column, path) -%}
    get_json_object({{ json_column }}, '$.{{ path }}')
{%- endmacro %}

{% macro duckdb__json_extract_fragment(json_column, path) -%}
    json_extract({{ json_column }}, '$.{{ path }}')
{%- endmacro %}

{#-
    True when the value at `path` is a JSON object, false otherwise (absent,
    null, a scalar or an array, or a null column): never null.
-#}
{% macro json_is_object(json_column, path) -%}
    {{ return(adapter.dispatch('json_is_object', 'feedback_analytics')(json_column, path)) }}
{%- endmacro %}

{% macro default__json_is_object(json_column, path) -%}
    coalesce(substr(trim(get_json_object({{ json_column }}, '$.{{ path }}')), 1, 1) = '{', false)
{%- endmacro %}

{% macro duckdb__json_is_object(json_column, path) -%}
    coalesce(json_type({{ json_column }}, '$.{{ path }}') = 'OBJECT', false)
{%- endmacro %}

{#-
    True when the value at `path` is a JSON array, false otherwise (absent,
    null, a scalar or an object, or a null column): never null. Guards
    json_array_elements_join (json_unnest.sql).
-#}
{% macro json_is_array(json_column, path) -%}
    {{ return(adapter.dispatch('json_is_array', 'feedback_analytics')(json_column, path)) }}
{%- endmacro %}

{% macro default__json_is_array(json_column, path) -%}
    coalesce(substr(trim(get_json_object({{ json_column }}, '$.{{ path }}')), 1, 1) = '[', false)
{%- endmacro %}

{% macro duckdb__json_is_array(json_column, path) -%}
    coalesce(json_type({{ json_column }}, '$.{{ path }}') = 'ARRAY', false)
{%- endmacro %}
