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

    `dated_by`: the columns (coalesced, in order) that date a row as the
    purge dates its raw row (retention_policies.date_column; for an undated
    analyzer event, its load). A purge removes only rows dated before its
    cutoff day, so when only purges changed the source since the last build,
    only the held rows dated on or before the latest of their cutoff days are
    compared (a day's margin: the purge removes rows dated before the cutoff
    day, by its own cast of its own column to a date). An
    erasure, or a held table without held_at, compares every held row. The
    columns must be among `columns`: a held row matches only a source row
    with the same date.

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
    source_relation, row_key, columns, group_columns=[], source_stamp=none, purged_tables=none, dated_by=none
) -%}
    {%- if not is_incremental() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set changed = source_changed_since_held(purged_tables) -%}
    {%- set compare = changed.compare -%}
    {%- if not compare and not group_columns -%}
        {{ return('') }}
    {%- endif -%}
    {%- set cutoff = changed.cutoff if dated_by else none -%}
    {%- set unmatched_held -%}
        select {{ (group_columns or [row_key]) | join(', ') }}
        from {{ this }} as held
        where
            {% if cutoff -%}
                {{ dated_on_or_before('held', dated_by, cutoff) }} and
            {% endif -%}
            not exists (
                select 1 from {{ source_relation }} as source
                where source.{{ row_key }} = held.{{ row_key }}
                    {% if cutoff -%}
                        and {{ dated_on_or_before('source', dated_by, cutoff) }}
                    {% endif -%}
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
    What changed the source since the latest `held_at` of the incremental
    model being built: {'compare': whether its held rows may now differ from
    the source, 'cutoff': the latest cutoff day of the purges that did (a
    'YYYY-MM-DD' string), or none when every held row must be compared}.

    compare is true when an erasure, or a purge of one of `purged_tables`
    (none: any) that removed or archived rows (any purge of analyzer_events:
    see the query), not dry runs, was applied at or after that held_at; when
    the stored table has no `held_at` column yet (a table an older version
    built whole; the build adds the column, on_schema_change): its rows are
    then compared once; and when none of its rows has a held_at and such a
    purge or erasure was ever applied. cutoff is set only when purges alone,
    each with a cutoff, changed the source since a held_at the table holds;
    else none. Runs one query when the hook is rendered.
-#}
{% macro source_changed_since_held(purged_tables=none) -%}
    {%- set held_columns = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
    {%- if 'held_at' not in held_columns -%}
        {{ return({'compare': true, 'cutoff': none}) }}
    {%- endif -%}
    {%- set query -%}
        with changes as (
            -- every policy logs a row on every purge, also one that removed
            -- nothing: that changed no source. Except analyzer_events, whose
            -- archive files are rewritten before the log's transaction (a
            -- purge that died between them logs nothing): any row counts.
            select applied_at as changed_at, cutoff, false as is_erasure
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
            select requested_at as changed_at, null as cutoff, true as is_erasure
            from {{ source('warehouse_ops', 'erasure_log') }}
            where not is_dry_run
        ),

        since_held as (
            select * from changes
            where
                changed_at >= (select max(held_at) from {{ this }})
                or (select max(held_at) from {{ this }}) is null
        )

        select
            count(*) as changes,
            count(*) filter (where is_erasure or cutoff is null) as without_cutoff,
            strftime(max(cutoff), '%Y-%m-%d') as latest_cutoff,
            (select max(held_at) from {{ this }}) is null as never_held
        from since_held
    {%- endset -%}
    {%- set found = run_query(query).rows[0] -%}
    {%- set compare = found[0] > 0 -%}
    {%- set cutoff = found[2] if compare and found[1] == 0 and not found[3] else none -%}
    {{ return({'compare': compare, 'cutoff': cutoff}) }}
{%- endmacro %}

{#-
    `relation_alias`'s row is dated (its `dated_by` columns, coalesced) on or
    before the day `cutoff`: see delete_changed_rows.
-#}
{% macro dated_on_or_before(relation_alias, dated_by, cutoff) -%}
    cast(coalesce({{ relation_alias ~ '.' ~ (dated_by | join(', ' ~ relation_alias ~ '.')) }}) as date)
    <= cast('{{ cutoff }}' as date)
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
