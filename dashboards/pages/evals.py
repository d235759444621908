"""Evals: the golden session x agent config matrix, a cell's dimensions and divergences, trends per set and agent.

Reads eval_matrix, eval_cell_dimensions, eval_cell_replays, eval_regressions and eval_set_accuracy_trend_rollup
(dashboards/queries/evals.py)."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboards import charts, layout, text
from dashboards.queries import evals as queries

status, f = layout.page("Evals")
as_of = status.as_of.isoformat() if status.as_of else "the build"
layout.scope(
    f,
    f"The matrix shows each cell's latest finished replay as of {as_of}; the trends follow the period. "
    "Tenant applies; evals have no project.",
)

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


st.subheader("Pass/fail matrix")
with layout.section("Eval matrix"):
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
            f"{len(matrix):,} cells: "
            + ", ".join(f"{counts.get(name, 0)} {name}" for name in charts.CELL_STATUSES)
            + f". Each shows its latest finished replay; {pending} of them wait for a newer replay still running "
            f"(marked {PENDING_MARK}). Hover a cell for its accuracy and replay date; click it to drill down."
        )
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
                    title="Latest finished replay of each golden session by agent config",
                    subtitle=f"As of {as_of}; the outlined cell is the one shown below",
                    highlight=st.session_state["eval_cell"],
                ),
                matrix,
            ),
            key="eval_matrix_chart",
            on_select="rerun",
            selection_mode="points",
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
            f"on {cell['replayed_at']:%Y-%m-%d %H:%M} UTC · accuracy "
            + ("n/a" if pd.isna(accuracy) else f"{accuracy:.1%}")
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
                    title="Every finished replay of this cell: mean dimension score",
                    labels={
                        "replayed_at": "Replayed at (UTC)",
                        "mean_score": "Mean dimension score (0 to 1)",
                        "result": "Replay",
                    },
                ),
                "No replays recorded for this cell.",
            )
        if not dimensions.empty:
            st.markdown("**Dimensions and divergences**")
            layout.table(
                dimensions,
                "eval_cell_dimensions",
                hide_index=True,
                column_config={
                    "score": st.column_config.NumberColumn("Score", format="%.3f"),
                    "divergences": st.column_config.TextColumn("Divergences (expected vs actual)", width="large"),
                },
            )

st.subheader("Regressions")
with layout.section("Regressions"):
    regressions = queries.eval_regressions(f.tenant)
    if regressions.empty:
        st.success(
            "No cell regressed: every cell that passed on its previous finished replay still passes "
            "(flaky cells, which flip often, aside)."
        )
    else:
        layout.table(
            regressions,
            "eval_regressions",
            hide_index=True,
            column_config={
                "tenant_name": "Tenant",
                "golden_set": "Golden set",
                "golden_session_label": "Golden session",
                "agent_config_label": "Agent config",
                "replayed_at": st.column_config.DatetimeColumn("Replayed at (UTC)", format="YYYY-MM-DD HH:mm"),
                "overall_accuracy": st.column_config.NumberColumn("Accuracy", format="percent"),
                "previous_overall_accuracy": st.column_config.NumberColumn("Previous accuracy", format="percent"),
                "accuracy_change": st.column_config.NumberColumn("Change", format="percent"),
                "has_pending_replay": st.column_config.CheckboxColumn("Newer replay pending"),
            },
        )

st.subheader("Candidates against the pinned baseline")
with layout.section("Baseline comparison"):
    comparison = queries.eval_baseline_comparison(f.tenant)
    if comparison.empty:
        st.info(
            "No candidate to compare: no golden set has a baseline (seed eval_baselines) with finished replays "
            "beside a candidate's for these filters."
        )
    else:
        st.caption(
            "Over the golden sessions where both have a finished replay: cells better (the candidate passed where "
            "the baseline failed), worse, the same; the pass-rate difference with its 95% interval (Newcombe), "
            "significant when the interval excludes 0. The baseline of each set is named in seeds/eval_baselines.csv."
        )
        layout.table(
            comparison.assign(
                difference_ci=[
                    f"{low * 100:+.1f} to {high * 100:+.1f} pp"
                    for low, high in zip(
                        comparison["pass_rate_difference_ci_low"],
                        comparison["pass_rate_difference_ci_high"],
                        strict=True,
                    )
                ]
            ).drop(columns=["pass_rate_difference_ci_low", "pass_rate_difference_ci_high"]),
            "eval_baseline_comparison",
            hide_index=True,
            column_config={
                "golden_set": "Golden set",
                "tenant_name": "Tenant",
                "agent_config_label": "Candidate",
                "baseline_agent_config_label": "Baseline",
                "compared_cells": "Cells compared",
                "cells_better": "Better",
                "cells_worse": "Worse",
                "cells_same": "Same",
                "pass_rate": st.column_config.NumberColumn("Candidate pass rate", format="percent"),
                "baseline_pass_rate": st.column_config.NumberColumn("Baseline pass rate", format="percent"),
                "pass_rate_difference": st.column_config.NumberColumn("Difference", format="percent"),
                "difference_ci": "95% CI of the difference",
                "is_significant_difference": st.column_config.CheckboxColumn("Significant"),
            },
        )

st.subheader("Accuracy and pass rate per golden set and agent config")
with layout.section("Eval trends"):
    trend = queries.eval_trend(f.start, f.end, f.retained, f.tenant)
    names = charts.distinct_labels(queries.eval_matrix(f.tenant), "agent_id", "agent_config_label")
    trend = trend.assign(
        agent=[text.plotly(names.get(agent, charts.short_id(agent))) for agent in trend["agent_id"]],
        golden_set=trend["golden_set"].map(text.plotly),
    )
    for measure, label in (("pass_rate", "Pass rate (% of replays)"), ("mean_accuracy", "Mean accuracy (0 to 1)")):
        charts.show(
            trend.dropna(subset=[measure]),
            lambda frame, measure=measure, label=label: (
                px.line(
                    frame,
                    x="run_date",
                    y=measure,
                    color="agent",
                    facet_col="golden_set",
                    markers=True,
                    hover_data={"replays": True, "passes": True},
                    title=f"{label.split(' (')[0]} per run day, by golden set and agent config",
                    labels={
                        "run_date": "Run date (UTC)",
                        measure: label,
                        "agent": "Agent config",
                        "golden_set": "Golden set",
                    },
                )
                .update_yaxes(tickformat=".0%" if measure == "pass_rate" else ".2f")
                .update_layout(title_subtitle_text=f.period_label(), margin={"t": 90})
            ),
            "No eval runs in this period for these filters.",
        )
