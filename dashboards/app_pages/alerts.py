"""Alerts: what fires on the sidebar's day, what resolved lately, and the evidence of each statistical alert.

Rules, states and evidence: the alert marts (docs/alerts.md; dashboards/queries/alerts.py). A statistical alert
shows its recent rate against its baseline window's, the change with its 95% interval, n and the BH q-value, and
its daily rates with the two windows marked; an operational one (a silent source, a failed nightly, a load that
quarantined too much) says its value against its threshold in words. Rule names and subjects come from the seed
and from upstream data: shown as text (dashboards/text.py).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboards import layout, text, words
from dashboards.evidence_chart import evidence_chart
from dashboards.queries import alerts

CHART_LIMIT = 12  # evidence charts drawn; the table lists every firing alert

status, f = layout.page("Alerts")
st.caption(
    f"The alerts firing on {f.as_of} (the sidebar's day) and those resolved in the {alerts.RESOLVED_DAYS} days up "
    "to it. Statistical rules fire when the change is significant after Benjamini-Hochberg across every test of "
    "the day and lasted their rule's number of evaluations (docs/alerts.md). Other filters do not apply."
)


def _when(moment: Any) -> str:
    return "never" if moment is None or pd.isna(moment) else f"{pd.Timestamp(moment):%Y-%m-%d %H:%M} UTC"


def _day(value: Any) -> str:
    return words.MISSING if value is None or pd.isna(value) else f"{pd.Timestamp(value):%Y-%m-%d}"


def _rule(name: object) -> str:
    """A rule's name (the seed's, which analysts edit): plain when it holds nothing markdown reads as markup
    (letters, digits, spaces and `-/'(),`: no `[` to open a link), else as text (dashboards/text.py)."""
    value = str(name)
    plain = all(character.isalnum() or character in " -/'()," for character in value)
    return value if plain and len(value) <= text.LABEL_LIMIT else text.markdown(value)


def _heading(row: Any) -> str:
    """The alert's line: severity, rule name and subject (both as text), since when."""
    since = f"firing since {_day(row.firing_since)}"
    if not pd.isna(row.days_firing):
        since += f" ({words.days(row.days_firing)})"
    return f"{words.severity_badge(row.severity)} **{_rule(row.rule_name)}** · {text.markdown(row.subject)} · {since}"


def _statistical(row: Any) -> str:
    return (
        f"{words.percent(row.value)} in the recent window (n = {words.count(row.n)}) vs "
        f"{words.percent(row.baseline_value)} in the baseline window (n = {words.count(row.baseline_n)}): "
        f"**{words.points(row.value_change)}** (95% CI {words.points_interval(row.change_ci_low, row.change_ci_high)}),"
        f" q {words.probability(row.q_value)}; numbers of {_day(row.evaluated_on)}"
    )


def _table(firing: pd.DataFrame) -> pd.DataFrame:
    statistical = ~firing["metric"].isin(alerts.OPERATIONAL_METRICS)
    return pd.DataFrame(
        {
            "severity": firing["severity"],
            "rule": firing["rule_name"],
            "subject": firing["subject"],
            "firing_since": firing["firing_since"],
            "days_firing": firing["days_firing"],
            "recent_rate": firing["value"].where(statistical),
            "baseline_rate": firing["baseline_value"].where(statistical),
            "change_pp": (firing["value_change"] * 100).where(statistical),
            "change_ci_low_pp": firing["change_ci_low"] * 100,
            "change_ci_high_pp": firing["change_ci_high"] * 100,
            "n": firing["n"],
            "baseline_n": firing["baseline_n"],
            "q_value": firing["q_value"],
            "operational_value": firing["value"].where(~statistical),
            "threshold": firing["threshold"],
        }
    )


def _evidence(row: Any, days: pd.DataFrame) -> None:
    shown = days[(days["rule_id"] == row.rule_id) & (days["subject"] == row.subject)]
    metric = words.alert_metric(row.metric)
    subject = text.plotly(row.subject)
    st.plotly_chart(
        evidence_chart(
            shown,
            baseline_rate=row.baseline_value,
            title=f"{metric}: {subject}",
            subtitle="Daily rate, 95% Wilson band; dashed: the baseline window's rate",
            y_title=f"{metric} (% per day)",
        ),
        key=f"evidence_{row.Index}",
    )


if layout.tenantless("Alerts"):  # the marts have no tenant column: a scoped reader sees no row of them
    st.stop()

with layout.section("Alerts"):
    firing = alerts.firing(f.as_of)
    evaluated = _when(alerts.last_evaluated_at(f.as_of))
    if firing.empty:
        st.success(f"No alert is firing on {f.as_of}. The rules were last evaluated {evaluated}.")
    else:
        counts = alerts.firing_counts(f.as_of)
        st.markdown(
            f"**{words.count(len(firing))} {'alert' if len(firing) == 1 else 'alerts'} firing**: "
            + ", ".join(f"{count} {words.severity_badge(severity)}" for severity, count in counts.items())
            + f" · rules last evaluated {evaluated}"
        )
        layout.table(
            _table(firing),
            "alerts_firing",
            hide_index=True,
            column_config={
                "firing_since": st.column_config.DateColumn("firing since", format="YYYY-MM-DD"),
                "days_firing": st.column_config.NumberColumn("days firing"),
                "recent_rate": st.column_config.NumberColumn("recent", format="percent"),
                "baseline_rate": st.column_config.NumberColumn("baseline", format="percent"),
                "change_pp": st.column_config.NumberColumn("change (pp)", format="%+.1f"),
                "change_ci_low_pp": st.column_config.NumberColumn("change CI low (pp)", format="%+.1f"),
                "change_ci_high_pp": st.column_config.NumberColumn("change CI high (pp)", format="%+.1f"),
                "q_value": st.column_config.NumberColumn("q", format="%.2g"),
                "operational_value": st.column_config.NumberColumn("value (hours, share)", format="%.3g"),
            },
        )
        days = alerts.evidence(f.as_of)
        st.subheader("Each alert and its evidence")
        for drawn, row in enumerate(firing.itertuples()):
            with st.container(border=True):
                st.markdown(_heading(row))
                if row.metric in alerts.OPERATIONAL_METRICS:
                    st.markdown(words.operational_reading(row.metric, row.value, row.threshold))
                    continue
                st.markdown(_statistical(row))
                if drawn < CHART_LIMIT:
                    _evidence(row, days)
        if len(firing) > CHART_LIMIT:
            st.caption(f"Evidence charts of the first {CHART_LIMIT} alerts; the table lists all of them.")

st.subheader("Resolved lately")
with layout.section("Resolved alerts"):
    gone = alerts.resolved(f.as_of)
    if gone.empty:
        st.info(f"No alert resolved in the {alerts.RESOLVED_DAYS} days up to {f.as_of}.")
    else:
        layout.table(
            pd.DataFrame(
                {
                    "severity": gone["severity"],
                    "rule": gone["rule_name"],
                    "subject": gone["subject"],
                    "firing_since": gone["firing_since"],
                    "resolved_on": gone["resolved_on"],
                    "days_firing": gone["days_firing"],
                    "last_change_pp": gone["value_change"] * 100,
                }
            ),
            "alerts_resolved",
            hide_index=True,
            column_config={
                "firing_since": st.column_config.DateColumn("firing since", format="YYYY-MM-DD"),
                "resolved_on": st.column_config.DateColumn("resolved on", format="YYYY-MM-DD"),
                "days_firing": st.column_config.NumberColumn("days firing"),
                "last_change_pp": st.column_config.NumberColumn("last change (pp)", format="%+.1f"),
            },
        )
