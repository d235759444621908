{#-
    Retention cutoffs as of the report instant (docs/metrics.md (part 2),
    "Retention"). `keep_days` is a SQL expression, normally the
    `retention_policies` seed's column. The retention views and
    `retention_policy_windows` both call these, so a view and the window
    count it reports can never disagree.

    - retention_cutoff_at: `as_of - keep_days days`; a row dated at or after
      it is kept (the "last N days" window of DESIGN.md, inclusive).
    - retention_cutoff_date: the as-of date minus keep_days, for policies
      that measure age on a date (session feedback's `recorded_date`): a row
      whose date is on or after it is kept, strictly before it is purged.
-#}
{% macro retention_cutoff_at(keep_days) -%}
    {{ dbt.dateadd('day', '-1 * (' ~ keep_days ~ ')', as_of_timestamp()) }}
{%- endmacro %}

{% macro retention_cutoff_date(keep_days) -%}
    cast({{ dbt.dateadd('day', '-1 * (' ~ keep_days ~ ')', 'cast(' ~ as_of_timestamp() ~ ' as date)') }} as date)
{%- endmacro %}
