"""Evals: the golden session x agent config matrix, a cell's dimensions and divergences, trends per set and agent.

Reads eval_matrix, eval_matrix_columns, eval_cell_dimensions, eval_cell_divergences, eval_cell_replays,
eval_regressions, eval_baseline_comparison, eval_baseline_worse_cells and eval_set_accuracy_trend_rollup
(dashboards/queries/evals.py). Evals carry a tenant, so the tenant filter applies to every part; they carry no
project, so with a project selected each part says "not split by project" instead of its numbers."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboards import charts, layout, text, words
from dashboards.queries import evals as queries

status, f = layout.page("Evals")
as_of = status.as_of.isoformat() if status.as_of else "the build"
layout.scope(
    f,
    f"The matrix shows each cell's latest finished replay as of {as_of}; the trends follow the period. "
    "Tenant applies; evals have no project.",
)
VALUE_LIMIT = 200  # characters of an expected or actual value in the divergence table (a megabyte stays a line)

PENDING_MARK = "…"  # after a cell's mark: a newer replay has not finished yet
NOTHING_PENDING = "no newer replay pending"


def pending_note(row: pd.Series) -> str:
    return f"newer replay pending (started {row['latest_pending_at']:%Y-%m-%d %H:%M} UTC)"


def mark_pending(figure: go.Figure, matrix: pd.DataFrame) -> go.Figure:
    """Cells waiting for a newer replay: PENDING_MARK after their mark and a hover line saying so."""
    notes = {
        (row["golden_session_id"], row["agent_id"]): pending_note(row)
        for _, row in matrix[matrix["has_pending_replay"]].iterrows()
    }
    for trace in figure.data:
        if trace.customdata is None or len(trace.customdata) == 0:
            continue
        # customdata columns 3 and 4 are the golden session and the agent config (charts.eval_matrix)
        column = len(trace.customdata[0])  # the note goes after charts.eval_matrix's own columns
        cell_notes = [notes.get((row[3], row[4]), NOTHING_PENDING) for row in trace.customdata]
        trace.customdata = [[*row, note] for row, note in zip(trace.customdata, cell_notes, strict=True)]
        trace.text = [
            mark if note == NOTHING_PENDING else f"{mark}{PENDING_MARK}"
            for mark, note in zip(trace.text, cell_notes, strict=True)
        ]
        trace.hovertemplate = trace.hovertemplate.replace(
            "<extra></extra>", f"<br>%{{customdata[{column}]}}<extra></extra>"
        )
    return figure


def column_key(matrix: pd.DataFrame, columns: pd.DataFrame) -> tuple[dict[tuple[str, str], str], list[str]]:
    """The matrix's column ticks (a letter over the column's passing cells, "A<br>7/8") and, per golden set,
    a markdown line naming each letter's agent config with its pass rate (eval_matrix_columns)."""
    letters = charts.column_letters(matrix)
    names = charts.distinct_labels(matrix, "agent_id", "agent_config_label")
    baselines = set(matrix.loc[matrix["is_baseline"].fillna(False).astype(bool), "agent_id"])
    totals = columns.set_index(["golden_set", "agent_id"])
    ticks: dict[tuple[str, str], str] = {}
    lines = []
    for golden_set, cells in matrix.groupby("golden_set", sort=True):
        parts = []
        for agent in sorted(cells["agent_id"].unique(), key=lambda agent: (len(letters[agent]), letters[agent])):
            name = text.markdown(names[agent]) + (" (baseline)" if agent in baselines else "")
            if (golden_set, agent) in totals.index:
                row = totals.loc[(golden_set, agent)]
                passing, finished = words.count(row["passing_cells"]), words.count(row["finished_cells"])
                ticks[(golden_set, agent)] = f"{letters[agent]}<br>{passing}/{finished}"
                parts.append(
                    f"**{letters[agent]}** {name}: {passing} of {finished} pass ({words.percent(row['pass_rate'])})"
                )
            else:
                ticks[(golden_set, agent)] = letters[agent]
                parts.append(f"**{letters[agent]}** {name}")
        lines.append(f"- Golden set {text.markdown(golden_set)}\n" + "\n".join(f"  - {part}" for part in parts))
    return ticks, lines


