-- Every evaluation of every enabled alert rule: one row per rule, subject and
-- evaluation day (docs/alerts.md, "Evaluation"). Each build evaluates the
-- as-of day and the `alert_backfill_days` - 1 days before it
-- (int_alerts__statistical_tests) and replaces those days here; older
-- evaluation days are kept as they were (incremental on the day, never
-- full-refreshed, like the history rollups), so a purge or a past as_of
-- build loses none. The operational rules' checks
-- (int_alerts__operational_checks) are unioned in, without statistics.
-- q-values: Benjamini-Hochberg over every statistical
-- test of the evaluation day, every rule and subject together. `breach`
-- when both samples have at least `min_n` and q <= significance_level (the
-- published, rounded q), `insufficient_data` when a sample is smaller,
-- else `clear`.
{{
    config(
        incremental_strategy=daily_incremental_strategy(),
        unique_key='evaluated_on',
        partition_by=['evaluated_on'] if target.type == 'spark' else none,
        full_refresh=false,
    )
}}

{#- the columns both kinds of evaluation have, in this order -#}
{%- set evaluation_columns = [
    'evaluated_on',
    'evaluated_at',
    'rule_id',
    'rule_name',
    'metric',
    'scope',
    'subject',
    'bad_direction',
    'severity',
    'value',
    'baseline_value',
    'value_change',
    'change_ci_low',
    'change_ci_high',
    'n',
    'baseline_n',
    'z_statistic',
    'p_value',
    'q_value',
    'threshold',
    'significance_level',
    'sustain',
    'evaluation',
    'recent_start_on',
    'baseline_start_on',
] %}

with statistical_tests as (
    select * from {{ ref('int_alerts__statistical_tests') }}
),

-- one-sided in the bad direction: Q(z) for `up`, Q(-z) for `down`
tested as (
    select
        *,
        {{ one_sided_p_value('z_statistic_exact', 'bad_direction') }} as p_value_exact
    from statistical_tests
),

{{ benjamini_hochberg_ctes(
    'tested', 'rule_id asc, subject asc', partition_by='evaluated_on',
) }},

statistical as (
    select
        evaluated_on,
        {{ alert_evaluated_at('evaluated_on') }} as evaluated_at,
        rule_id,
        rule_name,
        metric,
        scope,
        subject,
        bad_direction,
        severity,
        recent_rate as value,  -- noqa: RF04
        baseline_rate as baseline_value,
        {{ round_metric('rate_change_exact') }} as value_change,
        {{ round_metric('change_ci_low_exact') }} as change_ci_low,
        {{ round_metric('change_ci_high_exact') }} as change_ci_high,
        recent_trials as n,
        baseline_trials as baseline_n,
        {{ round_metric('z_statistic_exact') }} as z_statistic,
        {{ round_metric('p_value_exact') }} as p_value,
        {{ round_metric('q_value_exact') }} as q_value,
        threshold,
        significance_level,
        sustain,
        case
            when not has_enough_data then 'insufficient_data'
            when {{ round_metric('q_value_exact') }} <= significance_level then 'breach'
            else 'clear'
        end as evaluation,
        recent_start_on,
        baseline_start_on
    from adjusted
),

-- the operational rules (source_silent, nightly_failed, quarantine_share):
-- the same columns, without statistics (q_value null)
operational_checks as (
    select * from {{ ref('int_alerts__operational_checks') }}
),

evaluations as (
    select {{ evaluation_columns | join(', ') }}  -- noqa: RF04
    from statistical
    union all
    select {{ evaluation_columns | join(', ') }}  -- noqa: RF04
    from operational_checks
)

select
    cast(evaluated_on as date) as evaluated_on,
    cast(evaluated_at as {{ dbt.type_timestamp() }}) as evaluated_at,
    cast(rule_id as {{ dbt.type_string() }}) as rule_id,
    cast(rule_name as {{ dbt.type_string() }}) as rule_name,
    cast(metric as {{ dbt.type_string() }}) as metric,
    cast(scope as {{ dbt.type_string() }}) as scope,
    cast(subject as {{ dbt.type_string() }}) as subject,
    cast(bad_direction as {{ dbt.type_string() }}) as bad_direction,
    cast(severity as {{ dbt.type_string() }}) as severity,
    cast(value as {{ dbt.type_float() }}) as value,  -- noqa: RF04
    cast(baseline_value as {{ dbt.type_float() }}) as baseline_value,
    cast(value_change as {{ dbt.type_float() }}) as value_change,
    cast(change_ci_low as {{ dbt.type_float() }}) as change_ci_low,
    cast(change_ci_high as {{ dbt.type_float() }}) as change_ci_high,
    cast(n as {{ dbt.type_bigint() }}) as n,
    cast(baseline_n as {{ dbt.type_bigint() }}) as baseline_n,
    cast(z_statistic as {{ dbt.type_float() }}) as z_statistic,
    cast(p_value as {{ dbt.type_float() }}) as p_value,
    cast(q_value as {{ dbt.type_float() }}) as q_value,
    cast(threshold as {{ dbt.type_float() }}) as threshold,
    cast(significance_level as {{ dbt.type_float() }}) as significance_level,
    cast(sustain as {{ dbt.type_int() }}) as sustain,
    cast(evaluation as {{ dbt.type_string() }}) as evaluation,
    evaluation = 'breach' as is_breach,
    cast(recent_start_on as date) as recent_start_on,
    cast(baseline_start_on as date) as baseline_start_on,
    {{ as_of_timestamp() }} as computed_as_of
from evaluations
