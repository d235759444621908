"""The Alerts page's evidence chart: a statistical alert's daily rate with its 95% Wilson band, the recent window
against the baseline window (shaded, named in the legend), and the baseline window's rate as a line.

Drawn with dashboards/charts.py `rate_lines` (one line per window, its band, titles wrapped for a phone); the
window's shading and the baseline line are added here. Values from upstream (the subject) reach the title only
through the caller, escaped with dashboards/text.py `plotly`."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import plotly.graph_objects as go

from dashboards import charts, words

WINDOWS = {"baseline": "baseline window", "recent": "recent window"}
RECENT_SHADE = "rgba(229, 57, 53, 0.08)"
BASELINE_LINE = "#455a64"


def evidence_chart(
    frame: pd.DataFrame, *, baseline_rate: float | None, title: str, subtitle: str, y_title: str
) -> go.Figure:
    """`frame`: alert_evidence_daily rows of one alert (evidence_date, window, rate, rate_ci_low, rate_ci_high,
    trials, successes); `baseline_rate`: its evaluation's baseline value (the line), None draws none."""
    frame = frame.assign(
        window_label=frame["evidence_window"].map(lambda window: WINDOWS.get(str(window), str(window))),
        counts=[
            f"{words.count(successes)} of {words.count(trials)}"
            for successes, trials in zip(frame["successes"], frame["trials"], strict=True)
        ],
    )
    figure = charts.rate_lines(
        frame,
        x="evidence_date",
        y="rate",
        low="rate_ci_low",
        high="rate_ci_high",
        color="window_label",
        title=title,
        subtitle=subtitle,
        y_title=y_title,
        legend_title="Window",
        hover_text="counts",
    )
    recent = pd.to_datetime(frame.loc[frame["evidence_window"] == "recent", "evidence_date"])
    if not recent.empty:
        half_day = dt.timedelta(hours=12)
        figure.add_vrect(
            x0=recent.min() - half_day,
            x1=recent.max() + half_day,
            fillcolor=RECENT_SHADE,
            line_width=0,
            layer="below",
            annotation_text="recent",
            annotation_position="top left",
        )
    if baseline_rate is not None and not pd.isna(baseline_rate):
        figure.add_hline(
            y=float(baseline_rate),
            line={"color": BASELINE_LINE, "dash": "dash", "width": 1.5},
            annotation_text=f"baseline {words.percent(baseline_rate)}",
            annotation_position="bottom left",
        )
    return figure
