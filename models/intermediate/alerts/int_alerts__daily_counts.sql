-- The daily successes and trials the statistical alert rules test: one row
-- per metric, scope, subject and UTC day with data (a day with none has no
-- row and adds nothing to a window).
-- - correction_rate: weighted corrections / invocations of the analyzer
--   events as of the report instant (int_analyzer__skill_events_daily):
--   scope `all` (every skill), `skill` (subject the skill id) and
--   `skill_dimension` (subject `<skill id> / <dimension>`). An event without
--   a dimension hint counts for its skill and for `all`, but has no
--   skill_dimension subject. Undated events belong to no day.
-- - session_positive_rate, reaction_satisfaction, eval_pass_rate: the daily
--   counts of metric_rates_daily's `all` segment: scope `all` sums every
--   tenant (and project), scope `tenant` one row per tenant key (the metrics
--   without a tenant, session_positive_rate, have no tenant subject; a row
--   without a tenant counts in `all` only). Every stored day counts,
--   retained or not (is_retained): the nightly evaluates what is there.

{%- set all_members = "'" ~ var('all_members_key') ~ "'" %}

with skill_events as (
    select * from {{ ref('int_analyzer__skill_events_daily') }}
    where invoked_date is not null
),

metric_rates as (
    select * from {{ ref('metric_rates_daily') }}
    where
        segment_type = 'all'
        and metric in ('session_positive_rate', 'reaction_satisfaction', 'eval_pass_rate')
),

correction_counts as (
    select
        'correction_rate' as metric,
        'all' as scope,
        'all' as subject,
        invoked_date as count_date,
        sum(weighted_corrections) as successes,
        sum(invocations) as trials
    from skill_events
    group by invoked_date
    union all
    select
        'correction_rate' as metric,
        'skill' as scope,
        skill_id as subject,
        invoked_date as count_date,
        sum(weighted_corrections) as successes,
        sum(invocations) as trials
    from skill_events
    group by skill_id, invoked_date
    union all
    select
        'correction_rate' as metric,
        'skill_dimension' as scope,
        {{ dbt.concat(['skill_id', "' / '", 'dimension']) }} as subject,
        invoked_date as count_date,
        sum(weighted_corrections) as successes,
        sum(invocations) as trials
    from skill_events
    where dimension is not null
    group by skill_id, dimension, invoked_date
),

rate_counts as (
    select
        metric,
        'all' as scope,
        'all' as subject,
        metric_date as count_date,
        sum(successes) as successes,
        sum(trials) as trials
    from metric_rates
    group by metric, metric_date
    union all
    select
        metric,
        'tenant' as scope,
        tenant as subject,
        metric_date as count_date,
        sum(successes) as successes,
        sum(trials) as trials
    from metric_rates
    where is_tenant_scoped and tenant is not null and tenant <> {{ all_members }}
    group by metric, tenant, metric_date
),

unioned as (
    select * from correction_counts
    union all
    select * from rate_counts
)

select
    metric,
    scope,
    subject,
    count_date,
    cast(successes as {{ dbt.type_float() }}) as successes,
    cast(trials as {{ dbt.type_bigint() }}) as trials
from unioned
where trials > 0
