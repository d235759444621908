{#-
    Rate columns of the marts: a rate with its 95% Wilson interval
    (rate_statistics.sql), rounded. See docs/metrics.md for the formulas.

    Every published rate and statistic is rounded to `metric_precision()`
    decimals: the marts are read by people and dashboards, and a fixed
    precision makes the dbt unit tests exact (no floating-point noise such as
    0.30000000000000004 in an expected row).
-#}
{% macro metric_precision() -%}
    {{ return(6) }}
{%- endmacro %}

{#- `expression` rounded to the marts' precision. -#}
{% macro round_metric(expression) -%}
    round({{ expression }}, {{ metric_precision() }})
{%- endmacro %}

{#-
    A rate `successes / n` (NULL when n = 0, never 0) and its 95% Wilson
    interval, as three select targets: `<rate_name>`, `<rate_name>_ci_low`
    and `<rate_name>_ci_high`, all rounded. `successes` may be fractional
    (analyzer partials weigh 0.5).
-#}
{% macro rate_with_interval(successes, n, rate_name) -%}
    {{ round_metric(ratio(successes, 'nullif(' ~ n ~ ', 0)')) }} as {{ rate_name }},
    {{ round_metric(wilson_low(successes, n)) }} as {{ rate_name }}_ci_low,
    {{ round_metric(wilson_high(successes, n)) }} as {{ rate_name }}_ci_high
{%- endmacro %}
