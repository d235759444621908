-- Staging renames, casts and normalises, never filters or fans out: every
-- staging view has exactly as many rows as its raw table (analyzer events:
-- the raw table plus the purge archive). Returns one row per view whose
-- count differs.

with row_counts as (
    {%- set staged_tables = [
        ('analyzer', ['analyzer_events', 'analyzer_events_archive'], 'stg_analyzer__events'),
        ('session_feedback', 'session_feedback', 'stg_session_feedback__records'),
        ('reactions', 'turn_reactions', 'stg_reactions__turn_reactions'),
        ('reactions', 'reaction_index', 'stg_reactions__index_rows'),
        ('workspace', 'workspace_feedback', 'stg_workspace__feedback'),
        ('workspace', 'workspace_sessions', 'stg_workspace__sessions'),
        ('workspace', 'workspace_eval_runs', 'stg_workspace__eval_runs'),
    ] %}
    {%- for source_name, raw_tables, staging_model in staged_tables %}
        {%- set raw_tables = [raw_tables] if raw_tables is string else raw_tables %}
        select
            '{{ staging_model }}' as staging_model,
            (
                {%- for raw_table in raw_tables %}
                    (select count(*) from {{ source(source_name, raw_table) }})
                    {%- if not loop.last %} + {% endif %}
                {%- endfor %}
            ) as raw_rows,
            (select count(*) from {{ ref(staging_model) }}) as staging_rows
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
),

mismatched as (
    select
        staging_model,
        raw_rows,
        staging_rows
    from row_counts
    where raw_rows <> staging_rows
)

select * from mismatched
