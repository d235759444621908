{#-
    The pre-hook of the incremental intermediate models (DuckDB; on Spark they
    are tables, rebuilt whole, and this renders nothing): before a build adds
    the source rows it does not hold yet, delete the held rows that no longer
    match the source, so that nothing a purge deleted or an erasure deleted or
    rewrote survives in the incremental table, and what the model computes
    from them is computed again.

    Loads only add raw rows; only `purge` and `forget` delete or rewrite them,
    and each logs when (raw.purge_log, raw.erasure_log). So the held rows are
    compared with the source only when an erasure, or a purge of one of
    `purged_tables` (the raw tables the source reads; none: any table) that
    removed rows, was applied since the last build that added rows (the
    largest `held_at`); a row changed by hand, outside those commands, needs
    `build -- --full-refresh`.

    A held row matches when a source row has its `row_key` and the same values
    in every column of `columns` (compared by a hash of them, nulls included).
    Without `group_columns`, the held rows that match nothing are deleted.
    With `group_columns` (a window's partition, such as a reaction sequence),
    every held row of a group is deleted when one of the group's held rows
    matches nothing or one of its source rows is not held yet (a new row
    changes its neighbours): the model then reads the whole group again.
    Groups compare null-safely, as a window's partitions do.

    `source_stamp` (with `group_columns`): a column of an incremental source
    that says when the source computed its row (its `held_at`). The source
    can compute a row again with other values without a purge or an erasure
    (int_reactions__unified: a reaction read from the index whose blob came
    later); such a row, stamped after this model's latest `held_at` and
    different from the held one, sends both its held group and its new group
    to be read again.
-#}
{% macro delete_changed_rows(
    source_relation, row_key, columns, group_columns=[], source_stamp=none, purged_tables=none
) -%}
    {%- if not is_incremental() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set compare = source_changed_since_held(purged_tables) -%}
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
            {% if source_stamp -%}
                {{ restamped_groups(source_relation, row_key, columns, group_columns, source_stamp) }}
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
    Whether an erasure, or a purge of one of `purged_tables` (none: any)
    that removed or archived rows (any purge of analyzer_events: see the
    query), not dry runs, was applied at or after the latest `held_at` of the
    incremental model being built: its held rows may then differ from the
    source. Also
    true when the stored table has no `held_at` column yet (a table an older
    version built whole; the build adds the column, on_schema_change): its
    rows are then compared once; and when none of its rows has a held_at and
    such a purge or erasure was ever applied. Runs one query when the hook
    is rendered.
-#}
{% macro source_changed_since_held(purged_tables=none) -%}
    {%- set held_columns = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
    {%- if 'held_at' not in held_columns -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set query -%}
        select count(*) from (
            -- every policy logs a row on every purge, also one that removed
            -- nothing: that changed no source. Except analyzer_events, whose
            -- archive files are rewritten before the log's transaction (a
            -- purge that died between them logs nothing): any row counts.
            select applied_at as changed_at
            from {{ source('warehouse_ops', 'purge_log') }}
            where
                not is_dry_run
                {%- if purged_tables is not none %}
                and table_name in ('{{ purged_tables | join("', '") }}')
                {%- endif %}
                and (
                    table_name = 'analyzer_events'
                    or rows_archived + rows_deleted + coalesce(rows_deleted_from_archive, 0) > 0
                )
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

{#-
    The groups (held and new) of the rows `source_relation` stamped after this
    model's latest held_at whose `columns` differ from the held row's: see
    delete_changed_rows.
-#}
{% macro restamped_groups(source_relation, row_key, columns, group_columns, source_stamp) -%}
    {%- for side in ['held', 'source'] %}
        select {{ side ~ '.' ~ (group_columns | join(', ' ~ side ~ '.')) }}
        from {{ this }} as held
        inner join {{ source_relation }} as source
            on source.{{ row_key }} = held.{{ row_key }}
        where
            source.{{ source_stamp }} > (select max(stamps.held_at) from {{ this }} as stamps)
            and hash({{ 'source.' ~ (columns | join(', source.')) }})
            <> hash({{ 'held.' ~ (columns | join(', held.')) }})
        {{ 'union' if not loop.last }}
    {%- endfor %}
{%- endmacro %}
