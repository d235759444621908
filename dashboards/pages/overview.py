"""Overview: the four headline rates with their change vs the previous period, signal volume, what moved most.

Rates, intervals, changes and the movers' ranking: marts.metric_rates_by_period; volume: feedback_signals_daily
(dashboards/queries/overview.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboards import charts, data, layout
from dashboards.queries import overview

status, f = layout.page("Overview")
layout.scope(f, "Session feedback and analyzer events carry no tenant: the tenant filter applies to the other two.")

KPIS = overview.HEADLINES

with layout.section("Headline rates"):
    rates = overview.headline_rates(f.as_of, f.period_days, f.retained, f.tenant, f.project).set_index("metric")
    for column, (metric, label, lower_is_better, definition) in zip(st.columns(len(KPIS)), KPIS, strict=True):
        row = rates.loc[metric] if metric in rates.index else None
        with column:
            if metric in overview.TENANTLESS_HEADLINES and not data.current_scope().is_all:
                st.metric(label, "not available", help=definition)
                st.caption("No tenant: only access to every tenant reads it.")
                continue
            if row is None or pd.isna(row["rate"]):
                st.metric(label, "no data", help=definition)
                st.caption("Nothing in this period for these filters.")
                continue
            has_change = not pd.isna(row["rate_change"])
            points = round(row["rate_change"] * 100, 1) if has_change else None
            st.metric(
                label,
                f"{row['rate']:.1%}",
                delta=None if points is None else ("0.0 pp" if points == 0 else f"{points:+.1f} pp"),
                delta_color="off" if points == 0 else ("inverse" if lower_is_better else "normal"),
                delta_arrow="off" if points == 0 else "auto",
                help=f"{definition} Delta: percentage points vs {f.previous_label()}.",
                border=True,
            )
            lines = [f"95% CI {row['rate_ci_low']:.1%} to {row['rate_ci_high']:.1%} (n = {row['trials']:,.0f})"]
            if has_change:
                verdict = "significant" if row["is_significant_change"] else "not significant"
                lines.append(
                    f"previous {row['previous_rate']:.1%}; change CI {row['rate_change_ci_low'] * 100:+.1f} to "
                    f"{row['rate_change_ci_high'] * 100:+.1f} pp, {verdict}"
                )
            else:
                lines.append("no data in the previous period")
            st.caption("  \n".join(lines))

st.subheader("Signal volume by source")
with layout.section("Signal volume"):
    volume = overview.signal_volume_daily(f.start, f.end, f.retained, f.tenant)
    charts.show(
        volume,
        lambda frame: charts.stacked_bars(
            frame,
            x="signal_date",
            y="signals",
            color="source_system",
            title="Feedback signals per day by source",
            subtitle=f"Every source on one shape (feedback_signals). {f.period_label()}",
            x_title=charts.DATE_AXIS,
            y_title="Signals (count per day)",
            legend_title="Source",
        ),
        "No feedback signals in this period for these filters.",
    )

st.subheader("What changed most")
with layout.section("Changes"):
    labels = {metric: label for metric, label, _, _ in KPIS}
    movers = overview.movers(f.as_of, f.period_days, f.retained, f.tenant, f.project)
    movers = movers.assign(metric=movers["metric"].map(labels))
    if movers.empty:
        st.info("Not enough data in both periods to compare segments (at least 20 observations each).")
    else:
        st.caption(
            f"Segments of each headline rate, {f.period_label()} vs {f.previous_label()}; significant changes "
            "(95% Newcombe interval of the difference excludes 0) first, then the largest. Segments with fewer "
            "than 20 observations in either period are left out."
        )
        table = movers.assign(
            current=lambda frame: frame["current"] * 100,
            previous=lambda frame: frame["previous"] * 100,
            change=lambda frame: frame["change"] * 100,
            change_ci=lambda frame: [
                f"{low * 100:+.1f} to {high * 100:+.1f}"
                for low, high in zip(frame["change_low"], frame["change_high"], strict=True)
            ],
        )
        layout.table(
            table[["metric", "segment", "current", "previous", "change", "change_ci", "significant", "n"]],
            "rates_by_segment",
            hide_index=True,
            column_config={
                "metric": "Rate",
                "segment": "Segment",
                "current": st.column_config.NumberColumn("This period (%)", format="%.1f"),
                "previous": st.column_config.NumberColumn("Previous period (%)", format="%.1f"),
                "change": st.column_config.NumberColumn("Change (pp)", format="%+.1f"),
                "change_ci": "95% CI of change (pp)",
                "significant": "Significant",
                "n": st.column_config.NumberColumn("n this period", format="%d"),
            },
        )
