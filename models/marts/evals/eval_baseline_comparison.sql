-- Each candidate agent config against its golden set's pinned baseline (seed
-- eval_baselines), over the golden sessions where both have a finished
-- replay (eval_matrix, versus_baseline not null): one row per (tenant's
-- golden set, candidate agent config). Cell by cell: how many are better
-- (the candidate passed, the baseline failed), worse, the same. Pass rates
-- over those cells, each with its 95% Wilson interval, and their difference
-- (candidate minus baseline) with Newcombe's hybrid score interval (the
-- macros metric_rates_by_period uses); is_significant_difference when the
-- interval excludes 0. The cells are paired (the same golden sessions); the
-- interval treats the two rates as independent, which makes it wider than a
-- paired one when the two configs tend to pass and fail together
-- (docs/metrics.md (part 2), "The baseline comparison").

with matrix as (
    select * from {{ ref('eval_matrix') }}
),

baseline_names as (
    select distinct
        agent_id as baseline_agent_id,
        agent_config_label as baseline_agent_config_label
    from matrix
    where is_baseline
),

compared_cells as (
    select * from matrix
    where versus_baseline is not null
),

counted as (
    select
        tenant,
        tenant_name,
        tenant_id,
        golden_set,
        agent_id,
        agent_config_name,
        agent_config_label,
        baseline_agent_id,
        count(*) as compared_cells,
        count(case when versus_baseline = 'better' then 1 end) as cells_better,
        count(case when versus_baseline = 'worse' then 1 end) as cells_worse,
        count(case when versus_baseline = 'same' then 1 end) as cells_same,
        count(case when passed then 1 end) as passes,
        count(case when baseline_passed then 1 end) as baseline_passes
    from compared_cells
    group by
        tenant, tenant_name, tenant_id, golden_set, agent_id, agent_config_name,
        agent_config_label, baseline_agent_id
),

rates as (
    select
        *,
        {{ ratio('passes', 'compared_cells') }} as candidate_rate,
        {{ wilson_low('passes', 'compared_cells') }} as candidate_low,
        {{ wilson_high('passes', 'compared_cells') }} as candidate_high,
        {{ ratio('baseline_passes', 'compared_cells') }} as baseline_rate,
        {{ wilson_low('baseline_passes', 'compared_cells') }} as baseline_low,
        {{ wilson_high('baseline_passes', 'compared_cells') }} as baseline_high
    from counted
),

differences as (
    select
        *,
        {{ newcombe_difference_low(
            'candidate_rate', 'candidate_low', 'candidate_high',
            'baseline_rate', 'baseline_low', 'baseline_high',
        ) }} as difference_low,
        {{ newcombe_difference_high(
            'candidate_rate', 'candidate_low', 'candidate_high',
            'baseline_rate', 'baseline_low', 'baseline_high',
        ) }} as difference_high
    from rates
),

published as (
    select
        differences.tenant,
        differences.tenant_name,
        differences.tenant_id,
        differences.golden_set,
        differences.agent_id,
        differences.agent_config_name,
        differences.agent_config_label,
        differences.baseline_agent_id,
        baseline_names.baseline_agent_config_label,
        differences.compared_cells,
        differences.cells_better,
        differences.cells_worse,
        differences.cells_same,
        differences.passes,
        differences.baseline_passes,
        {{ round_metric('differences.candidate_rate') }} as pass_rate,
        {{ round_metric('differences.candidate_low') }} as pass_rate_ci_low,
        {{ round_metric('differences.candidate_high') }} as pass_rate_ci_high,
        {{ round_metric('differences.baseline_rate') }} as baseline_pass_rate,
        {{ round_metric('differences.baseline_low') }} as baseline_pass_rate_ci_low,
        {{ round_metric('differences.baseline_high') }} as baseline_pass_rate_ci_high,
        {{ round_metric('differences.candidate_rate - differences.baseline_rate') }}
            as pass_rate_difference,
        {{ round_metric('differences.difference_low') }} as pass_rate_difference_ci_low,
        {{ round_metric('differences.difference_high') }} as pass_rate_difference_ci_high,
        {{ interval_excludes_zero(
            'differences.difference_low', 'differences.difference_high'
        ) }} as is_significant_difference
    from differences
    left join baseline_names
        on differences.baseline_agent_id = baseline_names.baseline_agent_id
)

select * from published
