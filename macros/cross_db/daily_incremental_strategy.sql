{#-
    The incremental strategy of the daily history marts (models/marts/history/),
    which recompute whole days: `delete+insert` on the day (their unique_key)
    on DuckDB; `insert_overwrite` of the day partitions (their partition_by)
    on Spark, whose Parquet tables have no merge or delete.
-#}
{% macro daily_incremental_strategy() -%}
    {{ return(adapter.dispatch('daily_incremental_strategy', 'feedback_analytics')()) }}
{%- endmacro %}

{% macro default__daily_incremental_strategy() -%}
    {{ return('delete+insert') }}
{%- endmacro %}

{% macro spark__daily_incremental_strategy() -%}
    {{ return('insert_overwrite') }}
{%- endmacro %}
