"""Overview: the four headline rates with their change vs the previous period, signal volume, what moved most.

Rates, intervals, changes and the movers' ranking: marts.metric_rates_by_period; volume: feedback_signals_daily
(dashboards/queries/overview.py). Every section follows the sidebar's period. A headline whose source has no
tenant (project) reads "not split by tenant" ("... project") in place of its number while one is selected, and
its segments are left out of the movers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from dashboards import charts, data, layout, text, words
from dashboards.queries import alerts, overview

status, f = layout.page("Overview")
layout.scope(f, "Every section covers this period; changes are against the period before.")


def alerts_badge() -> None:
    """The alerts firing on the sidebar's day by severity, linking to the Alerts page; a quiet line when none.
    Nothing for a build without the alert marts, or a reader of some tenants (the marts have no tenant)."""
    if "alert_states" not in status.marts or not data.current_scope().is_all:
        return
    counts = alerts.firing_counts(f.as_of)
    if not counts:
        st.caption(f"No alerts firing on {f.as_of}.")
        return
    total = sum(counts.values())
    with st.container(border=True):
        st.page_link(
            "app_pages/alerts.py",
            label=f"**{words.count(total)} {'alert' if total == 1 else 'alerts'} firing** on {f.as_of}: "
            + ", ".join(f"{count} {words.severity_badge(severity)}" for severity, count in counts.items())
            + " · what fires and the evidence",
            icon=":material/notifications_active:",
        )


with layout.section("Alerts"):
    alerts_badge()

KPIS = overview.HEADLINES
LABELS = {metric: label for metric, label, _, _ in KPIS}
LOWER_IS_BETTER = {metric: lower for metric, _, lower, _ in KPIS}


def unsplit(row: pd.Series | None) -> str | None:
    """What a headline reads in place of its number under the filters ("not split by tenant"), or None: from
    the mart's is_tenant_scoped / is_project_scoped of its row."""
    if row is None:
        return None
    return words.not_split(
        None if row["is_tenant_scoped"] else f.tenant, None if row["is_project_scoped"] else f.project
    )


def verdict(row: Mapping[str, Any]) -> str:
    """A mover's significance in words (markdown), better or worse by the metric's direction."""
    if not row["significant"]:
        return "not significant"
    worse = (row["change"] > 0) == LOWER_IS_BETTER.get(row["metric"], False)
    return ":red[**significantly worse**]" if worse else ":green[**significantly better**]"


rates = pd.DataFrame()
with layout.section("Headline rates"):
    rates = overview.headline_rates(f.as_of, f.period_days, f.retained, f.tenant, f.project).set_index("metric")
    for column, (metric, label, lower_is_better, definition) in zip(st.columns(len(KPIS)), KPIS, strict=True):
        row = rates.loc[metric] if metric in rates.index else None
        with column:
            if metric in overview.TENANTLESS_HEADLINES and not data.current_scope().is_all:
                st.metric(label, "not available", help=definition, border=True)
                st.caption("No tenant: only access to every tenant reads it.")
                continue
            reading = unsplit(row)
            if reading is not None:
                # small: the words, not a number, and whole in a quarter of the page (a number's size cuts them)
                st.metric(label, f":small[{reading}]", help=definition, border=True)
                unit = "tenant" if reading == words.NOT_SPLIT_BY_TENANT else "project"
                st.caption(f"Its source has no {unit}; set the {unit} filter to All to see it.")
                continue
            if row is None or pd.isna(row["rate"]):
                st.metric(label, "no data", help=definition, border=True)
                st.caption("Nothing in this period for these filters.")
                continue
            has_change = not pd.isna(row["rate_change"])
            unchanged = has_change and round(row["rate_change"] * 100, 1) == 0
            st.metric(
                label,
                words.percent(row["rate"]),
                delta=words.points(row["rate_change"]) if has_change else None,
                delta_color="off" if unchanged else ("inverse" if lower_is_better else "normal"),
                delta_arrow="off" if unchanged else "auto",
                help=f"{definition} The change is in percentage points (pp) against {f.previous_label()}.",
                border=True,
            )
            interval = words.rate_interval(row["rate_ci_low"], row["rate_ci_high"])
            lines = [f"95% CI {interval} (n = {words.count(row['trials'])})"]
            if has_change:
                significance = "significant" if row["is_significant_change"] else "not significant"
                lines.append(
                    f"previous period {words.percent(row['previous_rate'])}; change 95% CI "
                    f"{words.points_interval(row['rate_change_ci_low'], row['rate_change_ci_high'])}, {significance}"
                )
            else:
                lines.append("no data in the previous period")
            st.caption("  \n".join(lines))

