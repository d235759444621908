{#-
    The pre-hook of an incremental model that cuts incremental sources at the
    report instant (int_reactions__history; on Spark a table, and this
    renders nothing): before a build adds the source rows it does not hold
    yet, delete the held rows whose value may differ now, so that they are
    computed again:

    - the rows an incremental source of `stamped_sources` computed again
      (its held_at after this model's latest held_at: a new neighbour, a
      purge, an erasure, an index load);
    - the rows whose key no row of `key_source` has any more (purged or
      erased);
    - the rows with a `(relation, column)` of `as_of_columns` between the
      as_of of the build that last added rows (its `held_as_of`) and this
      build's, either way: the rows whose comparison with as_of (column <=
      as_of) has changed, such as a next reaction given since. A row whose
      column is after this build's as_of is not held at all when it is the
      model's own cut (reacted_at); with a later as_of it is added as new;
    - the rows computed with another value of a setting: `settings` maps a
      column of the model, which stores the number the row was computed
      with, to this build's (a var such as machine_confidence_threshold).

    Every held row when the table holds none with a held_at, or lacks one of
    those columns (a table an older version built: the build adds the
    columns, on_schema_change).
-#}
{% macro delete_rows_to_recompute_as_of(row_key, stamped_sources, key_source, as_of_columns, settings={}) -%}
    {%- if not is_incremental() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set held_columns = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
    {%- for column in ['held_at', 'held_as_of'] + (settings.keys() | list) -%}
        {%- if column | lower not in held_columns -%}
            {{ return('delete from ' ~ this) }}
        {%- endif -%}
    {%- endfor -%}
    delete from {{ this }} as held
    where
        (select max(latest.held_at) from {{ this }} as latest) is null
        {% for column, value in settings.items() -%}
            or held.{{ column }} is distinct from cast({{ value }} as {{ dbt.type_float() }})
        {% endfor -%}
        or not exists (
            select 1 from {{ key_source }} as source
            where source.{{ row_key }} = held.{{ row_key }}
        )
        or held.{{ row_key }} in (
            with last_build as (
                select
                    max(held_at) as held_at,
                    max(held_as_of) as held_as_of
                from {{ this }}
                where held_at = (select max(stamps.held_at) from {{ this }} as stamps)
            ),

            crossed as (
                select
                    held_at,
                    least(held_as_of, {{ as_of_timestamp() }}) as after_instant,
                    greatest(held_as_of, {{ as_of_timestamp() }}) as up_to_instant
                from last_build
            )

            {% for source in stamped_sources -%}
                select source.{{ row_key }}
                from {{ source }} as source
                where source.held_at > (select crossed.held_at from crossed)
                union all
            {% endfor -%}
            {% for relation, column in as_of_columns -%}
                select source.{{ row_key }}
                from {{ relation }} as source
                where
                    source.{{ column }} > (select crossed.after_instant from crossed)
                    and source.{{ column }} <= (select crossed.up_to_instant from crossed)
                {{ 'union all' if not loop.last }}
            {% endfor %}
        )
{%- endmacro %}
