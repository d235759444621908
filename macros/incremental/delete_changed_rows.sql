{#-
    The pre-hook of the incremental intermediate models (DuckDB; on Spark they
    are tables, rebuilt whole, and this renders nothing): before a build adds
    the source rows it does not hold yet, delete the held rows that no longer
    match the source, so that nothing a purge deleted or an erasure deleted or
    rewrote survives in the incremental table, and what the model computes
    from them is computed again.

    Loads only add raw rows; only `purge` and `forget` delete or rewrite them,
    and each logs when (raw.purge_log, raw.erasure_log). So the held rows are
    compared with the source only when a purge or an erasure was applied
    since the last build that added rows (the largest `held_at`); a row
    changed by hand, outside those commands, needs `build -- --full-refresh`.

    A held row matches when a source row has its `row_key` and the same values
    in every column of `columns` (compared by a hash of them, nulls included).
    Without `group_columns`, the held rows that match nothing are deleted.
    With `group_columns` (a window's partition, such as a reaction sequence),
    every held row of a group is deleted when one of the group's held rows
    matches nothing or one of its source rows is not held yet (a new row
    changes its neighbours): the model then reads the whole group again.
    Groups compare null-safely, as a window's partitions do.
-#}
{% macro delete_changed_rows(source_relation, row_key, columns, group_columns=[]) -%}
    {%- if not is_incremental() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set compare = source_changed_since_held() -%}
    {%- if not compare and not group_columns -%}
        {{ return('') }}
    {%- endif -%}
    {%- set unmatched_held -%}
        select {{ (group_columns or [row_key]) | join(', ') }}
        from {{ this }} as held
        where not exists (
            select 1 from {{ source_relation }} as source
            where source.{{ row_key }} = held.{{ row_key }}
                and hash({{ 'source.' ~ (columns | join(', source.')) }})
                = hash({{ 'held.' ~ (columns | join(', held.')) }})
        )
    {%- endset -%}
    {%- if not group_columns -%}
        delete from {{ this }}
        where {{ row_key }} in ({{ unmatched_held }})
    {%- else -%}
        delete from {{ this }} as held
        using (
            {% if compare -%}
                {{ unmatched_held }}
                union
            {% endif -%}
            select {{ group_columns | join(', ') }}
            from {{ source_relation }} as source
            where not exists (
                select 1 from {{ this }} as held
                where held.{{ row_key }} = source.{{ row_key }}
            )
        ) as changed
        where
        {%- for column in group_columns %}
            held.{{ column }} is not distinct from changed.{{ column }}{{ ' and' if not loop.last }}
        {%- endfor %}
    {%- endif -%}
{%- endmacro %}

{#-
    Whether a purge or an erasure (not a dry run) was applied at or after the
    latest `held_at` of the incremental model being built: its held rows may
    then differ from the source. Also true when the stored table has no
    `held_at` yet, or none of its rows has one (a table an older version
    built whole; the build adds the column, on_schema_change): its rows are
    then compared once. Runs one query when the hook is rendered.
-#}
{% macro source_changed_since_held() -%}
    {%- set held_columns = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
    {%- if 'held_at' not in held_columns -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set query -%}
        select count(*) from (
            select applied_at as changed_at
            from {{ source('warehouse_ops', 'purge_log') }}
            where not is_dry_run
            union all
            select requested_at as changed_at
            from {{ source('warehouse_ops', 'erasure_log') }}
            where not is_dry_run
        ) as changes
        where
            changed_at >= (select max(held_at) from {{ this }})
            or (select max(held_at) from {{ this }}) is null
    {%- endset -%}
    {{ return(run_query(query).columns[0].values()[0] > 0) }}
{%- endmacro %}
