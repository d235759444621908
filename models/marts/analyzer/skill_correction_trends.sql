-- Correction-rate trend per skill: the last `trend_window_days` days (recent:
-- as_of - N <= invoked_at <= as_of) against the N days before them (prior:
-- as_of - 2N <= invoked_at < as_of - N). trend = recent_rate - prior_rate;
-- direction is `insufficient_data` when either window holds fewer than
-- `min_invocations` events, else `worsening` above +0.05, `improving` below
-- -0.05 and `stable` in between. An empty window has a NULL rate, never 0.
-- Undated events (no invocation time) are in neither window; a skill with
-- only undated events has a row with two empty windows.
-- The two-proportion z-test (pooled) compares the weighted correction counts;
-- one test per skill, so the p-values of this build are adjusted for false
-- discoveries (Benjamini-Hochberg q-values) and is_significant reads the q-value.

{%- set window_days = var('trend_window_days') %}
{%- set min_invocations = var('min_invocations') %}
{#- Half-width of the `stable` band and the significance level of the q-values:
    vars in dbt_project.yml (the defaults here are the reference analyzer's). #}
{%- set stable_band = var('trend_stable_band') %}
{%- set significance_level = var('trend_significance_level') %}

with skill_events as (
    select * from {{ ref('int_analyzer__skill_events_daily') }}
),

skills as (
    select distinct skill_id
    from skill_events
),

counts_per_skill as (
    select
        skill_id,
        cast(
            sum(case when is_in_recent_window then invocations else 0 end)
            as {{ dbt.type_bigint() }}
        ) as recent_sample,
        sum(case when is_in_recent_window then weighted_corrections else 0 end)
            as recent_weighted_corrections,
        cast(
            sum(case when is_in_prior_window then invocations else 0 end)
            as {{ dbt.type_bigint() }}
        ) as prior_sample,
        sum(case when is_in_prior_window then weighted_corrections else 0 end)
            as prior_weighted_corrections
    from skill_events
    where is_in_recent_window or is_in_prior_window
    group by skill_id
),

counts_for_every_skill as (
    select
        skills.skill_id,
        coalesce(counts_per_skill.recent_sample, 0) as recent_sample,
        coalesce(counts_per_skill.recent_weighted_corrections, 0) as recent_weighted_corrections,
        coalesce(counts_per_skill.prior_sample, 0) as prior_sample,
        coalesce(counts_per_skill.prior_weighted_corrections, 0) as prior_weighted_corrections
    from skills
    left join counts_per_skill
        on skills.skill_id = counts_per_skill.skill_id
),

rates as (
    select
        *,
        {{ rate_with_interval('recent_weighted_corrections', 'recent_sample', 'recent_rate') }},
        {{ rate_with_interval('prior_weighted_corrections', 'prior_sample', 'prior_rate') }},
        {{ two_proportion_z(
            'recent_weighted_corrections', 'recent_sample',
            'prior_weighted_corrections', 'prior_sample'
        ) }} as z_statistic_exact
    from counts_for_every_skill
),

tested as (
    select
        *,
        {{ round_metric('recent_rate - prior_rate') }} as trend,
        {{ two_sided_p_value('z_statistic_exact') }} as p_value_exact
    from rates
),

-- Benjamini-Hochberg q-values (macros/metrics/benjamini_hochberg.sql): the
-- family is every skill of this build with a p-value, ties in skill_id order.
{{ benjamini_hochberg_ctes('tested', 'skill_id asc') }},

classified as (
    select
        skill_id,
        recent_rate,
        prior_rate,
        recent_sample,
        prior_sample,
        trend,
        case
            when
                recent_sample < {{ min_invocations }}
                or prior_sample < {{ min_invocations }}
                then 'insufficient_data'
            when trend > {{ stable_band }} then 'worsening'
            when trend < -{{ stable_band }} then 'improving'
            else 'stable'
        end as direction,
        recent_weighted_corrections,
        prior_weighted_corrections,
        recent_rate_ci_low,
        recent_rate_ci_high,
        prior_rate_ci_low,
        prior_rate_ci_high,
        {{ round_metric('z_statistic_exact') }} as z_statistic,
        {{ round_metric('p_value_exact') }} as p_value,
        {{ round_metric('q_value_exact') }} as q_value,
        -- decided on the published (rounded) q-value, as directions are on the rounded trend
        coalesce(
            {{ round_metric('q_value_exact') }} <= {{ significance_level }}, false
        ) as is_significant,
        {{ window_days }} as trend_window_days
    from adjusted
)

select * from classified
