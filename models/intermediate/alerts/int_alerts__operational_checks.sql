-- The operational alert rules (docs/alerts.md), evaluated like the
-- statistical ones: one row per enabled rule of the seed alert_rules whose
-- metric is source_silent, nightly_failed or quarantine_share, subject and
-- evaluation day (the as-of day and the alert_backfill_days - 1 days before
-- it), with the columns of alert_evaluations (the statistical ones null).
-- Each day is evaluated at its end, the as-of day at the as-of instant.
-- - source_silent: hours from a source system's last signal
--   (feedback_signals) at or before the instant; a source with no signal by
--   then has no row.
-- - nightly_failed: the latest nightly run (raw.nightly_runs) that stands for
--   an instant at or before the evaluation instant (its as_of, or its start
--   when that is earlier): value 1 when it has a failed step, ended failed,
--   or is still `running` more than alert_nightly_unfinished_hours after
--   that instant (killed); else 0. No run: no row.
-- - quarantine_share: per load source, the loads (load_id) finished on the
--   evaluation day by its instant that read at least min_n rows: the
--   largest share of rows quarantined; insufficient_data when the source's
--   loads of the day all read fewer.
-- An operational rule breaches when its value is beyond `threshold` in the
-- bad direction (above for `up`); nightly_failed when the value is 1.
{%- set as_of_at = as_of_timestamp() %}
{%- set unfinished_seconds = var('alert_nightly_unfinished_hours') * 3600 %}

with alert_rules as (
    select * from {{ ref('alert_rules') }}
),

signals as (
    select * from {{ ref('feedback_signals') }}
),

nightly_runs as (
    select * from {{ ref('stg_warehouse_ops__nightly_runs') }}
),

load_manifest as (
    select * from {{ ref('stg_warehouse_ops__load_manifest') }}
),

operational_rules as (
    select
        rule_id,
        rule_name,
        metric,
        scope,
        bad_direction,
        severity,
        cast(min_n as bigint) as min_n,
        cast(sustain as bigint) as sustain,
        cast(threshold as {{ dbt.type_float() }}) as threshold
    from alert_rules
    where
        enabled
        and metric in ('source_silent', 'nightly_failed', 'quarantine_share')
),

evaluation_instants as (
    {{ alert_evaluation_days() }}
),

-- source_silent ------------------------------------------------------------

signal_days as (
    select
        source_system,
        cast(occurred_at as date) as occurred_date,
        max(occurred_at) as last_signal_at
    from signals
    where occurred_at <= {{ as_of_at }}
    group by source_system, cast(occurred_at as date)
),

last_signals as (
    select
        evaluation_instants.evaluated_on,
        evaluation_instants.evaluated_at,
        signal_days.source_system,
        max(signal_days.last_signal_at) as last_signal_at
    from evaluation_instants
    inner join signal_days
        on evaluation_instants.evaluated_on >= signal_days.occurred_date
    group by
        evaluation_instants.evaluated_on,
        evaluation_instants.evaluated_at,
        signal_days.source_system
),

silent_checks as (
    select
        operational_rules.rule_id,
        last_signals.source_system as subject,
        last_signals.evaluated_on,
        last_signals.evaluated_at,
        {{ seconds_between('last_signals.last_signal_at', 'last_signals.evaluated_at') }}
        / 3600.0e0 as value,  -- noqa: RF04
        cast(null as bigint) as n
    from operational_rules
    cross join last_signals
    where operational_rules.metric = 'source_silent'
),

-- nightly_failed -----------------------------------------------------------

runs_by_instant as (
    select
        run_id,
        status,
        has_failed_step,
        finished_at,
        case when as_of < started_at then as_of else started_at end as run_at
    from nightly_runs
),

runs_before as (
    select
        evaluation_instants.evaluated_on,
        evaluation_instants.evaluated_at,
        runs_by_instant.run_at,
        runs_by_instant.status,
        runs_by_instant.has_failed_step,
        row_number() over (
            partition by evaluation_instants.evaluated_on
            order by runs_by_instant.run_at desc, runs_by_instant.run_id desc
        ) as recency
    from evaluation_instants
    inner join runs_by_instant
        on evaluation_instants.evaluated_at >= runs_by_instant.run_at
),

latest_runs as (
    select
        evaluated_on,
        evaluated_at,
        has_failed_step
        or status = 'failed'
        or (
            status = 'running'
            and {{ seconds_between('run_at', 'evaluated_at') }} > {{ unfinished_seconds }}
        ) as is_failed
    from runs_before
    where recency = 1
),

