"""Plotly figures of the dashboard. Every figure has a title and axis titles with units; `show`
prints an empty-state message instead of an empty chart.

Values from the data (categories, groups, labels, ids on hover) go through dashboards/text.py `plotly`
here, so Plotly shows them as text: no link, no styling, no reordering. Titles are the caller's: a value
formatted into one goes through `text.plotly` where the caller formats it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dashboards import text, words

PALETTE = px.colors.qualitative.Safe
CELL_STATUSES = {  # eval matrix cell_status -> (colour, legend label, mark in the cell)
    "pass": ("#2e7d32", "pass", "✓"),
    "fixed": ("#1e88e5", "fixed (failed before, passes now)", "↑"),
    "flaky": ("#f9a825", "flaky (2+ flips in the last replays)", "~"),
    "fail": ("#e53935", "fail", "✗"),
    "regressed": ("#6a1b1a", "regressed (passed before, fails now)", "↓"),
}
CELL_PIXELS = 26
DIRECTION_COLOURS = {
    "worsening": "#e53935",
    "improving": "#2e7d32",
    "stable": "#90a4ae",
    "insufficient_data": "#d9d9d9",
}
DATE_AXIS = "Date (UTC day)"
# characters of a title's (subtitle's) line: a chart on a 390 px phone (about 350 px) holds that many at Plotly's
# title (subtitle) font size; longer titles wrap (charts.wrap)
TITLE_CHARACTERS = 40
SUBTITLE_CHARACTERS = 58
X_TITLE_CHARACTERS = 48  # an axis title's line: across a phone's plot (about 330 px), along its height (y)
Y_TITLE_CHARACTERS = 52
TITLE_LINE_PIXELS = 22
SUBTITLE_LINE_PIXELS = 16
TICK_LIMIT = 60  # characters of a category's tick label (a phone's width holds the label and its bar)


def show(
    frame: pd.DataFrame,
    build: Callable[[pd.DataFrame], go.Figure],
    empty: str,
    *,
    key: str | None = None,
    on_select: str = "ignore",
    selection_mode: str | Sequence[str] = ("points", "box", "lasso"),
) -> Any:
    """Draw build(frame), or say `empty` when there is nothing to draw; returns the chart's selection state."""
    if frame.empty:
        st.info(empty)
        return None
    return st.plotly_chart(build(frame), key=key, on_select=on_select, selection_mode=selection_mode)


def tick_labels(values: Sequence[object]) -> list[str]:
    """Categories as tick labels: text (dashboards/text.py), cut to TICK_LIMIT characters; a cut that makes two
    labels alike numbers them, so each category keeps its own row."""
    labels = [text.plotly(value, TICK_LIMIT) for value in values]
    seen: dict[str, int] = {}
    distinct = set(labels)
    for index, label in enumerate(labels):
        if label in seen and str(values[index]) != str(values[seen[label]]):
            number = 2
            while f"{label} #{number}" in distinct:
                number += 1
            labels[index] = f"{label} #{number}"
            distinct.add(labels[index])
        seen.setdefault(label, index)
    return labels


def wrap(line: str, width: int) -> list[str]:
    """A title's text as lines of at most `width` characters, broken at spaces only (an escaped value's `&lt;`
    stays whole); a single longer word keeps its own line."""
    return textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""]


def _finish(
    figure: go.Figure, title: str, x_title: str, y_title: str, *, y_percent: bool = False, subtitle: str | None = None
) -> go.Figure:
    """Title and axis titles (wrapped to fit a phone's chart: Plotly neither wraps nor shortens one), and the
    legend below the plot, across its width, where a phone has room for it."""
    title_lines = wrap(title, TITLE_CHARACTERS)
    subtitle_lines = wrap(subtitle, SUBTITLE_CHARACTERS) if subtitle else []
    top = 24 + TITLE_LINE_PIXELS * len(title_lines) + SUBTITLE_LINE_PIXELS * len(subtitle_lines)
    figure.update_layout(
        title={
            "text": "<br>".join(title_lines),
            "subtitle": {"text": "<br>".join(subtitle_lines)},
            "yref": "container",
            "y": 1,
            "yanchor": "top",
            "pad": {"t": 12},
        },
        xaxis_title="<br>".join(wrap(x_title, X_TITLE_CHARACTERS)),
        yaxis_title="<br>".join(wrap(y_title, Y_TITLE_CHARACTERS)),
        margin={"t": top, "l": 10, "r": 10, "b": 10},
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": -0.22, "yanchor": "top"},
        hovermode="closest",
    )
    if y_percent:
        figure.update_yaxes(tickformat=".0%")
    return figure


