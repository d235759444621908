-- Every rate of metric_rates_daily over a period and the period before it,
-- for every as-of day the dashboard can choose, with the statistics the
-- dashboard shows: one row per as-of day, period length (var
-- period_lengths_days), retention variant, metric, segment and tenant and
-- project filter value.
-- - The period is the N days ending on the as-of day, [as_of - N + 1,
--   as_of]; the previous period the N days before it. Window sums over a
--   dense day spine (first day of any series to the build's as-of day).
-- - is_retention_filtered: true counts only the days each series'
--   retention policy keeps (metric_rates_daily.is_retained), false
--   everything stored.
-- - tenant_filter / project_filter: a tenant key (project) or the
--   all-members key, the sum over every tenant (project). A metric that has
--   no tenant (project) has only all-members rows: the dashboard reads
--   those whatever tenant is chosen (is_tenant_scoped false).
-- - rate: successes / trials with its 95% Wilson interval; rate_change:
--   rate - previous_rate with Newcombe's hybrid score interval;
--   is_significant_change when that interval excludes 0; is_rankable when
--   both periods have at least var mover_min_trials trials (the movers'
--   ranking: significant first, then by change_magnitude).
-- Rows where both periods are empty are left out.

{%- set all_members = "'" ~ var('all_members_key') ~ "'" %}
{%- set series_key = [
    'metric', 'segment_type', 'segment', 'tenant_filter', 'project_filter', 'is_retention_filtered',
] %}

with daily as (
    select * from {{ ref('metric_rates_daily') }}
),

-- The filter values a row counts in: its own tenant and project, and the
-- all-members rollups of the dimensions its metric has.
filter_rollups as (
    select
        metric,
        segment_type,
        segment,
        segment_value,
        segment_label,
        segment_order,
        is_tenant_scoped,
        is_project_scoped,
        tenant as tenant_filter,
        project as project_filter,
        metric_date,
        is_retained,
        successes,
        trials
    from daily
    union all
    select
        metric,
        segment_type,
        segment,
        segment_value,
        segment_label,
        segment_order,
        is_tenant_scoped,
        is_project_scoped,
        tenant as tenant_filter,
        {{ all_members }} as project_filter,
        metric_date,
        is_retained,
        successes,
        trials
    from daily
    where is_project_scoped
    union all
    select
        metric,
        segment_type,
        segment,
        segment_value,
        segment_label,
        segment_order,
        is_tenant_scoped,
        is_project_scoped,
        {{ all_members }} as tenant_filter,
        project as project_filter,
        metric_date,
        is_retained,
        successes,
        trials
    from daily
    where is_tenant_scoped
    union all
    select
        metric,
        segment_type,
        segment,
        segment_value,
        segment_label,
        segment_order,
        is_tenant_scoped,
        is_project_scoped,
        {{ all_members }} as tenant_filter,
        {{ all_members }} as project_filter,
        metric_date,
        is_retained,
        successes,
        trials
    from daily
    where is_tenant_scoped and is_project_scoped
),

retention_variants as (
    select true as is_retention_filtered
    union all
    select false as is_retention_filtered
),

per_day as (
    select
        filter_rollups.metric,
        filter_rollups.segment_type,
        filter_rollups.segment,
        filter_rollups.tenant_filter,
        filter_rollups.project_filter,
        retention_variants.is_retention_filtered,
        filter_rollups.metric_date,
        min(filter_rollups.segment_value) as segment_value,
        min(filter_rollups.segment_label) as segment_label,
        min(filter_rollups.segment_order) as segment_order,
        max(case when filter_rollups.is_tenant_scoped then 1 else 0 end) = 1 as is_tenant_scoped,
        max(case when filter_rollups.is_project_scoped then 1 else 0 end) = 1 as is_project_scoped,
        sum(
            case
                when filter_rollups.is_retained or not retention_variants.is_retention_filtered
                    then filter_rollups.successes
                else 0
            end
        ) as successes,
        sum(
            case
                when filter_rollups.is_retained or not retention_variants.is_retention_filtered
                    then filter_rollups.trials
                else 0
            end
        ) as trials
    from filter_rollups
    cross join retention_variants
    group by
        filter_rollups.metric,
        filter_rollups.segment_type,
        filter_rollups.segment,
        filter_rollups.tenant_filter,
        filter_rollups.project_filter,
        retention_variants.is_retention_filtered,
        filter_rollups.metric_date
),

series as (
    select
        metric,
        segment_type,
        segment,
        tenant_filter,
        project_filter,
        is_retention_filtered,
        min(segment_value) as segment_value,
        min(segment_label) as segment_label,
        min(segment_order) as segment_order,
        max(case when is_tenant_scoped then 1 else 0 end) = 1 as is_tenant_scoped,
        max(case when is_project_scoped then 1 else 0 end) = 1 as is_project_scoped
    from per_day
    group by metric, segment_type, segment, tenant_filter, project_filter, is_retention_filtered
),

day_bounds as (
    select
        min(metric_date) as first_date,
        cast({{ as_of_timestamp() }} as date) as last_date
    from daily
),

spine as (
    {{ day_spine(
        '(select first_date from day_bounds)',
        '(select last_date from day_bounds)',
    ) }}
),

dense as (
    select
        {% for column in series_key -%}
            series.{{ column }},
        {% endfor -%}
        series.segment_value,
        series.segment_label,
        series.segment_order,
        series.is_tenant_scoped,
        series.is_project_scoped,
        spine.spine_date as as_of_date,
        coalesce(per_day.successes, 0) as successes,
        coalesce(per_day.trials, 0) as trials
    from series
    cross join spine
    left join per_day
        on
            series.metric = per_day.metric
            and series.segment_type = per_day.segment_type
            and series.segment = per_day.segment
            and series.tenant_filter = per_day.tenant_filter
            and series.project_filter = per_day.project_filter
            and series.is_retention_filtered = per_day.is_retention_filtered
            and spine.spine_date = per_day.metric_date
),

windowed as (
    select
        *
        {%- for days in var('period_lengths_days') %}
            ,
            sum(successes) over (
                partition by {{ series_key | join(', ') }} order by as_of_date
                rows between {{ days - 1 }} preceding and current row
            ) as successes_{{ days }},
            sum(trials) over (
                partition by {{ series_key | join(', ') }} order by as_of_date
                rows between {{ days - 1 }} preceding and current row
            ) as trials_{{ days }},
            coalesce(sum(successes) over (
                partition by {{ series_key | join(', ') }} order by as_of_date
                rows between {{ 2 * days - 1 }} preceding and {{ days }} preceding
            ), 0) as previous_successes_{{ days }},
            coalesce(sum(trials) over (
                partition by {{ series_key | join(', ') }} order by as_of_date
                rows between {{ 2 * days - 1 }} preceding and {{ days }} preceding
            ), 0) as previous_trials_{{ days }}
        {%- endfor %}
    from dense
),

periods as (
    {%- for days in var('period_lengths_days') %}
        {%- if not loop.first %}
            union all
        {%- endif %}
        select
            as_of_date,
            {{ days }} as period_days,
            {{ series_key | join(', ') }},
            segment_value,
            segment_label,
            segment_order,
            is_tenant_scoped,
            is_project_scoped,
            successes_{{ days }} as successes,
            cast(trials_{{ days }} as bigint) as trials,
            previous_successes_{{ days }} as previous_successes,
            cast(previous_trials_{{ days }} as bigint) as previous_trials
        from windowed
        where trials_{{ days }} > 0 or previous_trials_{{ days }} > 0
    {%- endfor %}
),

-- unrounded: the change and its interval are computed from these
intervals as (
    select
        *,
        {{ ratio('successes', 'nullif(trials, 0)') }} as unrounded_rate,
        {{ wilson_low('successes', 'trials') }} as unrounded_rate_ci_low,
        {{ wilson_high('successes', 'trials') }} as unrounded_rate_ci_high,
        {{ ratio('previous_successes', 'nullif(previous_trials, 0)') }} as unrounded_previous_rate,
        {{ wilson_low('previous_successes', 'previous_trials') }} as unrounded_previous_rate_ci_low,
        {{ wilson_high('previous_successes', 'previous_trials') }}
            as unrounded_previous_rate_ci_high
    from periods
),

changes as (
    select
        *,
        unrounded_rate - unrounded_previous_rate as unrounded_change,
        {{ newcombe_difference_low(
            'unrounded_rate', 'unrounded_rate_ci_low', 'unrounded_rate_ci_high',
            'unrounded_previous_rate', 'unrounded_previous_rate_ci_low', 'unrounded_previous_rate_ci_high',
        ) }} as unrounded_change_ci_low,
        {{ newcombe_difference_high(
            'unrounded_rate', 'unrounded_rate_ci_low', 'unrounded_rate_ci_high',
            'unrounded_previous_rate', 'unrounded_previous_rate_ci_low', 'unrounded_previous_rate_ci_high',
        ) }} as unrounded_change_ci_high
    from intervals
),

published as (
    select
        as_of_date,
        period_days,
        is_retention_filtered,
        metric,
        segment_type,
        segment,
        segment_value,
        segment_label,
        segment_order,
        tenant_filter,
        project_filter,
        is_tenant_scoped,
        is_project_scoped,
        successes,
        trials,
        {{ round_metric('unrounded_rate') }} as rate,
        {{ round_metric('unrounded_rate_ci_low') }} as rate_ci_low,
        {{ round_metric('unrounded_rate_ci_high') }} as rate_ci_high,
        previous_successes,
        previous_trials,
        {{ round_metric('unrounded_previous_rate') }} as previous_rate,
        {{ round_metric('unrounded_previous_rate_ci_low') }} as previous_rate_ci_low,
        {{ round_metric('unrounded_previous_rate_ci_high') }} as previous_rate_ci_high,
        {{ round_metric('unrounded_change') }} as rate_change,
        {{ round_metric('unrounded_change_ci_low') }} as rate_change_ci_low,
        {{ round_metric('unrounded_change_ci_high') }} as rate_change_ci_high,
        {{ interval_excludes_zero('unrounded_change_ci_low', 'unrounded_change_ci_high') }}
            as is_significant_change,
        (
            trials >= {{ var('mover_min_trials') }}
            and previous_trials >= {{ var('mover_min_trials') }}
        ) as is_rankable,
        {{ round_metric('abs(unrounded_change)') }} as change_magnitude
    from changes
)

select * from published
