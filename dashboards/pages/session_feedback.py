"""Session feedback: positive and skip rate over time by surface, by turn-count bucket, responses per day."""

from __future__ import annotations

import streamlit as st

from dashboards import charts, data, layout, stats

status, f = layout.page("Session feedback")
layout.scope(f, "End-of-session answers carry no tenant or project: those filters do not apply here.")

with layout.section("Session feedback by surface"):
    daily = data.session_feedback_daily(f.start, f.end, f.retained)
    totals = daily[["positive", "negative", "skip", "responses"]].sum()
    positive = stats.wilson(totals["positive"], totals["positive"] + totals["negative"])
    skip = stats.wilson(totals["skip"], totals["responses"])
    columns = st.columns(3)
    columns[0].metric("Responses", f"{int(totals['responses']):,}", help="Answers recorded in the period, skips too.")
    columns[1].metric(
        "Positive rate",
        "no data" if positive.value is None else f"{positive.value:.1%}",
        help="positive / (positive + negative); skips excluded.",
    )
    columns[2].metric("Skip rate", "no data" if skip.value is None else f"{skip.value:.1%}", help="skip / responses.")
    if positive.value is not None:
        columns[1].caption(f"95% CI {positive.low:.1%} to {positive.high:.1%}")
    if skip.value is not None:
        columns[2].caption(f"95% CI {skip.low:.1%} to {skip.high:.1%}")

    left, right = st.columns(2)
    with left:
        charts.show(
            daily.dropna(subset=["positive_rate"]),
            lambda frame: charts.rate_lines(
                frame,
                x="feedback_date",
                y="positive_rate",
                low="positive_rate_ci_low",
                high="positive_rate_ci_high",
                color="surface",
                title="Positive rate per day by surface",
                subtitle=f"Bands: 95% CI. {f.period_label()}",
                y_title="Positive rate (% of rated answers)",
                legend_title="Surface",
            ),
            "No rated answers (positive or negative) in this period.",
        )
    with right:
        charts.show(
            daily.dropna(subset=["skip_rate"]),
            lambda frame: charts.rate_lines(
                frame,
                x="feedback_date",
                y="skip_rate",
                low="skip_rate_ci_low",
                high="skip_rate_ci_high",
                color="surface",
                title="Skip rate per day by surface",
                subtitle=f"Bands: 95% CI. {f.period_label()}",
                y_title="Skip rate (% of responses)",
                legend_title="Surface",
                hover_count="responses",
            ),
            "No responses in this period.",
        )

    charts.show(
        daily,
        lambda frame: charts.stacked_bars(
            frame,
            x="feedback_date",
            y="responses",
            color="surface",
            title="Responses per day by surface",
            subtitle=f.period_label(),
            x_title=charts.DATE_AXIS,
            y_title="Responses (count per day)",
            legend_title="Surface",
        ),
        "No responses in this period.",
    )

st.subheader("By turn count at the end of the session")
with layout.section("Session feedback by turn-count bucket"):
    buckets = data.session_feedback_by_turn_bucket(f.start, f.end, f.retained)
    buckets = buckets.assign(rated=buckets["positive"] + buckets["negative"])
    buckets["rated_label"] = [
        f"{bucket} (n={int(n):,})" for bucket, n in zip(buckets["turn_count_bucket"], buckets["rated"], strict=True)
    ]
    buckets["responses_label"] = [
        f"{bucket} (n={int(n):,})" for bucket, n in zip(buckets["turn_count_bucket"], buckets["responses"], strict=True)
    ]
    buckets = stats.with_rate(buckets, "positive", "rated", "positive_rate")
    buckets = stats.with_rate(buckets, "skip", "responses", "skip_rate")
    left, right = st.columns(2)
    with left:
        charts.show(
            buckets.dropna(subset=["positive_rate"]),
            lambda frame: charts.rate_bars(
                frame,
                category="rated_label",
                rate="positive_rate",
                low="positive_rate_ci_low",
                high="positive_rate_ci_high",
                title="Positive rate by session length",
                subtitle=f"Error bars: 95% CI. {f.period_label()}",
                rate_title="Positive rate (% of rated answers)",
                category_title="Turns in the session (bucket, answers)",
            ),
            "No rated answers in this period.",
        )
    with right:
        charts.show(
            buckets.dropna(subset=["skip_rate"]),
            lambda frame: charts.rate_bars(
                frame,
                category="responses_label",
                rate="skip_rate",
                low="skip_rate_ci_low",
                high="skip_rate_ci_high",
                title="Skip rate by session length",
                subtitle=f"Error bars: 95% CI. {f.period_label()}",
                rate_title="Skip rate (% of responses)",
                category_title="Turns in the session (bucket, answers)",
                colour=charts.PALETTE[1],
            ),
            "No responses in this period.",
        )