def _colour_map(groups: Sequence[str]) -> dict[str, str]:
    return {group: PALETTE[index % len(PALETTE)] for index, group in enumerate(sorted(groups))}


def _translucent(colour: str, alpha: float = 0.15) -> str:
    colour = colour.strip()
    if colour.startswith("rgb("):
        return colour.replace("rgb(", "rgba(").replace(")", f", {alpha})")
    if colour.startswith("#") and len(colour) == 7:
        red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        return f"rgba({red}, {green}, {blue}, {alpha})"
    return colour


def rate_lines(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    low: str,
    high: str,
    color: str,
    title: str,
    y_title: str,
    x_title: str = DATE_AXIS,
    legend_title: str | None = None,
    hover_count: str | None = None,
    hover_text: str | None = None,
    subtitle: str | None = None,
    y_range: tuple[float, float] | None = None,
) -> go.Figure:
    """One line per group with its 95% interval as a band; `hover_text` names a column of text (for Plotly:
    dashboards/text.py) added to each point's hover, e.g. "7 of 8 replays passed"; `y_range` fixes the axis."""
    figure = go.Figure()
    colours = _colour_map(frame[color].dropna().unique().tolist())
    for group, colour in colours.items():
        rows = frame[frame[color] == group].sort_values(x)
        shown = text.plotly(group)
        band_x = pd.concat([rows[x], rows[x].iloc[::-1]])
        band_y = pd.concat([rows[high], rows[low].iloc[::-1]])
        figure.add_trace(
            go.Scatter(
                x=band_x,
                y=band_y,
                mode="lines",
                fill="toself",
                fillcolor=_translucent(colour),
                line={"width": 0},
                hoverinfo="skip",
                showlegend=False,
                legendgroup=shown,
                name=f"{shown} 95% CI",
            )
        )
        counts = rows[hover_count] if hover_count else None
        extra = "" if hover_text is None else "<br>" + rows[hover_text].astype(str)
        figure.add_trace(
            go.Scatter(
                x=rows[x],
                y=rows[y],
                mode="lines+markers",
                name=shown,
                legendgroup=shown,
                line={"color": colour},
                customdata=pd.concat([rows[[low, high]], counts], axis=1) if counts is not None else rows[[low, high]],
                hovertemplate=(
                    "%{fullData.name}<br>%{x|%Y-%m-%d}: %{y:.1%}<br>95% CI %{customdata[0]:.1%}-%{customdata[1]:.1%}"
                    + ("<br>n = %{customdata[2]:,}" if counts is not None else "")
                    + "%{text}<extra></extra>"
                ),
                text=extra if hover_text is not None else [""] * len(rows),  # hover only: the mode draws no text
            )
        )
    figure.update_layout(legend_title_text=legend_title or color)
    if y_range is None:
        figure.update_yaxes(rangemode="tozero")
    else:
        figure.update_yaxes(range=list(y_range))
    return _finish(figure, title, x_title, y_title, y_percent=True, subtitle=subtitle)


