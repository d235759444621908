-- One row per raw data table: how many rows it holds and when rows last
-- landed in it, as of the build (the Warehouse page). Counted on the staging
-- views, 1:1 with the raw tables; analyzer events count the active table
-- only (not the rows purge moved to the Parquet archive), as the raw table
-- holds them. table_order is the page's order.

with analyzer_events as (
    select * from {{ ref('stg_analyzer__events') }}
    where not is_archived
),

session_feedback as (
    select * from {{ ref('stg_session_feedback__records') }}
),

turn_reactions as (
    select * from {{ ref('stg_reactions__turn_reactions') }}
),

reaction_index as (
    select * from {{ ref('stg_reactions__index_rows') }}
),

workspace_feedback as (
    select * from {{ ref('stg_workspace__feedback') }}
),

workspace_sessions as (
    select * from {{ ref('stg_workspace__sessions') }}
),

workspace_eval_runs as (
    select * from {{ ref('stg_workspace__eval_runs') }}
),

tables as (
    {%- for table in [
        'analyzer_events', 'session_feedback', 'turn_reactions',
        'workspace_feedback', 'workspace_sessions', 'workspace_eval_runs', 'reaction_index',
    ] %}
        {%- if not loop.first %}
            union all
        {%- endif %}
        select
            '{{ table }}' as raw_table,
            {{ loop.index }} as table_order,
            count(*) as row_count,
            {%- if table == 'reaction_index' %}
                count(removed_at) as removed_rows,
            {%- else %}
                cast(null as {{ dbt.type_bigint() }}) as removed_rows,
            {%- endif %}
            max(loaded_at) as last_loaded_at
        from {{ table }}
    {%- endfor %}
)

select * from tables
