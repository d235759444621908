"""The Alerts page's queries (the Overview's badge and the report's summary read them too): the alert marts
(docs/alerts.md). Which alerts fire on a day, which resolved lately, when the rules were last evaluated, and the
daily evidence of the statistical ones. Every value, interval and state comes from dbt; here they are selected.

"Firing on a day" is the episode (alert_states) that covers it: fired on or before the day and not resolved by
it. Its numbers are those of the evaluation of that day (alert_evaluations), or of the episode's last one when
the day is later than the build's evaluations.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import cached, query

SEVERITIES = ("critical", "warning", "info")  # most urgent first (seed alert_rules' `severity`)
OPERATIONAL_METRICS = ("source_silent", "nightly_failed", "quarantine_share")  # no statistics, no chart
RESOLVED_DAYS = 30  # the page lists the episodes resolved in the 30 days up to the day it shows

_SEVERITY_ORDER = "case states.severity when 'critical' then 0 when 'warning' then 1 when 'info' then 2 else 3 end"


@cached
def firing(as_of: dt.date) -> pd.DataFrame:
    """The alerts firing on `as_of`, most severe first, then the longest firing: per episode its rule, subject,
    severity, firing since, the day its numbers are of (`evaluated_on`), value, baseline value, the change with
    its interval, n, q, threshold; `days_firing` only when the day is the episode's last evaluation or later
    (the mart counts it up to its last evaluation)."""
    return query(
        f"""
        select states.rule_id, states.rule_name, states.metric, states.scope, states.subject, states.severity,
               states.breach_started_on, states.firing_since, states.last_evaluated_on, states.description,
               coalesce(evaluations.evaluated_on, states.last_evaluated_on) as evaluated_on,
               case when $as_of >= states.last_evaluated_on then states.days_firing end as days_firing,
               coalesce(evaluations.value, states.value) as value,
               coalesce(evaluations.baseline_value, states.baseline_value) as baseline_value,
               coalesce(evaluations.value_change, states.value_change) as value_change,
               evaluations.change_ci_low, evaluations.change_ci_high,
               coalesce(evaluations.n, states.n) as n,
               coalesce(evaluations.baseline_n, states.baseline_n) as baseline_n,
               coalesce(evaluations.q_value, states.q_value) as q_value,
               evaluations.threshold, evaluations.bad_direction, evaluations.evaluation
        from marts.alert_states as states
        left join marts.alert_evaluations as evaluations
            on states.rule_id = evaluations.rule_id
            and states.subject = evaluations.subject
            and evaluations.evaluated_on = least(cast($as_of as date), states.last_evaluated_on)
        where states.firing_since <= $as_of and (states.resolved_on is null or states.resolved_on > $as_of)
        order by {_SEVERITY_ORDER}, states.firing_since, states.rule_id, states.subject
        """,
        {"as_of": as_of},
    )


@cached
def resolved(as_of: dt.date, days: int = RESOLVED_DAYS) -> pd.DataFrame:
    """The episodes resolved in the `days` days up to `as_of`, latest first: rule, subject, severity, when they
    fired and resolved, and their last evaluation's numbers."""
    return query(
        """
        select rule_id, rule_name, metric, subject, severity, firing_since, resolved_on, days_firing,
               value, baseline_value, value_change, n, q_value
        from marts.alert_states
        where resolved_on is not null and resolved_on <= $as_of and resolved_on > $as_of - $days
        order by resolved_on desc, rule_id, subject
        """,
        {"as_of": as_of, "days": days},
    )


@cached
def last_evaluated_at(as_of: dt.date) -> dt.datetime | None:
    """When the rules were last evaluated on or before `as_of` (alert_evaluations' latest `evaluated_at`)."""
    found = query(
        "select max(evaluated_at) as evaluated_at from marts.alert_evaluations where evaluated_on <= $as_of",
        {"as_of": as_of},
    )["evaluated_at"].iloc[0]
    return None if pd.isna(found) else pd.Timestamp(found).to_pydatetime()


@cached
def evidence(as_of: dt.date) -> pd.DataFrame:
    """The evidence of every statistical alert firing on `as_of` (alert_evidence_daily): per rule, subject and
    day of its last evaluation's windows, successes, trials, the rate and its 95% Wilson interval, and the
    window (`recent`, `baseline`)."""
    return query(
        """
        select evidence.rule_id, evidence.subject, evidence.evidence_date, evidence.evidence_window,
               evidence.successes, evidence.trials, evidence.rate, evidence.rate_ci_low, evidence.rate_ci_high
        from marts.alert_evidence_daily as evidence
        where exists (
            select 1 from marts.alert_states as states
            where states.rule_id = evidence.rule_id and states.subject = evidence.subject
              and states.firing_since <= $as_of and (states.resolved_on is null or states.resolved_on > $as_of)
        )
        order by evidence.rule_id, evidence.subject, evidence.evidence_date
        """,
        {"as_of": as_of},
    )


def firing_counts(as_of: dt.date) -> dict[str, int]:
    """How many alerts fire on `as_of` per severity (most severe first; severities without one left out)."""
    counts = firing(as_of)["severity"].value_counts()
    known = [severity for severity in SEVERITIES if severity in counts]
    others = sorted(str(severity) for severity in counts.index if severity not in SEVERITIES)
    return {severity: int(counts[severity]) for severity in [*known, *others]}
