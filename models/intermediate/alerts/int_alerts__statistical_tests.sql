-- The tests of the enabled statistical alert rules (docs/alerts.md,
-- "Evaluation"): one row per rule, subject and evaluation day.
-- Evaluation days: the as-of day and the `alert_backfill_days` - 1 days
-- before it. On evaluation day d a rule compares its recent window
-- [d - recent_days + 1, d] with its baseline window
-- [d - recent_days - baseline_days + 1, d - recent_days] (UTC days, both
-- ends included), summing int_alerts__daily_counts: x1 / n1 against x2 / n2.
-- A subject is evaluated on a day when either window has data. Eval cells
-- (scope eval_cell) are evaluated on the as-of day only: a candidate agent
-- config's passes against its golden set's pinned baseline over the cells
-- both replayed (eval_baseline_comparison), subject `<golden set> / <agent
-- config label>` (followed by ` at <tenant>` when golden sets of that name
-- belong to several tenants); they have no windows.
-- A test is made only when both samples have at least `min_n` trials
-- (`has_enough_data`); then the pooled two-proportion z, else it is null.
-- The rates, their Wilson intervals and the Newcombe interval of the
-- difference are given whenever a sample is not empty. The one-sided
-- p-values in the bad direction and their q-values (across every test of
-- an evaluation day) are alert_evaluations'.

{%- set as_of_date = 'cast(' ~ as_of_timestamp() ~ ' as date)' %}

with rules as (
    select * from {{ ref('alert_rules') }}
    where
        enabled
        and metric in (
            'correction_rate', 'session_positive_rate', 'reaction_satisfaction', 'eval_pass_rate'
        )
),

daily_counts as (
    select * from {{ ref('int_alerts__daily_counts') }}
),

baseline_comparison as (
    select * from {{ ref('eval_baseline_comparison') }}
),

evaluation_days as (
    {{ alert_evaluation_days() }}
),

windowed_rules as (
    select
        rules.*,
        evaluation_days.evaluated_on,
        cast(
            {{ dbt.dateadd(
                'day', '1 - rules.recent_days', 'evaluation_days.evaluated_on'
            ) }} as date
        ) as recent_start_on,
        cast(
            {{ dbt.dateadd(
                'day', '1 - rules.recent_days - rules.baseline_days', 'evaluation_days.evaluated_on'
            ) }} as date
        ) as baseline_start_on
    from rules
    cross join evaluation_days
    where rules.scope <> 'eval_cell'
),

windowed_counts as (
    select
        windowed_rules.rule_id,
        daily_counts.subject,
        windowed_rules.evaluated_on,
        windowed_rules.recent_start_on,
        windowed_rules.baseline_start_on,
        coalesce(sum(case
            when daily_counts.count_date >= windowed_rules.recent_start_on
                then daily_counts.successes
        end), 0) as recent_successes,
        coalesce(sum(case
            when daily_counts.count_date >= windowed_rules.recent_start_on
                then daily_counts.trials
        end), 0) as recent_trials,
        coalesce(sum(case
            when daily_counts.count_date < windowed_rules.recent_start_on
                then daily_counts.successes
        end), 0) as baseline_successes,
        coalesce(sum(case
            when daily_counts.count_date < windowed_rules.recent_start_on
                then daily_counts.trials
        end), 0) as baseline_trials
    from windowed_rules
    inner join daily_counts
        on
            windowed_rules.metric = daily_counts.metric
            and windowed_rules.scope = daily_counts.scope
            and windowed_rules.baseline_start_on <= daily_counts.count_date
            and windowed_rules.evaluated_on >= daily_counts.count_date
    group by
        windowed_rules.rule_id,
        daily_counts.subject,
        windowed_rules.evaluated_on,
        windowed_rules.recent_start_on,
        windowed_rules.baseline_start_on
),

shared_golden_sets as (
    select golden_set
    from baseline_comparison
    group by golden_set
    having count(distinct coalesce(tenant, '')) > 1
),

