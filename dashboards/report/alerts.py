"""The report's alerts: the summary's "Alerts firing" (rule, subject, since when, each linking to the section)
and the section "Alerts firing on <day>" with each alert's numbers (dashboards/queries/alerts.py, the Alerts
page's query), or the sentence that none fire.

The alert marts have no tenant: a report narrowed to one tenant (or a reader of some tenants) says so in place
of them. A build without the alert marts (an older version) has neither the summary's line nor the section."""

from __future__ import annotations

import pandas as pd

from dashboards import data, text, words
from dashboards.queries import alerts
from dashboards.report import context
from dashboards.report.context import Context
from dashboards.report.markup import Builder, escape, link, table

TITLE = "Alerts firing"


def _cut(value: object) -> str:
    """An upstream value (a subject) cut to a label's length; `escape` then makes it text."""
    shown = str(value)
    return shown if len(shown) <= text.LABEL_LIMIT else shown[: text.LABEL_LIMIT - 1] + text.ELLIPSIS


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


def _available() -> bool:
    return "alert_states" in data.status().marts


def firing_items(ctx: Context) -> list[str]:
    """The summary's items, one per alert firing on the report's day: rule name and subject (as text, linking to
    the section), severity, since when."""
    if not _available() or ctx.left_out():
        return []
    return [
        f"<li>{link(context.ALERTS, f'{row.rule_name}, {_cut(row.subject)}')}: "
        f"{escape(f'{row.severity}, {_since(row._asdict())}')}</li>"
        for row in alerts.firing(ctx.f.as_of).itertuples()
    ]


def _none(ctx: Context) -> str:
    evaluated = alerts.last_evaluated_at(ctx.f.as_of)
    when = "never" if evaluated is None else f"{evaluated:%Y-%m-%d %H:%M} UTC"
    return f"No alert fires on {ctx.f.as_of} (the rules were last evaluated {when})."


def note(ctx: Context, has_items: bool) -> str:
    """The summary's line when it lists no alert: none fire, or why the report does not show them."""
    if has_items or not _available():
        return ""
    if ctx.left_out():
        return f"Alerts: {ctx.left_out()} (the rules cover every tenant and sources without one)."
    return _none(ctx)


def section(report: Builder, ctx: Context) -> None:
    """Every alert firing on the report's day with its numbers, most severe first."""
    if not _available() or ctx.closed(report, f"{TITLE} on {ctx.f.as_of}", context.ALERTS):
        return
    firing = alerts.firing(ctx.f.as_of)
    report.heading(
        f"{TITLE} on {ctx.f.as_of}",
        "A statistical rule fires when its change is significant after Benjamini-Hochberg across every test of the "
        "day and lasted its rule's number of evaluations; the numbers are those of the day's evaluation.",
        anchor=context.ALERTS,
    )
    if firing.empty:
        report.text(_none(ctx))
        return
    rows = [
        {
            "severity": str(row["severity"]),
            "rule": str(row["rule_name"]),
            "subject": _cut(row["subject"]),
            "since": _since(row).removeprefix("firing since "),
            "reading": _detail(row),
        }
        for _, row in firing.iterrows()
    ]
    report.raw(table(rows))