st.subheader("Pass/fail matrix")
with layout.section("Eval matrix"):
    if not layout.not_split(f, "The eval matrix", has_tenant=True):
        cells_with_replays = queries.eval_matrix(f.tenant)
        # A `pending` cell has no finished replay yet, so no result to draw: it is listed instead.
        waiting = cells_with_replays[cells_with_replays["cell_status"] == "pending"]
        matrix = cells_with_replays[cells_with_replays["cell_status"] != "pending"]
        if not waiting.empty:
            st.caption(
                f"{len(waiting):,} cells have no finished replay yet (replays still running): "
                + "; ".join(
                    f"{text.markdown(row['golden_set'])} · {text.markdown(row['golden_session_label'])} · "
                    f"{text.markdown(row['agent_config_label'])}, since {row['pending_since']:%Y-%m-%d %H:%M} UTC"
                    for _, row in waiting.iterrows()
                )
            )
        if matrix.empty:
            st.info("No finished replays of golden sessions for these filters: nothing to show in the matrix.")
        else:
            counts = matrix["cell_status"].value_counts()
            pending = int(matrix["has_pending_replay"].sum())
            st.caption(
                f"{words.count(len(matrix))} cells: "
                + ", ".join(f"{words.count(counts.get(name, 0))} {name}" for name in charts.CELL_STATUSES)
                + f". Each shows its latest finished replay; {words.count(pending)} of them wait for a newer replay "
                f"still running (marked {PENDING_MARK}). Hover a cell for its accuracy and replay date; click it to "
                "drill down. Columns are lettered; under each letter, its passing cells of those with a result."
            )
            ticks, key_lines = column_key(matrix, queries.eval_matrix_columns(f.tenant))
            cells = list(zip(matrix["golden_session_id"], matrix["agent_id"], strict=True))
            by_cell = matrix.set_index(["golden_session_id", "agent_id"])
            # A click on a square selects it (the chart's state, read before the chart redraws with the
            # chosen cell outlined); a new click moves the "Cell" selectbox below, which can also pick one.
            selection = (st.session_state.get("eval_matrix_chart") or {}).get("selection") or {}
            clicked = [
                (point["customdata"][3], point["customdata"][4])
                for point in selection.get("points") or []
                if len(point.get("customdata") or []) >= 5
                and (point["customdata"][3], point["customdata"][4]) in by_cell.index
            ]
            if clicked and st.session_state.get("eval_matrix_last_click") != clicked[0]:
                st.session_state["eval_matrix_last_click"] = clicked[0]
                st.session_state["eval_cell"] = clicked[0]
            if st.session_state.get("eval_cell") not in cells:
                not_passing = matrix[matrix["cell_status"] != "pass"]
                first = not_passing.iloc[0] if not not_passing.empty else matrix.iloc[0]
                st.session_state["eval_cell"] = (first["golden_session_id"], first["agent_id"])
            st.plotly_chart(
                mark_pending(
                    charts.eval_matrix(
                        matrix,
                        title="Latest finished replay<br>per golden session and agent config",
                        subtitle=f"As of {as_of}; outlined: the cell shown below",
                        highlight=st.session_state["eval_cell"],
                        column_ticks=ticks,
                    ),
                    matrix,
                ),
                key="eval_matrix_chart",
                on_select="rerun",
                selection_mode="points",
            )
            st.container(key="eval_matrix_key").markdown(
                "**Columns** (agent configs; pass: cells whose latest finished replay passed)\n\n"
                + "\n".join(key_lines)
            )

            def cell_label(cell: tuple[str, str]) -> str:
                row = by_cell.loc[cell]
                return (  # a selectbox option is text; bidi and control characters are made visible
                    f"{text.visible(row['golden_set'])} · {text.visible(row['golden_session_label'])} · "
                    f"{text.visible(row['agent_config_label'])} · {row['cell_status']}"
                    + (" · newer replay pending" if row["has_pending_replay"] else "")
                )

            golden_session_id, agent_id = st.selectbox("Cell", cells, format_func=cell_label, key="eval_cell")
            cell = by_cell.loc[(golden_session_id, agent_id)]
            accuracy = cell["overall_accuracy"]
            st.container(key="eval_cell_detail").markdown(
                f"**{cell['cell_status']}** · golden session {text.markdown(cell['golden_session_label'])} "
                f"({text.markdown(golden_session_id)}) · agent config {text.markdown(cell['agent_config_label'])} "
                f"({text.markdown(agent_id)}) · replay {text.markdown(cell['replay_session_id'])} "
                f"on {cell['replayed_at']:%Y-%m-%d %H:%M} UTC · accuracy {words.percent(accuracy)}"
                + (
                    f" · {pending_note(cell)}: {text.markdown(cell['pending_replay_session_id'])}; "
                    "the cell keeps this result until it finishes"
                    if cell["has_pending_replay"]
                    else ""
                )
            )
            left, right = st.columns(2)
            with left:
                dimensions = queries.eval_cell_dimensions(cell["replay_session_id"])
                charts.show(
                    dimensions,
                    lambda frame: px.bar(
                        frame.assign(
                            result=frame["passed"].map({True: "passed", False: "failed"}),
                            dimension=frame["dimension"].map(text.plotly),
                        ),
                        x="score",
                        y="dimension",
                        color="result",
                        orientation="h",
                        color_discrete_map={"passed": "#2e7d32", "failed": "#e53935"},
                        title="Dimension scores of the latest replay",
                        labels={"score": "Score (0 to 1)", "dimension": "Dimension", "result": "Result"},
                        range_x=[0, 1],
                    ),
                    "This replay has no dimension results.",
                )
            with right:
                history = queries.eval_cell_history(golden_session_id, agent_id)
                charts.show(
                    history,
                    lambda frame: px.line(
                        frame.assign(result=frame["passed"].map({True: "passed", False: "failed"})),
                        x="replayed_at",
                        y="mean_score",
                        markers=True,
                        symbol="result",
                        range_y=[0, 1.02],  # from 0: one failing replay must not read as a cliff
                        title="Mean dimension score<br>of every finished replay of this cell",
                        labels={
                            "replayed_at": "Replayed at (UTC)",
                            "mean_score": "Mean dimension score (0 to 1)",
                            "result": "Replay",
                        },
                    ),
                    "No replays recorded for this cell.",
                )
            divergences = queries.eval_cell_divergences(cell["replay_session_id"])
            if not divergences.empty:
                st.markdown("**Expected against actual, per dimension** (the golden session's value, the replay's)")
                result = divergences["passed"].map({True: "passed", False: "failed"})
                layout.table(
                    pd.DataFrame(
                        {  # upstream values as text: control and bidi characters visible, a huge value cut
                            "dimension": divergences["dimension"].map(text.visible),
                            "expected": [
                                text.visible(value, VALUE_LIMIT) if has else "no divergence"
                                for value, has in zip(
                                    divergences["expected_value"], divergences["has_divergence"], strict=True
                                )
                            ],
                            "actual": [
                                text.visible(value, VALUE_LIMIT) if has else "no divergence"
                                for value, has in zip(
                                    divergences["actual_value"], divergences["has_divergence"], strict=True
                                )
                            ],
                            "result": result.where(result.notna(), "no result"),
                            "score": divergences["score"],
                            "severity": divergences["severity"].map(text.visible, na_action="ignore").fillna(""),
                        }
                    ),
                    "eval_cell_divergences",
                    hide_index=True,
                    key="eval_cell_divergences_table",
                    column_config={
                        # about 350 px for the first three: a phone shows the dimension, expected and actual
                        "dimension": st.column_config.TextColumn("Dimension", width=120),
                        "expected": st.column_config.TextColumn("Expected", width=115),
                        "actual": st.column_config.TextColumn("Actual", width=115),
                        "result": "Result",
                        "score": st.column_config.NumberColumn("Score (0 to 1)", format="%.3f"),
                        "severity": "Severity",
                    },
                )

