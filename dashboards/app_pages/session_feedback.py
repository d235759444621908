"""Session feedback: positive and skip rate over time by surface, by modality (text or voice), by turn-count
bucket, responses per day.

Daily series: session_feedback_daily, session_feedback_by_modality; the period's rates, overall, per modality
and per turn-count bucket: metric_rates_by_period (dashboards/queries/session_feedback.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboards import charts, layout, words
from dashboards.queries import session_feedback

RATE_COLUMNS = ["segment_value", "segment_order", "trials", "rate", "rate_ci_low", "rate_ci_high"]


def segment_rates(segments: pd.DataFrame, key: str) -> pd.DataFrame:
    """The period's positive and skip rates of one segment type side by side, one row per segment (`key`), with
    their samples (`rated`, `responses`): rows of metric_rates_by_period put together, nothing computed."""

    def one(metric: str, name: str, count: str) -> pd.DataFrame:
        rows = segments.loc[segments["metric"] == metric, RATE_COLUMNS]
        return rows.rename(
            columns={
                "segment_value": key,
                "trials": count,
                "rate": name,
                "rate_ci_low": f"{name}_ci_low",
                "rate_ci_high": f"{name}_ci_high",
            }
        )

    merged = one("session_positive_rate", "positive_rate", "rated").merge(
        one("session_skip_rate", "skip_rate", "responses"), on=[key, "segment_order"], how="outer"
    )
    merged = merged.fillna({"rated": 0, "responses": 0}).sort_values(["segment_order", key])
    merged["rated_label"] = [
        f"{value} (n = {words.count(n)})" for value, n in zip(merged[key], merged["rated"], strict=True)
    ]
    merged["responses_label"] = [
        f"{value} (n = {words.count(n)})" for value, n in zip(merged[key], merged["responses"], strict=True)
    ]
    return merged


status, f = layout.page("Session feedback")
if layout.tenantless("Session feedback (end-of-session answers)"):
    st.stop()
layout.scope(f, "End-of-session answers carry no tenant or project. Every section covers this period.")

# end-of-session answers have no tenant or project: under such a filter every number here would be every tenant's
reading = words.not_split(f.tenant, f.project)
CARDS = (
    ("Responses", "Answers recorded in the period, skips too."),
    ("Positive rate", "positive / (positive + negative) answers; skipped answers left out."),
    ("Skip rate", "Skipped answers / all answers."),
)
if reading is not None:
    for column, (label, definition) in zip(st.columns(len(CARDS)), CARDS, strict=True):
        column.metric(label, f":small[{reading}]", help=definition, border=True)  # words, not a number
    layout.not_split(f, "Session feedback by surface, modality and session length")
    st.stop()

with layout.section("Session feedback by surface"):
    daily = session_feedback.session_feedback_daily(f.start, f.end, f.retained)
    daily = daily.assign(surface=daily["surface"].map(words.surface))
    totals = session_feedback.session_feedback_rates(f.as_of, f.period_days, f.retained).set_index("metric")
    positive = totals.loc["session_positive_rate"] if "session_positive_rate" in totals.index else None
    skip = totals.loc["session_skip_rate"] if "session_skip_rate" in totals.index else None
    responses = int(skip["trials"]) if skip is not None else 0
    has_positive = positive is not None and not pd.isna(positive["rate"])
    has_skip = skip is not None and not pd.isna(skip["rate"])
    columns = st.columns(len(CARDS))
    (_, responses_help), (_, positive_help), (_, skip_help) = CARDS
    columns[0].metric("Responses", words.count(responses), help=responses_help, border=True)
    columns[1].metric(
        "Positive rate",
        words.percent(positive["rate"]) if has_positive else "no data",
        help=positive_help,
        border=True,
    )
    columns[2].metric("Skip rate", words.percent(skip["rate"]) if has_skip else "no data", help=skip_help, border=True)
    if has_positive:
        columns[1].caption(
            f"95% CI {words.rate_interval(positive['rate_ci_low'], positive['rate_ci_high'])} "
            f"(n = {words.count(positive['trials'])} rated)"
        )
    if has_skip:
        columns[2].caption(f"95% CI {words.rate_interval(skip['rate_ci_low'], skip['rate_ci_high'])}")

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

st.subheader("By modality: text or voice")
with layout.section("Session feedback by modality"):
    st.caption("The channel the user rated, as upstream records it; a record without one is text (upstream's default).")
    by_modality = session_feedback.session_feedback_rates(f.as_of, f.period_days, f.retained, "modality")
    modalities = segment_rates(by_modality[by_modality["trials"] > 0], "modality")
    left, right = st.columns(2)
    with left:
        charts.show(
            modalities.dropna(subset=["positive_rate"]),
            lambda frame: charts.rate_bars(
                frame,
                category="rated_label",
                rate="positive_rate",
                low="positive_rate_ci_low",
                high="positive_rate_ci_high",
                title="Positive rate by modality",
                subtitle=f"Error bars: 95% CI. {f.period_label()}",
                rate_title="Positive rate (% of rated answers)",
                category_title="Modality (answers)",
            ),
            "No rated answers in this period.",
        )
    with right:
        charts.show(
            session_feedback.session_feedback_by_modality(f.start, f.end, f.retained),
            lambda frame: charts.stacked_bars(
                frame,
                x="feedback_date",
                y="responses",
                color="modality",
                title="Responses per day by modality",
                subtitle=f.period_label(),
                x_title=charts.DATE_AXIS,
                y_title="Responses (count per day)",
                legend_title="Modality",
            ),
            "No responses in this period.",
        )
    if modalities.empty:
        st.info("No answers in this period.")
    else:
        layout.table(
            modalities[
                [
                    "modality",
                    "positive_rate",
                    "skip_rate",
                    "responses",
                    "positive_rate_ci_low",
                    "positive_rate_ci_high",
                    "skip_rate_ci_low",
                    "skip_rate_ci_high",
                ]
            ],
            "session_feedback_by_modality",
            hide_index=True,
            column_config={
                "modality": st.column_config.TextColumn("Modality", width=80),
                "positive_rate": st.column_config.NumberColumn("Positive rate", format="percent", width=100),
                "skip_rate": st.column_config.NumberColumn("Skip rate", format="percent", width=80),
                "responses": st.column_config.NumberColumn("Responses", format="localized", width=90),
                "positive_rate_ci_low": st.column_config.NumberColumn("Positive rate, 95% CI from", format="percent"),
                "positive_rate_ci_high": st.column_config.NumberColumn("Positive rate, 95% CI to", format="percent"),
                "skip_rate_ci_low": st.column_config.NumberColumn("Skip rate, 95% CI from", format="percent"),
                "skip_rate_ci_high": st.column_config.NumberColumn("Skip rate, 95% CI to", format="percent"),
            },
        )

st.subheader("By turn count at the end of the session")
with layout.section("Session feedback by turn-count bucket"):
    by_bucket = session_feedback.session_feedback_rates(f.as_of, f.period_days, f.retained, "turn_count_bucket")
    buckets = segment_rates(by_bucket[by_bucket["trials"] > 0], "turn_count_bucket")  # buckets with answers
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