st.subheader("Signal volume by source")
with layout.section("Signal volume"):
    # the unified signals carry a tenant (not every source) but no project
    if not (f.project and layout.not_split(dataclasses.replace(f, tenant=None), "Signal volume by source")):
        if f.tenant:
            st.caption(
                f"Session feedback and skill analyzer events: {words.NOT_SPLIT_BY_TENANT} (they have no tenant), "
                "so this chart leaves them out."
            )
        volume = overview.signal_volume_daily(f.start, f.end, f.retained, f.tenant)
        charts.show(
            volume.assign(source_system=volume["source_system"].map(words.source)),
            lambda frame: charts.stacked_bars(
                frame,
                x="signal_date",
                y="signals",
                color="source_system",
                title="Feedback signals per day by source",
                subtitle=f"Every answer, reaction, analyzer event and workspace rating. {f.period_label()}",
                x_title=charts.DATE_AXIS,
                y_title="Signals (count per day)",
                legend_title="Source",
            ),
            "No feedback signals in this period for these filters.",
        )

st.subheader("What changed most")
with layout.section("Changes"):
    movers = overview.movers(f.as_of, f.period_days, f.retained, f.tenant, f.project)
    left_out: dict[str, list[str]] = {}  # reading -> the headlines it applies to
    for metric in LABELS:
        reading = unsplit(rates.loc[metric]) if metric in rates.index else None
        if reading is not None:
            left_out.setdefault(reading, []).append(LABELS[metric])
    if left_out:
        st.caption(
            "; ".join(f"{', '.join(labels)}: {reading}" for reading, labels in left_out.items())
            + ". Their segments are left out."
        )
    if movers.empty:
        st.info("Not enough data in both periods to compare segments (at least 20 observations each).")
    else:
        st.caption(
            f"Segments of each headline rate, {f.period_label()} vs {f.previous_label()}: significant changes "
            "(the 95% interval of the change excludes 0) first, then the largest. Segments with fewer than 20 "
            "observations in either period are left out. Changes in percentage points (pp)."
        )
        rate_names = {metric: label.split(" (")[0] for metric, label in LABELS.items()}  # no "(all skills)"
        segments = list(zip(movers["segment_type"], movers["segment_label"], strict=True))
        movers = movers.assign(
            rate=movers["metric"].map(rate_names),
            segment_words=[words.segment(kind, label) for kind, label in segments],
            segment_markdown=[words.segment(kind, label, text.markdown) for kind, label in segments],
        )
        lines = [
            f"- **{row.rate}, {row.segment_markdown}**: {words.percent(row.previous)} → "
            f"{words.percent(row.current)}, **{words.points(row.change)}** "
            f"(95% CI {words.points_interval(row.change_low, row.change_high)}), {verdict(row._asdict())} · "
            f"n = {words.count(row.n)}"
            for row in movers.itertuples(index=False)
        ]
        st.markdown("\n".join(lines))
        table = pd.DataFrame(
            {
                "rate": movers["rate"],
                "segment": movers["segment_words"],
                "current_rate": movers["current"],
                "previous_rate": movers["previous"],
                "change_pp": movers["change"] * 100,
                "change_ci_low_pp": movers["change_low"] * 100,
                "change_ci_high_pp": movers["change_high"] * 100,
                "significant": movers["significant"],
                "n_this_period": movers["n"],
            }
        )
        st.download_button(
            "Download CSV",
            data=layout.csv_bytes(table),
            file_name="rates_by_segment.csv",
            mime="text/csv",
            key="download_rates_by_segment",
            on_click="ignore",
            icon=":material/download:",
        )
