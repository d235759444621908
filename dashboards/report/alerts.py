"""The alerts of the report's summary: the alerts firing on the report's day (rule, subject, since when, the
change and its q-value; dashboards/queries/alerts.py, the Alerts page's query), or the sentence that none fire.

The alert marts have no tenant: a report narrowed to one tenant (or a reader of some tenants) says so in place
of them. A build without the alert marts (an older version) has no alerts line at all."""

from __future__ import annotations

import html

import pandas as pd

from dashboards import data, text, words
from dashboards.queries import alerts
from dashboards.report.context import Context
from dashboards.report.markup import escape

TITLE = "Alerts firing"


def _since(row: pd.Series) -> str:
    since = f"firing since {pd.Timestamp(row['firing_since']):%Y-%m-%d}"
    return since + (f" ({words.days(row['days_firing'])})" if not pd.isna(row["days_firing"]) else "")


def _detail(row: pd.Series) -> str:
    if row["metric"] in alerts.OPERATIONAL_METRICS:
        return words.operational_reading(row["metric"], row["value"], row["threshold"])
    return (
        f"{words.percent(row['value'])} vs {words.percent(row['baseline_value'])} before, "
        f"{words.points(row['value_change'])} "
        f"(95% CI {words.points_interval(row['change_ci_low'], row['change_ci_high'])}; "
        f"n = {words.count(row['n'])}, q {words.probability(row['q_value'])})"
    )


def firing_items(ctx: Context) -> list[str]:
    """One list item per alert firing on the report's day: severity, rule name and subject (as text), since when,
    its numbers."""
    if not _shown(ctx):
        return []
    return [
        f"<li><strong>{escape(row['severity'])}</strong> · {html.escape(text.visible(row['rule_name']))}, "
        f"<strong>{html.escape(text.visible(row['subject']))}</strong>: {escape(_since(row))}; {escape(_detail(row))}"
        "</li>"
        for _, row in alerts.firing(ctx.f.as_of).iterrows()
    ]


def note(ctx: Context, has_items: bool) -> str:
    """The line under the summary when no alert is listed: none fire (and when the rules last ran), or why the
    report does not show them."""
    if has_items or "alert_states" not in data.status().marts:
        return ""
    if ctx.left_out():
        return f"Alerts: {ctx.left_out()} (the rules cover every tenant and sources without one)."
    evaluated = alerts.last_evaluated_at(ctx.f.as_of)
    when = "never" if evaluated is None else f"{evaluated:%Y-%m-%d %H:%M} UTC"
    return f"No alert fires on {ctx.f.as_of} (the rules were last evaluated {when})."


def _shown(ctx: Context) -> bool:
    return "alert_states" in data.status().marts and ctx.left_out() is None
