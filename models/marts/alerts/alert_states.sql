-- The alert episodes (docs/alerts.md, "States"): one row per rule, subject
-- and episode, from the evaluations up to the as-of day (alert_evaluations,
-- evaluated_on <= the as-of date), so a past as_of shows what was firing
-- then. Per rule and subject, in the order of the evaluation days, the
-- `breach` and `clear` evaluations decide (`insufficient_data` neither
-- counts toward sustain nor resolves; a day without an evaluation is
-- skipped): the alert fires on the evaluation where the `sustain`-th
-- consecutive breach happens (firing_since; sustain of that evaluation) and
-- resolves on the first later `clear` (resolved_on). A run of breaches
-- shorter than sustain is no episode. Rules no longer enabled in the seed
-- alert_rules have no episodes. The last evaluation of an episode is the
-- latest one from firing_since up to resolved_on (the as-of day while
-- firing); its value, baseline, change, samples and q-value are given.

{%- set as_of_date = 'cast(' ~ as_of_timestamp() ~ ' as date)' %}

with evaluations as (
    select * from {{ ref('alert_evaluations') }}
    where evaluated_on <= {{ as_of_date }}
),

rules as (
    select
        rule_id,
        description
    from {{ ref('alert_rules') }}
    where enabled
),

decided as (
    select
        rule_id,
        subject,
        evaluated_on,
        evaluation,
        sustain,
        sum(case when evaluation = 'clear' then 1 else 0 end) over (
            partition by rule_id, subject
            order by evaluated_on
            rows between unbounded preceding and current row
        ) as clears_so_far
    from evaluations
    where evaluation in ('breach', 'clear')
),

breaches as (
    select
        *,
        row_number() over (
            partition by rule_id, subject, clears_so_far order by evaluated_on
        ) as breach_number
    from decided
    where evaluation = 'breach'
),

runs as (
    select
        rule_id,
        subject,
        clears_so_far as run_number,
        min(evaluated_on) as breach_started_on,
        min(case when breach_number >= sustain then evaluated_on end) as firing_since
    from breaches
    group by rule_id, subject, clears_so_far
),

episodes as (
    select
        runs.rule_id,
        runs.subject,
        runs.breach_started_on,
        runs.firing_since,
        resolving.evaluated_on as resolved_on
    from runs
    left join decided as resolving
        on
            runs.rule_id = resolving.rule_id
            and runs.subject = resolving.subject
            and resolving.clears_so_far = runs.run_number + 1
            and resolving.evaluation = 'clear'
    where runs.firing_since is not null
),

last_evaluations as (
    select
        episodes.rule_id,
        episodes.subject,
        episodes.firing_since,
        max(evaluations.evaluated_on) as last_evaluated_on
    from episodes
    inner join evaluations
        on
            episodes.rule_id = evaluations.rule_id
            and episodes.subject = evaluations.subject
            and episodes.firing_since <= evaluations.evaluated_on
            and (episodes.resolved_on is null or episodes.resolved_on >= evaluations.evaluated_on)
    group by episodes.rule_id, episodes.subject, episodes.firing_since
)

select
    episodes.rule_id,
    last_evaluation.rule_name,
    last_evaluation.metric,
    last_evaluation.scope,
    episodes.subject,
    last_evaluation.severity,
    episodes.breach_started_on,
    episodes.firing_since,
    episodes.resolved_on,
    episodes.resolved_on is null as is_firing,
    cast({{ dbt.datediff(
        'episodes.firing_since', 'coalesce(episodes.resolved_on, ' ~ as_of_date ~ ')', 'day'
    ) }} as {{ dbt.type_int() }}) as days_firing,
    last_evaluations.last_evaluated_on,
    last_evaluation.value,
    last_evaluation.baseline_value,
    last_evaluation.value_change,
    last_evaluation.n,
    last_evaluation.baseline_n,
    last_evaluation.q_value,
    rules.description,
    {{ as_of_timestamp() }} as computed_as_of
from episodes
inner join last_evaluations
    on
        episodes.rule_id = last_evaluations.rule_id
        and episodes.subject = last_evaluations.subject
        and episodes.firing_since = last_evaluations.firing_since
inner join evaluations as last_evaluation
    on
        last_evaluations.rule_id = last_evaluation.rule_id
        and last_evaluations.subject = last_evaluation.subject
        and last_evaluations.last_evaluated_on = last_evaluation.evaluated_on
inner join rules
    on episodes.rule_id = rules.rule_id
