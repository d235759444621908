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