st.subheader("Regressions")
with layout.section("Regressions"):
    regressions = (
        pd.DataFrame() if layout.not_split(f, "Regressions", has_tenant=True) else queries.eval_regressions(f.tenant)
    )
    if regressions.empty and not f.project:
        st.success(
            "No cell regressed: every cell that passed on its previous finished replay still passes "
            "(flaky cells, which flip often, aside)."
        )
    elif not regressions.empty:
        # the key numbers first, so that a phone's width shows them; ids and the tenant last
        layout.table(
            regressions.assign(
                change=regressions["accuracy_change"].map(words.points),
                golden_session_label=regressions["golden_session_label"].map(text.visible),
                agent_config_label=regressions["agent_config_label"].map(text.visible),
            ).drop(columns=["accuracy_change"]),
            "eval_regressions",
            hide_index=True,
            column_order=[
                "golden_session_label",
                "agent_config_label",
                "change",
                "overall_accuracy",
                "previous_overall_accuracy",
                "failed_dimension_names",
                "divergence_count",
                "replayed_at",
                "golden_set",
                "tenant_name",
                "has_pending_replay",
            ],
            column_config={
                "tenant_name": "Tenant",
                "golden_set": "Golden set",
                "golden_session_label": st.column_config.TextColumn("Golden session", width=140),
                "agent_config_label": st.column_config.TextColumn("Agent config", width=110),
                "change": st.column_config.TextColumn("Accuracy change", width=100),
                "replayed_at": st.column_config.DatetimeColumn("Replayed at (UTC)", format="YYYY-MM-DD HH:mm"),
                "overall_accuracy": st.column_config.NumberColumn("Accuracy", format="percent"),
                "previous_overall_accuracy": st.column_config.NumberColumn("Previous accuracy", format="percent"),
                "failed_dimension_names": "Failed dimensions",
                "divergence_count": st.column_config.NumberColumn("Divergences", format="localized"),
                "has_pending_replay": st.column_config.CheckboxColumn("Newer replay pending"),
                "golden_session_id": None,
                "agent_id": None,
            },
        )


