{#-
    The second pre-hook of int_reactions__unified (DuckDB; renders nothing on
    a full build and on Spark, where the model is a table): delete every held
    reaction that the platform's index can decide, so the build computes it
    again from the index as it stands. Index loads update their rows in place
    (a later load marks a row removed) and each check of the index moves the
    removal of the blob-only reactions before it, so a held row is kept only
    where no index can change it: its rn is not in `index_relation`, its
    tenant and project hold no index row (compared null-safely, as the
    model's own join is), and it was not decided by the index when held (a
    purge may have removed its scope's index since).
-#}
{% macro delete_index_decided_rows(index_relation) -%}
    {%- if not is_incremental() -%}
        {{ return('') }}
    {%- endif -%}
    delete from {{ this }} as held
    where
        held.active_part = 'index'
        or held.is_indexed
        or exists (
            select 1 from {{ index_relation }} as index_rows
            where index_rows.reaction_rn = held.reaction_rn
        )
        or exists (
            select 1 from {{ index_relation }} as index_rows
            where
                index_rows.tenant is not distinct from held.tenant
                and index_rows.project is not distinct from held.project
        )
{%- endmacro %}
