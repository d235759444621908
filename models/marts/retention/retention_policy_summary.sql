-- One row per retention policy: its window as of the report instant
-- (retention_policy_windows) with the policy's description from the seed
-- retention_policies. The Retention page's table.

with windows as (
    select * from {{ ref('retention_policy_windows') }}
),

policies as (
    select * from {{ ref('retention_policies') }}
),

summary as (
    select
        windows.policy,
        windows.raw_table,
        windows.scope,
        windows.action,
        windows.keep_days,
        windows.date_column,
        windows.as_of_at,
        windows.cutoff_at,
        windows.rows_kept,
        windows.rows_outside_window,
        policies.description
    from windows
    left join policies
        on windows.policy = policies.policy
)

select * from summary