def rate_bars(
    frame: pd.DataFrame,
    *,
    category: str,
    rate: str,
    low: str,
    high: str,
    title: str,
    rate_title: str,
    category_title: str,
    horizontal: bool = False,
    colour: str | Sequence[str] = PALETTE[0],
    patterns: Sequence[str] | None = None,
    subtitle: str | None = None,
) -> go.Figure:
    """Bars of a rate with 95% error bars (asymmetric: Wilson bounds); put counts in the category labels."""
    figure = go.Figure()
    error = {
        "type": "data",
        "symmetric": False,
        "array": (frame[high] - frame[rate]).clip(lower=0),
        "arrayminus": (frame[rate] - frame[low]).clip(lower=0),
    }
    categories = tick_labels(frame[category].tolist())
    marker: dict[str, Any] = {"color": colour}
    if patterns is not None:
        marker["pattern"] = {"shape": list(patterns)}
    bar = go.Bar(
        x=frame[rate] if horizontal else categories,
        y=categories if horizontal else frame[rate],
        orientation="h" if horizontal else "v",
        marker=marker,
        name=rate_title,
        customdata=frame[[low, high]],
        hovertemplate=(
            ("%{y}: %{x:.1%}" if horizontal else "%{x}: %{y:.1%}")
            + "<br>95% CI %{customdata[0]:.1%}-%{customdata[1]:.1%}<extra></extra>"
        ),
    )
    figure.add_trace(bar.update(error_x=error) if horizontal else bar.update(error_y=error))
    if horizontal:
        _finish(figure, title, rate_title, category_title, subtitle=subtitle)
        figure.update_xaxes(tickformat=".0%", rangemode="tozero")
        figure.update_yaxes(autorange="reversed", type="category")
    else:
        _finish(figure, title, category_title, rate_title, y_percent=True, subtitle=subtitle)
        figure.update_xaxes(type="category")
    return figure


def stacked_bars(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    color: str,
    title: str,
    x_title: str,
    y_title: str,
    legend_title: str,
    subtitle: str | None = None,
) -> go.Figure:
    frame = frame.assign(**{color: frame[color].map(text.plotly, na_action="ignore")})
    figure = px.bar(
        frame,
        x=x,
        y=y,
        color=color,
        color_discrete_map=_colour_map(frame[color].dropna().unique().tolist()),
        category_orders={color: sorted(frame[color].dropna().unique().tolist())},
    )
    figure.update_layout(barmode="stack", legend_title_text=legend_title)
    return _finish(figure, title, x_title, y_title, subtitle=subtitle)


