{#-
    The marts a Spark build wrote, for `feedback-analytics build --target
    spark` to copy into the DuckDB file the dashboard reads
    (operations/spark.py): run as `dbt run-operation spark_mart_catalog`, it
    prints one line, `spark_mart_catalog: ` and a JSON list of
    {"name", "location", "columns": [[name, Spark type], ...]}, one entry per
    model of the `marts` schema, in name order. The columns come from Spark's
    catalog, so a table with no rows (no data file) is copied with its types.
-#}
{% macro spark_mart_catalog() -%}
    {%- set marts = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.schema == 'marts' and node.config.materialized != 'ephemeral' -%}
        {%- do marts.append(node.alias or node.name) -%}
    {%- endfor -%}
    {%- set catalog = [] -%}
    {%- for name in marts | unique | sort -%}
        {%- set described = run_query('describe table extended marts.' ~ name) -%}
        {%- set entry = {'name': name, 'location': none, 'columns': []} -%}
        {%- set state = namespace(in_columns=true) -%}
        {%- for row in described.rows -%}
            {%- set column_name = (row[0] or '') | trim -%}
            {%- if column_name == '' or column_name.startswith('#') -%}
                {%- set state.in_columns = false -%}
            {%- elif state.in_columns -%}
                {%- do entry['columns'].append([column_name, row[1] | trim]) -%}
            {%- elif column_name == 'Location' -%}
                {%- do entry.update({'location': row[1] | trim}) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- do catalog.append(entry) -%}
    {%- endfor -%}
    {{ print('spark_mart_catalog: ' ~ tojson(catalog)) }}
{%- endmacro %}