def worse_line(row: pd.Series) -> str:
    """One cell worse than its baseline, by name: set, golden session, candidate, both accuracies, the change."""
    failed = row["failed_dimension_names"]
    return (
        f"{text.markdown(row['golden_set'])} · golden session {text.markdown(row['golden_session_label'])}: "
        f"**{text.markdown(row['agent_config_label'])}** fails where "
        f"{text.markdown(row['baseline_agent_config_label'])} passes; accuracy {words.percent(row['overall_accuracy'])}"
        f" against {words.percent(row['baseline_overall_accuracy'])} (**{words.points(row['accuracy_change'])}**)"
        + (f"; failed: {text.markdown(failed)}" if isinstance(failed, str) and failed else "")
    )


st.subheader("Candidates against the pinned baseline")
with layout.section("Baseline comparison"):
    split = not layout.not_split(f, "The baseline comparison", has_tenant=True)
    comparison = queries.eval_baseline_comparison(f.tenant) if split else pd.DataFrame()
    if split and comparison.empty:
        st.info(
            "No candidate to compare: no golden set has a pinned baseline with finished replays beside a "
            "candidate's for these filters."
        )
    elif split:
        worse = queries.eval_baseline_worse_cells(f.tenant)
        st.markdown(
            f"**Worse than the baseline: {words.count(len(worse))} {'cell' if len(worse) == 1 else 'cells'}** "
            "(the candidate fails a golden session "
            "the baseline passes)"
        )
        if worse.empty:
            st.success("No candidate fails a golden session its baseline passes.")
        else:
            st.container(key="eval_baseline_worse_cells").markdown(
                "\n".join(f"- {worse_line(row)}" for _, row in worse.iterrows())
            )
        st.caption(
            "Per candidate, over the golden sessions where both have a finished replay: cells better (the candidate "
            "passed where the baseline failed), worse, the same; the pass-rate difference in percentage points with "
            "its 95% interval (Newcombe), significant when the interval excludes 0."
        )
        layout.table(
            comparison.assign(
                difference=comparison["pass_rate_difference"].map(words.points),
                difference_ci=[
                    words.points_interval(low, high)
                    for low, high in zip(
                        comparison["pass_rate_difference_ci_low"],
                        comparison["pass_rate_difference_ci_high"],
                        strict=True,
                    )
                ],
                agent_config_label=comparison["agent_config_label"].map(text.visible),
                baseline_agent_config_label=comparison["baseline_agent_config_label"].map(text.visible),
            ).drop(columns=["pass_rate_difference", "pass_rate_difference_ci_low", "pass_rate_difference_ci_high"]),
            "eval_baseline_comparison",
            hide_index=True,
            column_order=[
                "golden_set",
                "agent_config_label",
                "difference",
                "cells_worse",
                "cells_better",
                "difference_ci",
                "is_significant_difference",
                "cells_same",
                "compared_cells",
                "pass_rate",
                "baseline_pass_rate",
                "baseline_agent_config_label",
                "tenant_name",
            ],
            column_config={
                "golden_set": st.column_config.TextColumn("Golden set", width=100),
                "tenant_name": "Tenant",
                "agent_config_label": st.column_config.TextColumn("Candidate", width=130),
                "baseline_agent_config_label": "Baseline",
                "compared_cells": st.column_config.NumberColumn("Cells compared", format="localized"),
                "cells_better": st.column_config.NumberColumn("Better", format="localized"),
                "cells_worse": st.column_config.NumberColumn("Worse", format="localized"),
                "cells_same": st.column_config.NumberColumn("Same", format="localized"),
                "pass_rate": st.column_config.NumberColumn("Candidate pass rate", format="percent"),
                "baseline_pass_rate": st.column_config.NumberColumn("Baseline pass rate", format="percent"),
                "difference": st.column_config.TextColumn("Pass-rate difference", width=100),
                "difference_ci": "95% interval of the difference",
                "is_significant_difference": st.column_config.CheckboxColumn("Significant"),
            },
        )

