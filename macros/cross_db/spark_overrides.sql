{#-
    Overrides of two of dbt-spark's implementations of dbt's cross-database
    macros, so that they mean on Spark what they mean on DuckDB (dbt looks
    for `spark__<macro>` in the root project first).

    - listagg: dbt-spark ignores the order (collect_list, with a warning);
      Spark 4's own `listagg ... within group (order by ...)` keeps it, and
      gives NULL, not '', when every value is NULL, as DuckDB's string_agg.
    - dateadd: dbt-spark goes through whole seconds (to_unix_timestamp) and
      drops the microseconds of a timestamp (as_of is 23:59:59.999999 of its
      day); `timestampadd` keeps them.
-#}
{% macro spark__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
    {%- if limit_num -%}
        {{ exceptions.raise_compiler_error("listagg with limit_num is not implemented for Spark in this project") }}
    {%- endif -%}
    listagg({{ measure }}, {{ delimiter_text }})
    {%- if order_by_clause %} within group ({{ order_by_clause }}){% endif %}
{%- endmacro %}

{% macro spark__dateadd(datepart, interval, from_date_or_timestamp) -%}
    timestampadd({{ datepart }}, {{ interval }}, {{ from_date_or_timestamp }})
{%- endmacro %}

{#-
    Seeds on Spark: the values are written into the insert as escaped string
    literals, cast to the column's type, instead of dbt-spark's `%s`
    bindings, which its in-process (session) connection substitutes without
    quoting: a seed value with an apostrophe ("the skill's output") broke
    `--target spark_local`. The same statement works through Thrift.
-#}
{% macro spark__load_csv_rows(model, agate_table) -%}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
        {%- set sql -%}
            insert into {{ this.render() }} values
            {% for row in chunk -%}
                ({%- for col_name in agate_table.column_names -%}
                    {%- set type = column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)) -%}
                    {%- set value = row[loop.index0] -%}
                    {%- if value is none -%}
                        cast(null as {{ type }})
                    {%- else -%}
                        cast('{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}' as {{ type }})
                    {%- endif -%}
                    {{- ', ' if not loop.last }}
                {%- endfor -%})
                {{- ',' if not loop.last }}
            {% endfor %}
        {%- endset -%}
        {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
        {%- do statements.append(sql) if loop.first -%}
    {%- endfor -%}
    {{ return(statements[0]) }}
{%- endmacro %}
