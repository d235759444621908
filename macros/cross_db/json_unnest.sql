{#-
    Unnesting JSON (eval results of workspace replays): one output row per
    entry of a JSON object or element of a JSON array, as a join clause that
    follows the relation in a `from`:

        from replays
        {{ json_object_entries_join('replays.eval_dimensions', 'dimension_entry', 'dimension', 'dimension_result') }}

    gives the columns `dimension_entry.dimension` (the key, text) and
    `dimension_entry.dimension_result` (the value, JSON on DuckDB, JSON text
    on Spark: read it with json_extract_scalar). A row whose JSON is null or
    empty yields no row (an inner unnest). The default implementations follow
    Spark SQL (`lateral view explode(from_json(...))`), the adapter the
    project grows into (docs/scale-out.md); DuckDB gets `json_each`.
-#}

{#- Entries of a JSON object: `<entry_alias>.<key_column>` (text), `<entry_alias>.<value_column>`. -#}
{% macro json_object_entries_join(json_column, entry_alias, key_column, value_column) -%}
    {{ return(adapter.dispatch('json_object_entries_join', 'feedback_analytics')(
        json_column, entry_alias, key_column, value_column
    )) }}
{%- endmacro %}

{% macro default__json_object_entries_join(json_column, entry_alias, key_column, value_column) -%}
    lateral view explode(from_json({{ json_column }}, 'map<string,string>'))
        {{ entry_alias }} as {{ key_column }}, {{ value_column }}
{%- endmacro %}

{#- json_each's first two columns are the key and the value; the alias list names them. -#}
{% macro duckdb__json_object_entries_join(json_column, entry_alias, key_column, value_column) -%}
    cross join json_each({{ json_column }}) as {{ entry_alias }} ({{ key_column }}, {{ value_column }})
{%- endmacro %}

{#-
    Elements of a JSON array: `<entry_alias>.<position_column>` (0-based,
    text on DuckDB, an integer on Spark: cast it) and
    `<entry_alias>.<value_column>`.
-#}
{% macro json_array_elements_join(json_column, entry_alias, position_column, value_column) -%}
    {{ return(adapter.dispatch('json_array_elements_join', 'feedback_analytics')(
        json_column, entry_alias, position_column, value_column
    )) }}
{%- endmacro %}

{% macro default__json_array_elements_join(
    json_column, entry_alias, position_column, value_column
) -%}
    lateral view posexplode(from_json({{ json_column }}, 'array<string>'))
        {{ entry_alias }} as {{ position_column }}, {{ value_column }}
{%- endmacro %}

{% macro duckdb__json_array_elements_join(
    json_column, entry_alias, position_column, value_column
) -%}
    cross join json_each({{ json_column }}) as {{ entry_alias }} ({{ position_column }}, {{ value_column }})
{%- endmacro %}
