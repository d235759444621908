"""Skills: correction-rate ranking, trend direction, skill x dimension hotspots, a skill's recent events.

Reads skill_correction_rates, skill_correction_trends with skill_correction_trend_intervals (the change's
interval), skill_dimension_hotspots, skill_correction_weekly and the retained or stored analyzer events
(dashboards/queries/skills.py). Undated events (the analyzer wrote no timestamp) are in no window: the page
says how many each skill has (skill_correction_rates.undated_events)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboards import charts, data, layout, text
from dashboards.queries import skills as queries


def build_window(frame: pd.DataFrame, column: str) -> int | None:
    """The window in days a mart was built with (dbt var, recorded on every row); None when the mart is empty."""
    values = frame[column].dropna()
    return int(values.iloc[0]) if not values.empty else None


def days(window: int | None, unknown: str) -> str:
    return f"{window} days" if window is not None else unknown


def p_text(name: str, value: float) -> str:
    return f"{name}<0.001" if value < 0.001 else f"{name}={value:.3f}"


def undated_note(rates: pd.DataFrame) -> tuple[str, pd.DataFrame] | None:
    """What to say about the undated events, and the skills that have some; None when there are none."""
    undated = rates.loc[rates["undated_events"].fillna(0) > 0, ["skill_id", "undated_events"]]
    if undated.empty:
        return None
    total = int(undated["undated_events"].sum())
    said = (
        f"Undated events: {total:,} (the analyzer wrote no timestamp for them). They fall in no window on this "
        "page and count in no rate; per skill:"
    )
    return said, undated.sort_values(["undated_events", "skill_id"], ascending=[False, True])


def trend_label(row: Any) -> str:
    """skill: direction, p and BH q-value (* when significant); n/a when a window is empty (no trend at all)."""
    if pd.isna(row.trend):
        return f"{row.skill_id}: n/a (a window has no events)"
    if row.direction == "insufficient_data":
        return f"{row.skill_id}: insufficient data"
    if pd.isna(row.p_value):
        return f"{row.skill_id}: {row.direction}, no test"
    mark = " *" if row.is_significant else ""
    return f"{row.skill_id}: {row.direction}, {p_text('p', row.p_value)}, {p_text('q', row.q_value)}{mark}"


status, f = layout.page("Skills")
if layout.tenantless("Skills (analyzer events)"):
    st.stop()
as_of = status.as_of.isoformat() if status.as_of else "the build"
try:  # one query for the three skill marts (the sections below would each fail alike)
    rates, trends, hotspots = (
        queries.skill_correction_rates(),
        queries.skill_correction_trends(),
        queries.skill_dimension_hotspots(),
    )
except data.WarehouseUnavailable as exc:
    st.warning(f"The skill marts are unavailable: {exc}")
    st.stop()
# The windows the marts were built with (vars correction_lookback_days and trend_window_days of that build).
lookback = days(build_window(rates, "correction_lookback_days"), "the lookback window")
recent_window = days(build_window(trends, "trend_window_days"), "the recent window")
layout.scope(
    f,
    f"Ranking, trends and hotspots are the marts' windows as of {as_of} (rates over the last {lookback}, trend "
    f"= last {recent_window} vs the {recent_window} before); the weekly chart and the events follow the period. "
    "Analyzer events carry no tenant.",
)

st.subheader("Correction-rate ranking")
with layout.section("Correction rates"):
    insufficient = rates[~rates["sufficient_data"].fillna(False).astype(bool)]
    if not insufficient.empty:
        st.warning(
            "Insufficient data for "
            + ", ".join(
                f"{text.markdown(row.skill_id)} (n = {row.sample_size}"
                + (f"; {row.undated_events:,} undated, in no window)" if row.undated_events else ")")
                for row in insufficient.itertuples()
            )
            + ": fewer invocations than the minimum (dbt var `min_invocations`). Their rates are shown hatched "
            "in grey, below the ranked skills, and should not be compared."
        )
    ranked = pd.concat([rates.drop(insufficient.index), insufficient]).dropna(subset=["correction_rate"])
    ranked["label"] = [
        f"{skill} (n={n:,})" if ok else f"{skill} (n={n:,}, insufficient data)"
        for skill, n, ok in zip(ranked["skill_id"], ranked["sample_size"], ranked["sufficient_data"], strict=True)
    ]
    charts.show(
        ranked,
        lambda frame: charts.rate_bars(
            frame,
            category="label",
            rate="correction_rate",
            low="correction_rate_ci_low",
            high="correction_rate_ci_high",
            title="Correction rate by skill",
            subtitle=f"Error bars: 95% CI. {lookback} to {as_of}; hatched grey: insufficient data",
            rate_title="Correction rate (% of invocations; a partial counts one half)",
            category_title="Skill",
            horizontal=True,
            colour=[charts.PALETTE[0] if ok else "#bdbdbd" for ok in frame["sufficient_data"]],
            patterns=["" if ok else "/" for ok in frame["sufficient_data"]],
        ).update_layout(height=max(300, 60 + 28 * len(frame))),
        f"No analyzer events in the last {lookback}: no skill to rank.",
    )
    note = undated_note(rates)
    if note is not None:
        said, undated = note
        st.info(said)
        layout.table(
            undated,
            "skill_undated_events",
            hide_index=True,
            column_config={"skill_id": "Skill", "undated_events": "Undated events"},
        )

st.subheader(f"Trend: last {recent_window} vs the {recent_window} before")
with layout.section("Trends"):
    if trends.empty:
        st.info("No skill has events in either trend window.")
    else:
        tested = int(trends["q_value"].notna().sum())
        # A NULL trend (a window without events) stays missing: no bar, "n/a" in its label; never a bar at 0.
        trends = trends.assign(label=[trend_label(row) for row in trends.itertuples()]).astype(
            {"trend": float, "trend_ci_low": float, "trend_ci_high": float}
        )
        figure = charts.rate_bars(
            trends,
            category="label",
            rate="trend",
            low="trend_ci_low",
            high="trend_ci_high",
            title=f"Change in correction rate: last {recent_window} minus the {recent_window} before",
            subtitle=(
                "Error bars: 95% CI of the difference; * significant, Benjamini-Hochberg q <= 0.05 over the "
                f"{tested} skills tested (z-test); n/a: no bar, a window has no events. As of {as_of}"
            ),
            rate_title="Change in correction rate (percentage points; + is worse)",
            category_title="Skill",
            horizontal=True,
            colour=[charts.DIRECTION_COLOURS.get(direction, "#90a4ae") for direction in trends["direction"]],
            patterns=["/" if direction == "insufficient_data" else "" for direction in trends["direction"]],
        )
        figure.update_xaxes(tickformat="+.0%", rangemode="normal", zeroline=True)
        figure.update_layout(height=max(300, 60 + 28 * len(trends)))
        st.plotly_chart(figure)
        layout.table(
            trends[
                ["skill_id", "direction", "recent_rate", "prior_rate", "recent_sample", "prior_sample", "trend"]
                + ["p_value", "q_value", "is_significant"]
            ],
            "skill_correction_trends",
            hide_index=True,
            column_config={
                "recent_rate": st.column_config.NumberColumn(f"Last {recent_window}", format="percent"),
                "prior_rate": st.column_config.NumberColumn(f"{recent_window.capitalize()} before", format="percent"),
                "trend": st.column_config.NumberColumn("Change", format="percent"),
                "p_value": st.column_config.NumberColumn("p-value", format="%.4f"),
                "q_value": st.column_config.NumberColumn(
                    "q-value (BH)",
                    format="%.4f",
                    help="p-value adjusted for testing every skill at once (Benjamini-Hochberg false discovery rate)",
                ),
                "is_significant": "Significant (q <= 0.05)",
            },
        )

st.subheader("Hotspots: where corrections land")
with layout.section("Hotspots"):
    hotspot_lookback = days(build_window(hotspots, "correction_lookback_days"), lookback)
    charts.show(
        hotspots,
        lambda frame: charts.count_heatmap(
            frame.pivot_table(index="skill_id", columns="dimension", values="occurrences", aggfunc="sum"),
            title="Corrections and partials by skill and dimension",
            subtitle=f"Events with a dimension hint, {hotspot_lookback} to {as_of}",
            x_title="Dimension (analyzer dimension_hint)",
            y_title="Skill",
            colorbar_title="events",
            hover_label="corrections and partials",
        ),
        f"No correction or partial with a dimension in the last {hotspot_lookback}.",
    )

st.subheader("A skill's recent events")
with layout.section("Skill drill-down"):
    skills = sorted(set(rates["skill_id"]) | set(trends["skill_id"]))
    if not skills:
        st.info("No skills yet.")
    else:
        # Open on the skill most worth a look: the largest significant worsening, else the highest rate.
        if st.session_state.get("skill") not in skills:
            skill_trends = queries.skill_correction_trends()  # sorted by trend, largest first
            significant = skill_trends["is_significant"].fillna(False).astype(bool)  # BH q <= 0.05
            worsening = skill_trends[(skill_trends["direction"] == "worsening") & significant]
            ranked_skills = rates["skill_id"].tolist()  # sufficient data first, by rate
            st.session_state["skill"] = (
                worsening["skill_id"].iloc[0] if not worsening.empty else (ranked_skills or skills)[0]
            )
        skill = st.selectbox("Skill", skills, key="skill", format_func=text.visible)
        weekly, events = queries.skill_detail(skill, f.start, f.end, f.retained)
        charts.show(
            weekly.dropna(subset=["correction_rate"]).assign(skill_id=skill),
            lambda frame: charts.rate_lines(
                frame,
                x="week_start",
                y="correction_rate",
                low="correction_rate_ci_low",
                high="correction_rate_ci_high",
                color="skill_id",
                title=f"Weekly correction rate of {text.plotly(skill)}",
                subtitle=f"Bands: 95% CI. Weeks overlapping {f.period_label()}",
                x_title="Week starting (UTC, Monday)",
                y_title="Correction rate (% of invocations)",
                legend_title="Skill",
                hover_count="sample_size",
            ),
            f"No events of {text.markdown(skill)} in the weeks of this period.",
        )
        skill_undated = rates.loc[rates["skill_id"] == skill, "undated_events"].fillna(0).sum()
        if skill_undated:
            # no skill id in markdown: an upstream value is shown as text only (in the selector above)
            st.caption(f"Not listed: {int(skill_undated):,} undated event(s) of this skill, in no period.")
        if events.empty:
            st.info(f"No events of {text.markdown(skill)} in {f.period_label()}.")
        else:
            matching = int(events["matching"].iloc[0])
            st.caption(
                f"The latest {len(events):,} of {matching:,} events of {text.markdown(skill)} in {f.period_label()}."
            )
            has_snippets = events["user_message_snippet"].notna().any()
            shown = events.drop(columns=["matching"] + ([] if has_snippets else ["user_message_snippet"]))
            if not has_snippets:
                st.caption(
                    "No message snippets were ingested for these events (`ingest analyzer --no-snippets` or "
                    "privacy mode): outcomes only."
                )
            layout.table(
                shown,
                "skill_invocations",
                hide_index=True,
                column_config={
                    "invoked_at": st.column_config.DatetimeColumn("Invoked at (UTC)", format="YYYY-MM-DD HH:mm"),
                    "user_message_snippet": st.column_config.TextColumn("User message (snippet)", width="large"),
                },
            )