def count_heatmap(
    pivot: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    colorbar_title: str,
    hover_label: str,
    subtitle: str | None = None,
) -> go.Figure:
    figure = go.Figure(
        go.Heatmap(
            z=pivot.to_numpy(),
            x=tick_labels(list(pivot.columns)),
            y=tick_labels(list(pivot.index)),
            colorscale="Reds",
            colorbar={"title": {"text": colorbar_title}},
            text=pivot.fillna(0).astype(int).astype(str).to_numpy(),
            texttemplate="%{text}",
            hovertemplate=f"%{{y}} x %{{x}}: %{{z:,}} {hover_label}<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    figure.update_yaxes(autorange="reversed", type="category")
    figure.update_xaxes(type="category")
    return _finish(figure, title, x_title, y_title, subtitle=subtitle)


def change_heatmap(
    frame: pd.DataFrame,
    *,
    row: str,
    column: str,
    change: str,
    cell_text: str,
    hover: str,
    title: str,
    x_title: str,
    y_title: str,
) -> go.Figure:
    """Rows x columns coloured by a change of a rate (a fraction, drawn in percentage points), diverging around 0:
    red where the rate rose (worse), blue where it fell; `cell_text` is written in each cell and `hover` shown on
    hover (both already text: the caller formats them, as text.plotly). A cell without a change stays empty."""
    rows = list(dict.fromkeys(frame[row]))
    columns = list(dict.fromkeys(frame[column]))
    cells = frame.set_index([row, column])

    def grid(name: str, empty: object) -> list[list[object]]:
        return [[cells[name].get((r, c), empty) if (r, c) in cells.index else empty for c in columns] for r in rows]

    points = [[None if pd.isna(value) else float(value) * 100 for value in line] for line in grid(change, None)]
    largest = max([abs(value) for line in points for value in line if value is not None], default=1.0) or 1.0
    figure = go.Figure(
        go.Heatmap(
            z=points,
            x=tick_labels(columns),
            y=tick_labels(rows),
            zmin=-largest,
            zmax=largest,
            zmid=0,
            colorscale="RdBu_r",
            colorbar={"title": {"text": "pp"}, "ticksuffix": " pp", "thickness": 12},
            text=grid(cell_text, ""),
            texttemplate="%{text}",
            customdata=grid(hover, ""),
            hovertemplate="%{customdata}<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    figure.update_yaxes(autorange="reversed", type="category")
    figure.update_xaxes(type="category", tickangle=-45)
    return _finish(figure, title, x_title, y_title)


def short_id(value: object, length: int = 8) -> str:
    return str(value)[:length]


VERSUS_BASELINE = {
    "better": "better than the baseline",
    "worse": "worse than the baseline",
    "same": "same as the baseline",
}


def distinct_labels(cells: pd.DataFrame, id_column: str, label_column: str) -> dict[str, str]:
    """id -> the label to show, unique among these cells: the marts' label (unique within a tenant), then
    the tenant's name, then the id when two ids still read the same."""
    first = cells.drop_duplicates(id_column).set_index(id_column)
    labels = first[label_column].astype(str)
    if "tenant_name" in first and labels.duplicated(keep=False).any():
        clashing = labels.duplicated(keep=False)
        labels = labels.where(~clashing, labels + " · " + first["tenant_name"].fillna("?").astype(str))
    clashing = labels.duplicated(keep=False)
    labels = labels.where(~clashing, labels + " (" + labels.index.map(str) + ")")
    return labels.to_dict()


def column_letters(frame: pd.DataFrame) -> dict[str, str]:
    """agent_id -> a short column name for the eval matrix (A, B, ..., Z, AA, ...): baselines first, then by
    the agent config's label; one letter per agent config across every golden set's panel. A phone's width holds
    a letter per column where it cannot hold the names; the page lists what each letter stands for."""
    names = distinct_labels(frame, "agent_id", "agent_config_label")
    baselines = set(frame.loc[frame["is_baseline"].fillna(False).astype(bool), "agent_id"])
    ordered = sorted(names, key=lambda agent: (agent not in baselines, names[agent].casefold(), str(agent)))

    def letter(index: int) -> str:
        return letter(index // 26 - 1) + chr(ord("A") + index % 26) if index >= 26 else chr(ord("A") + index)

    return {agent: letter(index) for index, agent in enumerate(ordered)}


def eval_matrix(
    frame: pd.DataFrame,
    *,
    title: str,
    subtitle: str | None = None,
    highlight: tuple[str, str] | None = None,
    column_ticks: dict[tuple[str, str], str] | None = None,
) -> go.Figure:
    """Golden sessions (rows) x agent configs (columns), one panel per golden set; a square per latest replay.

    Rows and columns carry the marts' names (eval_matrix golden_session_label, agent_config_label; the
    baseline's column says so), the ids are on hover. A scatter of square markers rather than a
    go.Heatmap: Plotly heatmaps cannot be selected, and a click on a cell must select it (st.plotly_chart
    on_select) to drill down. Squares are coloured and marked by cell_status; hover shows the accuracy,
    the replay date and the comparison with the baseline; `highlight` outlines the chosen cell.
    customdata columns: status, accuracy, replayed, golden session id, agent config id, replay id, versus
    the baseline, then the three ids as hover shows them (dashboards/text.py `plotly`), then the agent config's
    name. `column_ticks` ((golden set, agent id) -> tick text, already text for Plotly) replaces the names under
    the columns (e.g. a letter and the column's pass rate); the columns then follow `column_letters`' order and
    hover still names the agent config.
    """
    sets = sorted(frame["golden_set"].unique())
    sizes = [max(int(frame.loc[frame["golden_set"] == name, "golden_session_id"].nunique()), 1) for name in sets]
    # one panel per set, stacked: each set's golden sessions keep their own names on the left
    figure = make_subplots(
        rows=len(sets),
        cols=1,
        subplot_titles=[f"golden set {text.plotly(name)}" for name in sets],
        row_heights=[size / sum(sizes) for size in sizes],
        vertical_spacing=min(0.12, 0.6 / max(len(sets), 1)),
    )
    # each set's name ends at the panel's right edge: centred over a phone's narrow panel it ran off the chart
    figure.update_annotations(x=1, xanchor="right")
    shown_in_legend: set[str] = set()
    for panel, golden_set in enumerate(sets, start=1):
        cells = frame[frame["golden_set"] == golden_set]
        golden_names = distinct_labels(cells, "golden_session_id", "golden_session_label")
        agent_names = distinct_labels(cells, "agent_id", "agent_config_label")
        for agent in cells.loc[cells["is_baseline"].fillna(False).astype(bool), "agent_id"].unique():
            agent_names[agent] = f"{agent_names[agent]} (baseline)"
        goldens = sorted(golden_names, key=lambda key: (golden_names[key].casefold(), key))
        agents = sorted(agent_names, key=lambda key: ("(baseline)" not in agent_names[key], agent_names[key], key))
        golden_names = dict(zip(golden_names, tick_labels(list(golden_names.values())), strict=True))
        agent_names = dict(zip(agent_names, tick_labels(list(agent_names.values())), strict=True))
        hover_names = dict(agent_names)
        if column_ticks is not None:
            order = column_letters(frame)
            agents = sorted(agents, key=lambda key: (len(order.get(key, "")), order.get(key, ""), str(key)))
            agent_names = {agent: column_ticks.get((golden_set, agent), agent_names[agent]) for agent in agents}
        for status, part in cells.groupby("cell_status", sort=False):
            colour, label, mark = CELL_STATUSES.get(str(status), ("#9e9e9e", str(status), "?"))
            versus = part["versus_baseline"].map(VERSUS_BASELINE)
            custom = pd.DataFrame(
                {
                    "status": part["cell_status"],
                    "accuracy": ["n/a" if pd.isna(value) else f"{value:.1%}" for value in part["overall_accuracy"]],
                    "replayed": [f"{value:%Y-%m-%d %H:%M}" for value in part["replayed_at"]],
                    "golden": part["golden_session_id"],
                    "agent": part["agent_id"],
                    "replay": part["replay_session_id"],
                    "versus": versus.where(versus.notna(), "no comparison with a baseline"),
                    # the ids as hover shows them; columns 3 to 5 keep them as they are, for a click's selection
                    "golden_shown": part["golden_session_id"].map(text.plotly),
                    "agent_shown": part["agent_id"].map(text.plotly),
                    "replay_shown": part["replay_session_id"].map(text.plotly),
                    "agent_name": part["agent_id"].map(hover_names),
                }
            )
            figure.add_trace(
                go.Scatter(
                    x=part["agent_id"].map(agent_names),
                    y=part["golden_session_id"].map(golden_names),
                    mode="markers+text",
                    marker={"symbol": "square", "size": CELL_PIXELS, "color": colour},
                    text=[mark] * len(part),
                    textfont={"color": "white", "size": 14},
                    customdata=custom.to_numpy(),
                    hovertemplate=(
                        "%{y}<br>golden session %{customdata[7]}<br>%{customdata[10]}<br>"
                        "agent config %{customdata[8]}<br>"
                        "status <b>%{customdata[0]}</b>, %{customdata[6]}<br>accuracy %{customdata[1]}<br>"
                        "replayed %{customdata[2]} UTC<br>replay %{customdata[9]}<extra></extra>"
                    ),
                    name=label,
                    legendgroup=label,
                    showlegend=label not in shown_in_legend,
                    selected={"marker": {"opacity": 1}},
                    unselected={"marker": {"opacity": 1}},
                ),
                row=panel,
                col=1,
            )
            shown_in_legend.add(label)
        figure.update_xaxes(
            title_text="Agent config" if panel == len(sets) else None,
            type="category",
            categoryorder="array",
            categoryarray=[agent_names[agent] for agent in agents],
            showgrid=False,
            range=[-0.5, len(agents) - 0.5],
            row=panel,
            col=1,
        )
        figure.update_yaxes(
            type="category",
            categoryorder="array",
            categoryarray=[golden_names[golden] for golden in goldens],
            showgrid=False,
            range=[len(goldens) - 0.5, -0.5],
            row=panel,
            col=1,
        )
        if highlight and highlight[0] in goldens and highlight[1] in agents:
            # a square around the chosen cell, sized in pixels (in axis units it would span the whole column)
            axis = "" if panel == 1 else str(panel)
            half = CELL_PIXELS / 2 + 5
            figure.add_shape(
                type="rect",
                xref=f"x{axis}",
                yref=f"y{axis}",
                xsizemode="pixel",
                ysizemode="pixel",
                xanchor=agents.index(highlight[1]),
                yanchor=goldens.index(highlight[0]),
                x0=-half,
                x1=half,
                y0=-half,
                y1=half,
                line={"color": "black", "width": 3},
            )
    figure.update_yaxes(title_text="Golden session", row=(len(sets) + 1) // 2, col=1)
    figure.update_layout(
        title={"text": title, "subtitle": {"text": subtitle or ""}},
        height=max(360, 200 + sum((CELL_PIXELS + 10) * size + 70 for size in sizes)),
        margin={"t": 110 + 20 * title.count("<br>"), "l": 10, "r": 10, "b": 70},
        legend={
            "title": {"text": "Cell status"},
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0,
        },
        clickmode="event+select",
        dragmode=False,
    )
    return figure


def _change_hover(row: Any, window: str) -> str:
    """A skill x dimension cell's hover text (Plotly text: upstream values escaped)."""
    lines = [
        f"{text.plotly(row.skill_id)} · {text.plotly(words.dimension(row.dimension))}",
        f"change {words.points(row.rate_change)} (95% CI "
        f"{words.points_interval(row.rate_change_ci_low, row.rate_change_ci_high)})",
        f"last {window} {words.percent(row.recent_rate)} of {words.count(row.recent_invocations)} invocations",
        f"{window} before {words.percent(row.prior_rate)} of {words.count(row.prior_invocations)}",
        f"p {words.probability(row.p_value)}, q {words.probability(row.q_value)}"
        + (" (significant)" if row.is_significant else "" if pd.notna(row.q_value) else " (too few to test)"),
    ]
    return "<br>".join(lines)


def _change_text(row: Any) -> str:
    """A skill x dimension cell's text: the change in pp, * when significant after BH."""
    if pd.isna(row.rate_change):
        return ""
    return f"{float(row.rate_change) * 100:+.1f}" + ("*" if row.is_significant else "")


def dimension_change_heatmap(changes: pd.DataFrame, window: str) -> go.Figure:
    """skill_dimension_changes' cells with a change as a heatmap of the change in pp (red worse, blue better, *
    significant after BH), each cell's numbers on hover; `window` names the windows in words ("30 days"). The
    Skills page and the report draw the same chart."""
    cells = changes.dropna(subset=["rate_change"])
    cells = cells.assign(
        dimension_label=[words.dimension(value) for value in cells["dimension"]],
        cell_text=[_change_text(row) for row in cells.itertuples()],
        hover=[_change_hover(row, window) for row in cells.itertuples()],
    ).sort_values(["skill_id", "dimension_label"])
    figure = change_heatmap(
        cells,
        row="skill_id",
        column="dimension_label",
        change="rate_change",
        cell_text="cell_text",
        hover="hover",
        title="Change per skill and dimension (pp)",
        x_title="Dimension",
        y_title="Skill",
    )
    return figure.update_layout(height=max(320, 140 + 30 * cells["skill_id"].nunique()))
