-- Which skill got worse on which dimension: per skill and dimension, the
-- dimension rate of the last `trend_window_days` days (recent: as_of - N <=
-- invoked_at <= as_of) against the N days before (prior: as_of - 2N <=
-- invoked_at < as_of - N), the windows of skill_correction_trends.
-- The dimension rate is the skill's corrections and partials attributed to
-- the dimension (dimension_hint) over EVERY invocation of the skill in the
-- window (acceptances and events of other dimensions included), so rates of
-- one skill's dimensions share one denominator and add up to the share of
-- its invocations that drew a dimension-tagged correction or partial. A
-- partial counts as one event here (the question is "how often", not "how
-- bad"; the weighted correction rate is skill_correction_rates').
-- One row per skill and dimension with at least one such event in either
-- window. The change (recent - prior) has Newcombe's hybrid score interval
-- (from the unrounded Wilson bounds); the pooled two-proportion z-test runs
-- only when both windows hold at least `min_invocations` invocations, and
-- the p-values of every tested cell of the build form one Benjamini-Hochberg
-- family. Undated events are in neither window.

{%- set window_days = var('trend_window_days') %}
{%- set min_invocations = var('min_invocations') %}
{%- set significance_level = var('trend_significance_level') %}
{#- The window bounds as instants; the published dates are the UTC days they
    cover: a window starting at midnight starts on that day, else on the next
    one (a date as_of ends its day, so its windows hold whole days); an
    exclusive end at midnight ends on the day before, else on its own day. #}
{%- set recent_start_at = dbt.dateadd('day', -window_days, as_of_timestamp()) %}
{%- set prior_start_at = dbt.dateadd('day', -2 * window_days, as_of_timestamp()) %}
{%- set timestamp_type = dbt.type_timestamp() %}
{%- set recent_starts_at_midnight =
    recent_start_at ~ ' = cast(cast(' ~ recent_start_at ~ ' as date) as ' ~ timestamp_type ~ ')' %}
{%- set prior_starts_at_midnight =
    prior_start_at ~ ' = cast(cast(' ~ prior_start_at ~ ' as date) as ' ~ timestamp_type ~ ')' %}

with skill_events as (
    select * from {{ ref('int_analyzer__skill_events_daily') }}
),

events_in_trend_windows as (
    select * from skill_events
    where is_in_recent_window or is_in_prior_window
),

invocations_per_skill as (
    select
        skill_id,
        cast(
            sum(case when is_in_recent_window then invocations else 0 end)
            as {{ dbt.type_bigint() }}
        ) as recent_invocations,
        cast(
            sum(case when is_in_prior_window then invocations else 0 end)
            as {{ dbt.type_bigint() }}
        ) as prior_invocations
    from events_in_trend_windows
    group by skill_id
),

events_per_dimension as (
    select
        skill_id,
        dimension,
        cast(
            sum(case when is_in_recent_window then corrections + partials else 0 end)
            as {{ dbt.type_bigint() }}
        ) as recent_events,
        cast(
            sum(case when is_in_prior_window then corrections + partials else 0 end)
            as {{ dbt.type_bigint() }}
        ) as prior_events
    from events_in_trend_windows
    where dimension is not null
    group by skill_id, dimension
    having sum(corrections + partials) > 0
),

cells as (
    select
        events_per_dimension.skill_id,
        events_per_dimension.dimension,
        invocations_per_skill.recent_invocations,
        invocations_per_skill.prior_invocations,
        events_per_dimension.recent_events,
        events_per_dimension.prior_events
    from events_per_dimension
    inner join invocations_per_skill
        on events_per_dimension.skill_id = invocations_per_skill.skill_id
),

rates as (
    select
        *,
        {{ ratio('recent_events', 'nullif(recent_invocations, 0)') }} as recent_rate_exact,
        {{ ratio('prior_events', 'nullif(prior_invocations, 0)') }} as prior_rate_exact,
        {{ wilson_low('recent_events', 'recent_invocations') }} as recent_ci_low_exact,
        {{ wilson_high('recent_events', 'recent_invocations') }} as recent_ci_high_exact,
        {{ wilson_low('prior_events', 'prior_invocations') }} as prior_ci_low_exact,
        {{ wilson_high('prior_events', 'prior_invocations') }} as prior_ci_high_exact,
        recent_invocations >= {{ min_invocations }}
        and prior_invocations >= {{ min_invocations }} as is_tested
    from cells
),

tested as (
    select
        *,
        {{ newcombe_difference_low(
            'recent_rate_exact', 'recent_ci_low_exact', 'recent_ci_high_exact',
            'prior_rate_exact', 'prior_ci_low_exact', 'prior_ci_high_exact',
        ) }} as rate_change_ci_low_exact,
        {{ newcombe_difference_high(
            'recent_rate_exact', 'recent_ci_low_exact', 'recent_ci_high_exact',
            'prior_rate_exact', 'prior_ci_low_exact', 'prior_ci_high_exact',
        ) }} as rate_change_ci_high_exact,
        case
            when is_tested
                then {{ two_sided_p_value(two_proportion_z(
                    'recent_events', 'recent_invocations', 'prior_events', 'prior_invocations'
                )) }}
        end as p_value_exact
    from rates
),

-- Benjamini-Hochberg q-values (macros/metrics/benjamini_hochberg.sql), as for
-- skill_correction_trends: the family is every skill x dimension cell of this
-- build with a p-value, ties in skill_id, dimension order.
{{ benjamini_hochberg_ctes('tested', 'skill_id asc, dimension asc') }},

published as (
    select
        skill_id,
        dimension,
        case
            when {{ recent_starts_at_midnight }} then cast({{ recent_start_at }} as date)
            else cast({{ dbt.dateadd('day', 1, recent_start_at) }} as date)
        end as recent_start,
        cast({{ as_of_timestamp() }} as date) as recent_end,
        case
            when {{ prior_starts_at_midnight }} then cast({{ prior_start_at }} as date)
            else cast({{ dbt.dateadd('day', 1, prior_start_at) }} as date)
        end as prior_start,
        case
            when {{ recent_starts_at_midnight }}
                then cast({{ dbt.dateadd('day', -1, recent_start_at) }} as date)
            else cast({{ recent_start_at }} as date)
        end as prior_end,
        recent_invocations,
        prior_invocations,
        recent_events,
        prior_events,
        {{ round_metric('recent_rate_exact') }} as recent_rate,
        {{ round_metric('prior_rate_exact') }} as prior_rate,
        {{ round_metric('recent_rate_exact - prior_rate_exact') }} as rate_change,
        {{ round_metric('rate_change_ci_low_exact') }} as rate_change_ci_low,
        {{ round_metric('rate_change_ci_high_exact') }} as rate_change_ci_high,
        {{ round_metric('p_value_exact') }} as p_value,
        {{ round_metric('q_value_exact') }} as q_value,
        -- decided on the published (rounded) q-value, as in skill_correction_trends
        coalesce(
            {{ round_metric('q_value_exact') }} <= {{ significance_level }}, false
        ) as is_significant
    from adjusted
),

classified as (
    select
        *,
        is_significant and coalesce(rate_change > 0, false) as is_significant_worsening
    from published
)

select * from classified