nightly_checks as (
    select
        operational_rules.rule_id,
        'nightly' as subject,
        latest_runs.evaluated_on,
        latest_runs.evaluated_at,
        case when latest_runs.is_failed then 1.0e0 else 0.0e0 end as value,  -- noqa: RF04
        cast(null as bigint) as n
    from operational_rules
    cross join latest_runs
    where operational_rules.metric = 'nightly_failed'
),

-- quarantine_share ---------------------------------------------------------

loads as (
    select
        load_id,
        source,
        max(finished_at) as finished_at,
        sum(rows_read) as rows_read,
        sum(rows_quarantined) as rows_quarantined
    from load_manifest
    group by load_id, source
),

loads_of_the_day as (
    select
        evaluation_instants.evaluated_on,
        evaluation_instants.evaluated_at,
        loads.load_id,
        loads.source,
        loads.rows_read,
        case
            when loads.rows_read > 0
                then cast(loads.rows_quarantined as {{ dbt.type_float() }}) / loads.rows_read
        end as quarantined_share
    from evaluation_instants
    inner join loads
        on
            evaluation_instants.evaluated_on = cast(loads.finished_at as date)
            and evaluation_instants.evaluated_at >= loads.finished_at
),

ranked_loads as (
    select
        operational_rules.rule_id,
        loads_of_the_day.source as subject,
        loads_of_the_day.evaluated_on,
        loads_of_the_day.evaluated_at,
        loads_of_the_day.quarantined_share,
        loads_of_the_day.rows_read,
        loads_of_the_day.rows_read >= operational_rules.min_n as is_large_enough,
        -- the largest share among the loads large enough, else the largest load
        row_number() over (
            partition by
                operational_rules.rule_id,
                loads_of_the_day.source,
                loads_of_the_day.evaluated_on
            order by
                loads_of_the_day.rows_read >= operational_rules.min_n desc,
                loads_of_the_day.quarantined_share desc,
                loads_of_the_day.rows_read desc,
                loads_of_the_day.load_id asc
        ) as rank_in_day
    from operational_rules
    cross join loads_of_the_day
    where operational_rules.metric = 'quarantine_share'
),

quarantine_checks as (
    select
        rule_id,
        subject,
        evaluated_on,
        evaluated_at,
        case when is_large_enough then quarantined_share end as value,  -- noqa: RF04
        rows_read as n
    from ranked_loads
    where rank_in_day = 1
),

-- every check --------------------------------------------------------------

checks as (
    select * from silent_checks
    union all
    select * from nightly_checks
    union all
    select * from quarantine_checks
),

evaluated as (
    select
        checks.evaluated_on,
        checks.evaluated_at,
        operational_rules.rule_id,
        operational_rules.rule_name,
        operational_rules.metric,
        operational_rules.scope,
        checks.subject,
        operational_rules.bad_direction,
        operational_rules.severity,
        checks.value,
        checks.n,
        operational_rules.threshold,
        operational_rules.sustain,
        case
            when checks.value is null then 'insufficient_data'
            when operational_rules.metric = 'nightly_failed'
                then case when checks.value = 1 then 'breach' else 'clear' end
            when operational_rules.threshold is null then 'insufficient_data'
            when operational_rules.bad_direction = 'down'
                then
                    case
                        when checks.value < operational_rules.threshold then 'breach'
                        else 'clear'
                    end
            when checks.value > operational_rules.threshold then 'breach'
            else 'clear'
        end as evaluation
    from checks
    inner join operational_rules on checks.rule_id = operational_rules.rule_id
),

final as (
    select
        evaluated_on,
        evaluated_at,
        rule_id,
        rule_name,
        metric,
        scope,
        cast(subject as {{ dbt.type_string() }}) as subject,
        bad_direction,
        severity,
        cast(value as {{ dbt.type_float() }}) as value,  -- noqa: RF04
        cast(null as {{ dbt.type_float() }}) as baseline_value,
        cast(null as {{ dbt.type_float() }}) as value_change,
        cast(null as {{ dbt.type_float() }}) as change_ci_low,
        cast(null as {{ dbt.type_float() }}) as change_ci_high,
        cast(n as bigint) as n,
        cast(null as bigint) as baseline_n,
        cast(null as {{ dbt.type_float() }}) as z_statistic,
        cast(null as {{ dbt.type_float() }}) as p_value,
        cast(null as {{ dbt.type_float() }}) as q_value,
        threshold,
        cast(null as {{ dbt.type_float() }}) as significance_level,
        sustain,
        evaluation,
        evaluation = 'breach' as is_breach,
        cast(null as date) as recent_start_on,
        cast(null as date) as baseline_start_on,
        {{ as_of_at }} as computed_as_of
    from evaluated
)

select * from final
