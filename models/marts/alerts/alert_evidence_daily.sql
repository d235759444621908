-- The evidence behind each statistical alert with an episode (alert_states),
-- for the Alerts page's chart: one row per rule, subject and day of the
-- windows of the last evaluation of its latest episode (recent window, then
-- the baseline window before it), with that day's successes and trials
-- (int_alerts__daily_counts, as of this build), the day's rate and its 95%
-- Wilson interval. A day without data has no row. Eval cells have no daily
-- series and no evidence rows; operational rules neither.

with states as (
    select * from {{ ref('alert_states') }}
    where scope <> 'eval_cell'
),

evaluations as (
    select * from {{ ref('alert_evaluations') }}
    where recent_start_on is not null
),

daily_counts as (
    select * from {{ ref('int_alerts__daily_counts') }}
),

latest_episodes as (
    select
        rule_id,
        subject,
        metric,
        scope,
        last_evaluated_on,
        row_number() over (
            partition by rule_id, subject order by firing_since desc
        ) as episode_recency
    from states
),

windows as (
    select
        latest_episodes.rule_id,
        latest_episodes.subject,
        latest_episodes.metric,
        latest_episodes.scope,
        evaluations.evaluated_on,
        evaluations.recent_start_on,
        evaluations.baseline_start_on
    from latest_episodes
    inner join evaluations
        on
            latest_episodes.rule_id = evaluations.rule_id
            and latest_episodes.subject = evaluations.subject
            and latest_episodes.last_evaluated_on = evaluations.evaluated_on
    where latest_episodes.episode_recency = 1
)

select
    windows.rule_id,
    windows.subject,
    daily_counts.count_date as evidence_date,
    case
        when daily_counts.count_date >= windows.recent_start_on then 'recent' else 'baseline'
    end as evidence_window,
    windows.metric,
    windows.scope,
    windows.evaluated_on,
    daily_counts.successes,
    daily_counts.trials,
    {{ rate_with_interval('daily_counts.successes', 'daily_counts.trials', 'rate') }},
    {{ as_of_timestamp() }} as computed_as_of
from windows
inner join daily_counts
    on
        windows.metric = daily_counts.metric
        and windows.scope = daily_counts.scope
        and windows.subject = daily_counts.subject
        and windows.baseline_start_on <= daily_counts.count_date
        and windows.evaluated_on >= daily_counts.count_date
