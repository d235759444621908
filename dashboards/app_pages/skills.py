"""Skills: what got significantly worse (skill and dimension), correction-rate ranking, trend direction, the
change per skill and dimension, a skill's weekly rate and recent events.

Reads skill_dimension_changes, skill_correction_rates, skill_correction_trends with
skill_correction_trend_intervals (the change's interval), skill_correction_weekly and the retained or stored
analyzer events (dashboards/queries/skills.py). The fixed windows of the marts are stated in each section's
title; the weekly chart and the events follow the period. Analyzer events carry no tenant: with a tenant or a
project selected every section says so in place of its numbers. Undated events (the analyzer wrote no
timestamp) are in no window: the page says how many each skill has (skill_correction_rates.undated_events)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboards import charts, data, layout, text, words
from dashboards.queries import skills as queries


def build_window(frame: pd.DataFrame, column: str) -> int | None:
    """The window in days a mart was built with (dbt var, recorded on every row); None when the mart is empty."""
    values = frame[column].dropna()
    return int(values.iloc[0]) if not values.empty else None


def days(window: int | None, unknown: str) -> str:
    return f"{window} days" if window is not None else unknown


DIRECTIONS = {
    "worsening": "worse",
    "improving": "better",
    "stable": "stable",
    "insufficient_data": "too few invocations",
}
SECTIONS = (
    "Got significantly worse",
    "Correction-rate ranking",
    "Trend",
    "Change by skill and dimension",
    "A skill's weekly rate and events",
)


def change_window(changes: pd.DataFrame, unknown: str) -> str:
    """The length of skill_dimension_changes' recent window in days (its first to its last day), as words."""
    if changes.empty:
        return unknown
    first = changes.iloc[0]
    return days((pd.Timestamp(first.recent_end) - pd.Timestamp(first.recent_start)).days + 1, unknown)


def windows_caption(changes: pd.DataFrame) -> str:
    """The two trend windows of skill_dimension_changes as dates (the same on every row)."""
    first, window = changes.iloc[0], change_window(changes, "the recent window")
    return (
        f"Last {window}: {first.recent_start:%Y-%m-%d} to {first.recent_end:%Y-%m-%d}; the {window} before: "
        f"{first.prior_start:%Y-%m-%d} to {first.prior_end:%Y-%m-%d} (UTC)."
    )


def worsening_line(row: Any) -> str:
    """One significant worsening in words: skill, dimension, by how much, its interval, both rates and their n."""
    interval = words.points_interval(row.rate_change_ci_low, row.rate_change_ci_high)
    return (
        f"- {text.markdown(row.skill_id)}, **{text.markdown(words.dimension(row.dimension))}**: "
        f"**{words.points(row.rate_change)}** (95% CI {interval}): "
        f"{words.percent(row.recent_rate)} of {words.count(row.recent_invocations)} invocations drew a correction "
        f"on it, against {words.percent(row.prior_rate)} of {words.count(row.prior_invocations)} before "
        f"(q {words.probability(row.q_value)})"
    )


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
    """skill: direction in words (* when significant after BH); n/a when a window is empty (no trend at all).
    The p- and q-values are in the hover and the table, explained in their tooltips, not in the axis."""
    if pd.isna(row.trend):
        return f"{row.skill_id}: n/a (a window has no events)"
    mark = " *" if row.is_significant else ""
    return f"{row.skill_id}: {DIRECTIONS.get(row.direction, row.direction)}{mark}"


status, f = layout.page("Skills")
if layout.tenantless("Skills (analyzer events)"):
    st.stop()
if words.not_split(f.tenant, f.project):
    # analyzer events carry no tenant or project: every section says so in place of its numbers
    layout.scope(f, "Analyzer events carry no tenant or project.")
    for name in SECTIONS:
        st.subheader(name)
        layout.not_split(f, name)
    st.stop()
as_of = status.as_of.isoformat() if status.as_of else "the build"
try:  # one query for the three skill marts (the sections below would each fail alike)
    rates, trends = queries.skill_correction_rates(), queries.skill_correction_trends()
except data.WarehouseUnavailable as exc:
    st.warning(f"The skill marts are unavailable: {exc}")
    st.stop()
# The windows the marts were built with (vars correction_lookback_days and trend_window_days of that build).
lookback = days(build_window(rates, "correction_lookback_days"), "the lookback window")
recent_window = days(build_window(trends, "trend_window_days"), "the recent window")
q_help = words.q_value_help(status.trend_significance_level)  # the level of that build (var, via build_info)
layout.scope(
    f,
    f"Each section's title states its window (as of {as_of}); only the weekly chart and the events of the last "
    "section follow the period. Analyzer events carry no tenant.",
)