st.subheader("Accuracy and pass rate per golden set and agent config")
with layout.section("Eval trends"):
    split = not layout.not_split(f, "The eval trends", has_tenant=True)
    trend = queries.eval_trend(f.start, f.end, f.retained, f.tenant) if split else pd.DataFrame()
    if split and trend.empty:
        st.info("No eval runs in this period for these filters.")
    elif split:
        names = charts.distinct_labels(queries.eval_matrix(f.tenant), "agent_id", "agent_config_label")
        trend = trend.assign(
            agent=[names.get(agent, charts.short_id(agent)) for agent in trend["agent_id"]],
            passed_of=[
                f"{words.count(passes)} of {words.count(replays)} replays passed"
                for passes, replays in zip(trend["passes"], trend["replays"], strict=True)
            ],
            accuracy_of=[f"mean of {words.count(n)} replays' accuracy" for n in trend["accuracy_replays"]],
        )
        st.caption(
            "One point per run day and agent config, over that day's finished replays (hover: how many passed of "
            "how many). With few replays a day one replay flipping moves the rate a whole step, so each line "
            "carries its 95% interval as a band, and the axes run from 0 to 100%."
        )
        for golden_set, frame in trend.groupby("golden_set", sort=True):
            st.markdown(f"**Golden set {text.markdown(golden_set)}**")
            left, right = st.columns(2)
            with left:
                charts.show(
                    frame.dropna(subset=["pass_rate"]),
                    lambda part: charts.rate_lines(
                        part,
                        x="run_date",
                        y="pass_rate",
                        low="pass_rate_ci_low",
                        high="pass_rate_ci_high",
                        color="agent",
                        title="Pass rate per run day",
                        subtitle=f"{f.period_label()} · band: 95% interval",
                        y_title="Replays passed (%)",
                        x_title="Run date (UTC)",
                        legend_title="Agent config",
                        hover_count="replays",
                        hover_text="passed_of",
                        y_range=(0, 1.02),
                    ).update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.25}),
                    "No pass rate in this period.",
                )
            with right:
                charts.show(
                    frame.dropna(subset=["mean_accuracy"]),
                    lambda part: charts.rate_lines(
                        part,
                        x="run_date",
                        y="mean_accuracy",
                        low="mean_accuracy_ci_low",
                        high="mean_accuracy_ci_high",
                        color="agent",
                        title="Mean accuracy per run day",
                        subtitle=f"{f.period_label()} · band: 95% interval",
                        y_title="Mean accuracy (%)",
                        x_title="Run date (UTC)",
                        legend_title="Agent config",
                        hover_count="accuracy_replays",
                        hover_text="accuracy_of",
                        y_range=(0, 1.02),
                    ).update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.25}),
                    "No accuracy in this period.",
                )
