-- The retained_* views look their policies up by name in the seed
-- retention_policies and measure age on a fixed column of the staging model.
-- Every policy they rely on must exist with the date column the view uses,
-- or a view would silently show nothing (or the wrong window). Returns one
-- row per policy missing or measured on another column.

with retention_policies as (
    select * from {{ ref('retention_policies') }}
),

expected_policies as (
    {%- set expected = [
        ('session_feedback', 'recorded_date'),
        ('analyzer_events_archive', 'timestamp'),
        ('analyzer_events', 'timestamp'),
        ('turn_reactions', 'ts'),
        ('turn_reaction_index', 'ts'),
        ('workspace_feedback', 'created_at'),
        ('golden_sessions', 'created_at'),
        ('replay_sessions', 'created_at'),
        ('eval_runs', 'started_at'),
    ] %}
    {%- for policy, date_column in expected %}
        select
            '{{ policy }}' as policy_name,
            '{{ date_column }}' as expected_date_column
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
),

compared as (
    select
        expected_policies.policy_name,
        expected_policies.expected_date_column,
        retention_policies.date_column
    from expected_policies
    left join retention_policies
        on expected_policies.policy_name = retention_policies.policy
),

mismatched as (
    select * from compared
    where date_column is distinct from expected_date_column
)

select * from mismatched