try:
    changes = queries.skill_dimension_changes()
except data.WarehouseUnavailable as exc:
    st.warning(f"The change by skill and dimension is unavailable: {exc}")
    changes = None
change = change_window(changes if changes is not None else pd.DataFrame(), "the recent window")
st.subheader(f"Got significantly worse: last {change} vs the {change} before")
with layout.section("Got significantly worse"):
    if changes is None:
        pass
    elif changes.empty:
        st.info("No skill has a correction or partial with a dimension in either window: nothing to compare.")
    else:
        tested = int(changes["q_value"].notna().sum())
        worse = changes[changes["is_significant_worsening"].fillna(False).astype(bool)]
        st.caption(
            windows_caption(changes) + " A dimension's rate: the skill's corrections and partials on that "
            "dimension per invocation of the skill (every invocation counts)."
        )
        if worse.empty:
            st.success(
                f"Nothing got significantly worse (last {change} vs the {change} before, "
                f"{words.count(tested)} skill x dimension cells tested)."
            )
        else:
            st.markdown(
                f"**{words.count(len(worse))}** of {words.count(tested)} skill x dimension cells tested got "
                "significantly worse:\n\n" + "\n".join(worsening_line(row) for row in worse.itertuples()),
                help=q_help,
            )

st.subheader(f"Correction-rate ranking: last {lookback}")
with layout.section("Correction rates"):
    insufficient = rates[~rates["sufficient_data"].fillna(False).astype(bool)]
    if not insufficient.empty:
        st.warning(
            "Too few invocations to rank: "
            + ", ".join(
                f"{text.markdown(row.skill_id)} (n = {words.count(row.sample_size)}"
                + (f"; {words.count(row.undated_events)} undated, in no window)" if row.undated_events else ")")
                for row in insufficient.itertuples()
            )
            + ". Their rates are shown hatched in grey, below the ranked skills, and should not be compared."
        )
    ranked = pd.concat([rates.drop(insufficient.index), insufficient]).dropna(subset=["correction_rate"])
    ranked["label"] = [
        f"{skill} (n={n:,})" if ok else f"{skill} (n={n:,}, too few)"
        for skill, n, ok in zip(ranked["skill_id"], ranked["sample_size"], ranked["sufficient_data"], strict=True)
    ]
    st.caption(
        f"Corrections per invocation over the last {lookback} to {as_of}, a partial counting one half. Error bars: "
        "95% CI; hatched grey: too few invocations."
    )
    charts.show(
        ranked,
        lambda frame: charts.rate_bars(
            frame,
            category="label",
            rate="correction_rate",
            low="correction_rate_ci_low",
            high="correction_rate_ci_high",
            title=f"Correction rate, last {lookback}",
            rate_title="% of invocations",
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
        # Drawn in percentage points: the marts' fractions times 100 (formatting only).
        shown = trends.assign(
            label=[trend_label(row) for row in trends.itertuples()],
            trend_points=trends["trend"].astype(float) * 100,
            low_points=trends["trend_ci_low"].astype(float) * 100,
            high_points=trends["trend_ci_high"].astype(float) * 100,
        )
        st.caption(
            "Change in correction rate, last minus before, in percentage points (+ is worse). Error bars: 95% CI "
            f"of the difference; * significant after the Benjamini-Hochberg correction over the {tested} skills "
            "tested; n/a: a window has no events."
        )
        figure = charts.rate_bars(
            shown,
            category="label",
            rate="trend_points",
            low="low_points",
            high="high_points",
            title="Change in correction rate",
            rate_title="Change (pp)",
            category_title="Skill",
            horizontal=True,
            colour=[charts.DIRECTION_COLOURS.get(direction, "#90a4ae") for direction in shown["direction"]],
            patterns=["/" if direction == "insufficient_data" else "" for direction in shown["direction"]],
        )
        figure.update_traces(
            hovertemplate="%{y}: %{x:+.1f} pp<br>95% CI %{customdata[0]:+.1f} to %{customdata[1]:+.1f} pp"
            "<extra></extra>"
        )
        figure.update_xaxes(tickformat="+.0f", ticksuffix=" pp", rangemode="normal", zeroline=True)
        figure.update_layout(height=max(300, 60 + 28 * len(shown)))
        st.plotly_chart(figure)
        layout.table(
            shown.assign(
                change=[words.points(value) for value in shown["trend"]],
                direction_words=[DIRECTIONS.get(value, value) for value in shown["direction"]],
                recent_rate=shown["recent_rate"] * 100,  # one decimal, as every rate on the page
                prior_rate=shown["prior_rate"] * 100,
                p_value=[words.probability(value) for value in shown["p_value"]],  # "< 0.0001", never "0.0000"
                q_value=[words.probability(value) for value in shown["q_value"]],
            )[
                ["skill_id", "change", "direction_words", "recent_rate", "prior_rate", "recent_sample"]
                + ["prior_sample", "p_value", "q_value", "is_significant"]
            ],
            "skill_correction_trends",
            hide_index=True,
            column_config={
                "skill_id": "Skill",
                "change": st.column_config.TextColumn("Change", help="Last minus before, in percentage points"),
                "direction_words": "Direction",
                "recent_rate": st.column_config.NumberColumn(f"Last {recent_window} (%)", format="%.1f"),
                "prior_rate": st.column_config.NumberColumn(f"{recent_window.capitalize()} before (%)", format="%.1f"),
                "recent_sample": st.column_config.NumberColumn("Invocations, last", format="localized"),
                "prior_sample": st.column_config.NumberColumn("Invocations, before", format="localized"),
                "p_value": st.column_config.TextColumn("p-value", help=words.P_VALUE_HELP),
                "q_value": st.column_config.TextColumn("q-value", help=q_help),
                "is_significant": st.column_config.CheckboxColumn("Significant", help=q_help),
            },
        )

st.subheader(f"Change by skill and dimension: last {change} vs the {change} before")
with layout.section("Change by skill and dimension"):
    cells = (changes if changes is not None else pd.DataFrame(columns=["rate_change"])).dropna(subset=["rate_change"])
    if not cells.empty:
        st.caption(
            "Change in a dimension's rate (corrections and partials on it per invocation of the skill), in "
            "percentage points: red got worse, blue better; * significant after the Benjamini-Hochberg correction "
            "over every skill x dimension cell. Empty: no correction on that dimension in either window, or a "
            "window without invocations. " + windows_caption(changes)
        )
    charts.show(
        cells,
        lambda frame: charts.dimension_change_heatmap(frame, change),
        "No skill has a correction with a dimension in both windows: no change to show.",
    )

st.subheader(f"A skill's weekly rate and events: the period, {f.period_label()}")
with layout.section("Skill drill-down"):
    skills = sorted(set(rates["skill_id"]) | set(trends["skill_id"]))
    if not skills:
        st.info("No skills yet.")
    else:
        # Open on the skill most worth a look: the largest significant worsening, else the highest rate.
        if st.session_state.get("skill") not in skills:
            skill_trends = queries.skill_correction_trends()  # sorted by trend, largest first
            significant = skill_trends["is_significant"].fillna(False).astype(bool)  # q at or below the level
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
                title=f"Weekly correction rate, {text.plotly(skill, 24)}",
                subtitle="Bands: 95% CI. Weeks overlapping the period",
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
            # an acceptance has no dimension or correction type, an event may lack a snippet: a dash, not "None"
            blanks = [name for name in ("dimension_hint", "correction_type", "user_message_snippet") if name in shown]
            shown[blanks] = shown[blanks].astype(object).where(shown[blanks].notna(), "—")
            if not has_snippets:
                st.caption(
                    "No message snippets were ingested for these events (`ingest analyzer --no-snippets` or "
                    "privacy mode): outcomes only."
                )
            layout.table(
                shown,
                "skill_invocations",
                hide_index=True,
                # at phone width the first columns are what shows: when, what, on which dimension
                column_order=["invoked_at", "outcome", "dimension_hint"]
                + [column for column in shown.columns if column not in ("invoked_at", "outcome", "dimension_hint")],
                column_config={
                    "invoked_at": st.column_config.DatetimeColumn("Invoked at (UTC)", format="YYYY-MM-DD HH:mm"),
                    "outcome": "Outcome",
                    "dimension_hint": "Dimension",
                    "correction_type": "Correction type",
                    "confidence": st.column_config.NumberColumn("Confidence", format="%.2f"),
                    "turns_to_feedback": st.column_config.NumberColumn("Turns to feedback", format="localized"),
                    "ai_tools_used": "AI tools used",
                    "user_message_snippet": st.column_config.TextColumn("User message (snippet)", width="large"),
                    "session_id": "Session",
                    "event_id": "Event",
                },
            )
