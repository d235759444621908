{#-
    Retention cutoffs as of the report instant (docs/metrics.md (part 2),
    "Retention"). `keep_days` is a SQL expression, normally the
    `retention_policies` seed's column. The retention views and
    `retention_policy_windows` both call these, so a view and the window
    count it reports can never disagree.

    - retention_cutoff_at: the start (00:00 UTC) of the cutoff day, the as-of
      date minus keep_days; a row at or after it is kept. Whole days, like
      `feedback-analytics purge` (operations/retention.py), which deletes
      exactly the rows dated strictly before the cutoff day: a view never
      shows a row the next purge removes, nor hides one it keeps.
    - retention_cutoff_date: the as-of date minus keep_days, for policies
      that measure age on a date (session feedback's `recorded_date`): a row
      whose date is on or after it is kept, strictly before it is purged.
-#}
{% macro retention_cutoff_at(keep_days) -%}
    cast({{ retention_cutoff_date(keep_days) }} as {{ dbt.type_timestamp() }})
{%- endmacro %}

{% macro retention_cutoff_date(keep_days) -%}
    cast({{ dbt.dateadd('day', '-1 * (' ~ keep_days ~ ')', 'cast(' ~ as_of_timestamp() ~ ' as date)') }} as date)
{%- endmacro %}

{#-
    The keep_days of one policy of the `retention_policies` seed, as a scalar
    subquery: a filter `ts >= retention_cutoff_at(retention_keep_days('x'))`
    then stays a plain comparison with a constant that DuckDB pushes into the
    table scan (skipping row groups by their min/max), where a cross join
    with the policy row would not. A policy missing from the seed gives null,
    so the view keeps nothing rather than everything.
-#}
{% macro retention_keep_days(policy) -%}
    (select retention_policies.keep_days from {{ ref('retention_policies') }} as retention_policies where retention_policies.policy = '{{ policy }}')
{%- endmacro %}
