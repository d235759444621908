"""The report's skill sections, each over the fixed windows of the last build (stated in its title in words):
what got significantly worse per skill and dimension (skill_dimension_changes), per skill
(skill_correction_trends), and the change of every skill x dimension cell (skill_dimension_changes)."""

from __future__ import annotations

import pandas as pd

from dashboards import charts, words
from dashboards.queries import skills as skill_queries
from dashboards.report import context
from dashboards.report.context import Context
from dashboards.report.markup import Builder, table


def windows_in_words(days: int) -> str:
    return f"last {days} days vs the {days} days before"


def significant_worsenings(changes: pd.DataFrame) -> pd.DataFrame:
    return changes[changes["is_significant_worsening"].fillna(False).astype(bool)]


def window_days(changes: pd.DataFrame) -> int | None:
    """The length of skill_dimension_changes' windows in days, first and last day inclusive (None: no rows)."""
    if changes.empty:
        return None
    first = changes.iloc[0]
    return (first["recent_end"] - first["recent_start"]).days + 1


def change_windows(changes: pd.DataFrame) -> tuple[str, str]:
    """The windows of skill_dimension_changes: in words (title) and as dates (note)."""
    days = window_days(changes)
    if days is None:
        return "the last build's trend windows", ""
    first = changes.iloc[0]
    dates = (
        f"{first['recent_start']:%Y-%m-%d} to {first['recent_end']:%Y-%m-%d} against "
        f"{first['prior_start']:%Y-%m-%d} to {first['prior_end']:%Y-%m-%d}"
    )
    return windows_in_words(days), dates


def dimension_changes(report: Builder, ctx: Context) -> None:
    heading = "Got significantly worse: skill and dimension"
    if ctx.closed(report, heading, context.DIMENSION_CHANGES):
        return
    changes = skill_queries.skill_dimension_changes()
    worse = significant_worsenings(changes)
    in_words, dates = change_windows(changes)
    tested = int(changes["p_value"].notna().sum())
    report.heading(
        f"{heading}, {in_words}",
        f"{dates + ', ' if dates else ''}{ctx.built}. A dimension's rate is its corrections and partial corrections "
        "per invocation of the skill (every invocation, whatever its dimension). Significant after the "
        f"Benjamini-Hochberg correction over the {words.count(tested)} skill and dimension pairs tested. "
        "Analyzer events carry no tenant: all tenants.",
        anchor=context.DIMENSION_CHANGES,
    )
    if worse.empty:
        report.text(f"Nothing got significantly worse ({words.count(tested)} skill and dimension pairs tested).")
        return
    report.raw(
        table(
            [
                {
                    "Skill": row.skill_id,
                    "Dimension": str(row.dimension),
                    "Change": words.points(row.rate_change),
                    "95% CI of change": words.points_interval(row.rate_change_ci_low, row.rate_change_ci_high),
                    "Recent rate": words.percent(row.recent_rate),
                    "Before": words.percent(row.prior_rate),
                    "Invocations recent / before": (
                        f"{words.count(row.recent_invocations)} / {words.count(row.prior_invocations)}"
                    ),
                    "q-value": words.probability(row.q_value),
                }
                for row in worse.itertuples()
            ],
            numbers=("Change", "Recent rate", "Before", "Invocations recent / before", "q-value"),
        )
    )


def skill_trends(report: Builder, ctx: Context) -> None:
    heading = "Skills that got significantly worse"
    if ctx.closed(report, heading, context.SKILL_TRENDS):
        return
    trends = skill_queries.skill_correction_trends()
    worse = trends[(trends["direction"] == "worsening") & trends["is_significant"].fillna(False).astype(bool)]
    window = int(trends["trend_window_days"].iloc[0]) if not trends.empty else 0
    report.heading(
        f"{heading}, {windows_in_words(window)}",
        f"Correction rate (corrections plus half of the partial corrections, per invocation), two-proportion "
        f"z-test, significant after the Benjamini-Hochberg correction over every skill tested; {ctx.built}. "
        "Analyzer events carry no tenant: all tenants.",
        anchor=context.SKILL_TRENDS,
    )
    if worse.empty:
        report.text(f"No skill got significantly worse ({words.count(len(trends))} skills tested).")
        return
    report.raw(
        table(
            [
                {
                    "Skill": row.skill_id,
                    "Recent rate": words.percent(row.recent_rate),
                    "Before": words.percent(row.prior_rate),
                    "Change": words.points(row.trend),
                    "95% CI of change": words.points_interval(row.trend_ci_low, row.trend_ci_high),
                    "p-value": words.probability(row.p_value),
                    "q-value": words.probability(row.q_value),
                    "Invocations recent / before": (
                        f"{words.count(row.recent_sample)} / {words.count(row.prior_sample)}"
                    ),
                }
                for row in worse.itertuples()
            ],
            numbers=("Recent rate", "Before", "Change", "p-value", "q-value", "Invocations recent / before"),
        )
    )
    # the change in percentage points: the chart's axis reads pp, as the table does
    bars = worse.assign(label=worse["skill_id"], change=worse["trend"] * 100, low=worse["trend_ci_low"] * 100,
                        high=worse["trend_ci_high"] * 100)  # fmt: skip
    figure = charts.rate_bars(bars, category="label", rate="change", low="low", high="high", horizontal=True,
                              colour=charts.DIRECTION_COLOURS["worsening"], title="Change of the correction rate",
                              rate_title="Change (recent minus before, 95% CI)", category_title="Skill")  # fmt: skip
    figure.update_xaxes(tickformat="+.0f", ticksuffix=" pp", rangemode="tozero")
    figure.update_layout(height=max(260, 150 + 40 * len(bars)))
    report.chart(figure, f"Data {ctx.built}")


def hotspots(report: Builder, ctx: Context) -> None:
    """Where each skill got worse or better, dimension by dimension: the change heatmap the Skills page draws."""
    heading = "Change by skill and dimension"
    if ctx.closed(report, heading, context.HOTSPOTS):
        return
    changes = skill_queries.skill_dimension_changes()
    in_words, dates = change_windows(changes)
    report.heading(
        f"{heading}, {in_words}",
        f"{dates + ', ' if dates else ''}{ctx.built}. The change of each dimension's rate in percentage points: red "
        "got worse, blue better; * significant after the Benjamini-Hochberg correction. Empty: no correction on that "
        "dimension in either window.",
        anchor=context.HOTSPOTS,
    )
    cells = changes.dropna(subset=["rate_change"])
    if cells.empty:
        report.text("No skill has a correction with a dimension in both windows: no change to show.")
        return
    report.chart(charts.dimension_change_heatmap(cells, f"{window_days(changes)} days"), f"Data {ctx.built}")