cell_counts as (
    select
        rules.rule_id,
        case
            when shared_golden_sets.golden_set is null
                then {{ dbt.concat([
                    'baseline_comparison.golden_set', "' / '", 'baseline_comparison.agent_config_label',
                ]) }}
            else {{ dbt.concat([
                'baseline_comparison.golden_set', "' / '", 'baseline_comparison.agent_config_label',
                "' at '", "coalesce(baseline_comparison.tenant, 'no tenant')",
            ]) }}
        end as subject,
        {{ as_of_date }} as evaluated_on,
        cast(null as date) as recent_start_on,
        cast(null as date) as baseline_start_on,
        cast(baseline_comparison.passes as {{ dbt.type_float() }}) as recent_successes,
        baseline_comparison.compared_cells as recent_trials,
        cast(baseline_comparison.baseline_passes as {{ dbt.type_float() }}) as baseline_successes,
        baseline_comparison.compared_cells as baseline_trials
    from rules
    inner join baseline_comparison
        on rules.metric = 'eval_pass_rate'
    left join shared_golden_sets
        on baseline_comparison.golden_set = shared_golden_sets.golden_set
    where rules.scope = 'eval_cell' and baseline_comparison.compared_cells > 0
),

counts as (
    select * from windowed_counts
    union all
    select * from cell_counts
),

with_rules as (
    select
        counts.evaluated_on,
        rules.rule_id,
        counts.subject,
        rules.rule_name,
        rules.metric,
        rules.scope,
        rules.bad_direction,
        rules.severity,
        rules.min_n,
        rules.significance_level,
        rules.sustain,
        rules.threshold,
        rules.description,
        counts.recent_start_on,
        counts.baseline_start_on,
        cast(counts.recent_successes as {{ dbt.type_float() }}) as recent_successes,
        cast(counts.recent_trials as {{ dbt.type_bigint() }}) as recent_trials,
        cast(counts.baseline_successes as {{ dbt.type_float() }}) as baseline_successes,
        cast(counts.baseline_trials as {{ dbt.type_bigint() }}) as baseline_trials,
        coalesce(
            counts.recent_trials >= coalesce(rules.min_n, 1)
            and counts.baseline_trials >= coalesce(rules.min_n, 1),
            false
        ) as has_enough_data
    from counts
    inner join rules
        on counts.rule_id = rules.rule_id
),

exact as (
    select
        *,
        {{ ratio('recent_successes', 'nullif(recent_trials, 0)') }} as recent_rate_exact,
        {{ wilson_low('recent_successes', 'recent_trials') }} as recent_low_exact,
        {{ wilson_high('recent_successes', 'recent_trials') }} as recent_high_exact,
        {{ ratio('baseline_successes', 'nullif(baseline_trials, 0)') }} as baseline_rate_exact,
        {{ wilson_low('baseline_successes', 'baseline_trials') }} as baseline_low_exact,
        {{ wilson_high('baseline_successes', 'baseline_trials') }} as baseline_high_exact,
        case
            when has_enough_data
                then {{ two_proportion_z(
                    'recent_successes', 'recent_trials', 'baseline_successes', 'baseline_trials',
                ) }}
        end as z_statistic_exact
    from with_rules
),

tested as (
    select
        *,
        recent_rate_exact - baseline_rate_exact as rate_change_exact,
        {{ newcombe_difference_low(
            'recent_rate_exact', 'recent_low_exact', 'recent_high_exact',
            'baseline_rate_exact', 'baseline_low_exact', 'baseline_high_exact',
        ) }} as change_ci_low_exact,
        {{ newcombe_difference_high(
            'recent_rate_exact', 'recent_low_exact', 'recent_high_exact',
            'baseline_rate_exact', 'baseline_low_exact', 'baseline_high_exact',
        ) }} as change_ci_high_exact,
        {{ rate_with_interval('recent_successes', 'recent_trials', 'recent_rate') }},
        {{ rate_with_interval('baseline_successes', 'baseline_trials', 'baseline_rate') }}
    from exact
)

select * from tested
