"""The report's rate sections: the headline rates of the period, their weekly trend, session feedback by modality.
Every number is a mart's (metric_rates_by_period through the dashboard's queries), formatted by dashboards/words.py.
"""

from __future__ import annotations

import pandas as pd

from dashboards import charts, words
from dashboards.queries import overview, session_feedback
from dashboards.queries.period_rates import weekly_rates
from dashboards.report import context
from dashboards.report.context import Context
from dashboards.report.markup import Builder, table

TREND_WEEKS = 12


def significance(row: pd.Series, lower_is_better: bool) -> str:
    """A change's significance in words: "significantly worse", "significantly better" or "not significant"."""
    if pd.isna(row["rate_change"]) or not row["is_significant_change"]:
        return "not significant"
    better = (row["rate_change"] < 0) == lower_is_better
    return "significantly better" if better else "significantly worse"


def headline_rates(ctx: Context) -> pd.DataFrame:
    f = ctx.f
    return overview.headline_rates(f.as_of, f.period_days, f.retained, f.tenant, f.project).set_index("metric")


def headlines(report: Builder, ctx: Context) -> None:
    f = ctx.f
    rates = headline_rates(ctx)
    left_out = ctx.left_out()
    report.heading(
        f"Headline rates, {f.period_label()}",
        f"Against the {f.period_days} days before ({f.previous_label()}) · {f.scope_label()} · "
        f"{f.retention_label()}. Intervals are 95% (Wilson); a change is significant when its 95% (Newcombe) "
        "interval excludes zero.",
        anchor=context.HEADLINES,
    )
    rows, shown = [], []
    for metric, label, lower_is_better, definition in overview.HEADLINES:
        empty = dict.fromkeys(("95% CI", "Previous period", "Change", "95% CI of change", "Significant"), "")
        if left_out and metric in overview.TENANTLESS_HEADLINES:
            rows.append({"Rate": label, "This period": left_out, **empty, "n": "", "Definition": definition})
            continue
        if metric not in rates.index or pd.isna(rates.loc[metric, "rate"]):
            rows.append({"Rate": label, "This period": "no data", **empty, "n": "", "Definition": definition})
            continue
        row = rates.loc[metric]
        rows.append(
            {
                "Rate": label,
                "This period": words.percent(row["rate"]),
                "95% CI": words.rate_interval(row["rate_ci_low"], row["rate_ci_high"]),
                "Previous period": words.percent(row["previous_rate"]),
                "Change": words.points(row["rate_change"]),
                "95% CI of change": words.points_interval(row["rate_change_ci_low"], row["rate_change_ci_high"]),
                "Significant": significance(row, lower_is_better),
                "n": words.count(row["trials"]),
                "Definition": definition,
            }
        )
        shown.append(
            {"label": f"{label} (n = {words.count(row['trials'])})", **row[["rate", "rate_ci_low", "rate_ci_high"]]}
        )
    report.raw(table(rows, numbers=("This period", "Previous period", "Change", "n")))
    if shown:
        report.chart(
            charts.rate_bars(
                pd.DataFrame(shown),
                category="label",
                rate="rate",
                low="rate_ci_low",
                high="rate_ci_high",
                title=f"Headline rates, {f.period_label()}",
                rate_title="Rate (95% CI)",
                category_title="Rate",
            ),
            f"Data as of {f.as_of} (UTC), {f.scope_label()}, {f.retention_label()}",
        )


def trends(report: Builder, ctx: Context) -> None:
    f = ctx.f
    labels = {metric: label for metric, label, *_ in overview.HEADLINES}
    metrics = overview.HEADLINE_METRICS
    if ctx.left_out():  # the rates of sources without a tenant would be every tenant's
        metrics = tuple(metric for metric in metrics if metric not in overview.TENANTLESS_HEADLINES)
    weekly = weekly_rates(f.as_of, TREND_WEEKS, f.retained, f.tenant, f.project, metrics)
    report.heading(
        f"Weekly trends, the {TREND_WEEKS} weeks to {f.as_of}",
        "Each point is the 7 days ending on that day; bands are 95% intervals."
        + (" Session feedback and the correction rate: not split by tenant." if ctx.left_out() else ""),
        anchor=context.TRENDS,
    )
    if weekly.empty:
        report.text("No rate has data in these weeks.")
        return
    weekly = weekly.assign(rate_name=weekly["metric"].map(labels))
    report.chart(
        charts.rate_lines(
            weekly,
            x="as_of_date",
            y="rate",
            low="rate_ci_low",
            high="rate_ci_high",
            color="rate_name",
            title="Headline rates per week",
            y_title="Rate (7 days ending on the day)",
            x_title="Week ending (UTC day)",
            legend_title="Rate",
            hover_count="trials",
        ),
        f"Data as of {f.as_of} (UTC), {f.scope_label()}, {f.retention_label()}",
    )


def session_modality(report: Builder, ctx: Context) -> None:
    f = ctx.f
    heading = f"Session feedback by modality, {f.period_label()}"
    if ctx.closed(report, heading, context.MODALITY):
        return
    rates = session_feedback.session_feedback_rates(f.as_of, f.period_days, f.retained, "modality")
    rates = rates[rates["trials"] > 0]
    report.heading(
        heading,
        f"{f.retention_label().capitalize()}. The channel the user rated, text or voice (a record without one is "
        "text, upstream's default); 95% Wilson intervals. Session feedback carries no tenant: all tenants.",
        anchor=context.MODALITY,
    )
    if rates.empty:
        report.text("No end-of-session answer in this period.")
        return
    by_metric = {metric: rows.set_index("segment_value") for metric, rows in rates.groupby("metric")}
    positive = by_metric.get("session_positive_rate", pd.DataFrame())
    skip = by_metric.get("session_skip_rate", pd.DataFrame())
    rows, shown = [], []
    for modality in sorted(set(positive.index) | set(skip.index)):
        pos = positive.loc[modality] if modality in positive.index else None
        skp = skip.loc[modality] if modality in skip.index else None
        rows.append(
            {
                "Modality": str(modality),
                "Responses": words.count(skp["trials"]) if skp is not None else "0",
                "Positive rate": words.percent(pos["rate"]) if pos is not None else words.MISSING,
                "95% CI": words.rate_interval(pos["rate_ci_low"], pos["rate_ci_high"]) if pos is not None else "n/a",
                "Skip rate": words.percent(skp["rate"]) if skp is not None else words.MISSING,
                "95% CI of skip rate": (
                    words.rate_interval(skp["rate_ci_low"], skp["rate_ci_high"]) if skp is not None else "n/a"
                ),
            }
        )
        if pos is not None and not pd.isna(pos["rate"]):
            label = f"{modality} (n = {words.count(pos['trials'])})"
            shown.append({"label": label, **pos[["rate", "rate_ci_low", "rate_ci_high"]]})
    report.raw(table(rows, numbers=("Responses", "Positive rate", "Skip rate")))
    if shown:
        report.chart(
            charts.rate_bars(
                pd.DataFrame(shown),
                category="label",
                rate="rate",
                low="rate_ci_low",
                high="rate_ci_high",
                title=f"Session positive rate by modality, {f.period_label()}",
                rate_title="Positive rate (% of rated answers, 95% CI)",
                category_title="Modality (rated answers)",
            ),  # fmt: skip
            f"Data as of {f.as_of} (UTC), all tenants, {f.retention_label()}",
        )
