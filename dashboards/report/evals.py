"""The report's eval sections, as of the last build: the matrix, each candidate against the pinned baseline (and
the cells it fails where the baseline passes), and the regressions (a latest replay that failed where the one
before passed)."""

from __future__ import annotations

import pandas as pd

from dashboards import charts, words
from dashboards.queries import attention, evals
from dashboards.report import context
from dashboards.report.context import Context
from dashboards.report.markup import Builder, table


def names(value: object) -> str:
    """A list column (failed dimensions) as text."""
    if value is None or isinstance(value, str):
        return value or ""
    return ", ".join(str(item) for item in list(value))


def session_name(label: object, session_id: object) -> str:
    return str(label) if isinstance(label, str) and label else charts.short_id(session_id)


def matrix(report: Builder, ctx: Context) -> None:
    f = ctx.f
    shown = evals.eval_matrix(f.tenant)
    shown = shown[shown["replayed_at"].notna()]
    report.heading(
        "Eval matrix, the latest replay of each cell",
        f"Golden sessions x agent configs (pending cells are left out of the squares); {ctx.built}, {f.scope_label()}.",
        anchor=context.EVALS,
    )
    if shown.empty:
        report.text("No finished replay.")
        return
    figure = charts.eval_matrix(shown, title="Eval matrix: latest replay per golden session and agent config")
    report.chart(figure, f"Data {ctx.built}")


def worse_cells_by_candidate(tenant: str | None) -> dict[tuple[str, str], list[str]]:
    """(golden set, candidate) -> the golden sessions it fails where the baseline passes, by name."""
    cells = attention.baseline_worse_cells(tenant)
    found: dict[tuple[str, str], list[str]] = {}
    for row in cells.itertuples():
        key = (str(row.golden_set), str(row.agent_config_label))
        found.setdefault(key, []).append(session_name(row.golden_session_label, row.golden_session_id))
    return found


def baseline(report: Builder, ctx: Context) -> None:
    comparison = evals.eval_baseline_comparison(ctx.f.tenant)
    worse = worse_cells_by_candidate(ctx.f.tenant)
    report.heading(
        "Candidates against the pinned baseline",
        "Over the golden sessions where both have a finished replay: cells better (the candidate passed where the "
        "baseline failed), worse, the same; the pass-rate difference with its 95% (Newcombe) interval.",
        anchor=context.BASELINE,
        level=3,
    )
    if comparison.empty:
        report.text("No golden set has a pinned baseline with a candidate beside it.")
        return
    report.raw(
        table(
            [
                {
                    "Golden set": f"{row.golden_set} ({row.tenant_name})" if row.tenant_name else row.golden_set,
                    "Candidate vs baseline": f"{row.agent_config_label} vs {row.baseline_agent_config_label}",
                    "Cells better / worse / same": (
                        f"{words.count(row.cells_better)} / {words.count(row.cells_worse)} / "
                        f"{words.count(row.cells_same)}"
                    ),
                    "Worse on": "; ".join(worse.get((str(row.golden_set), str(row.agent_config_label)), [])),
                    "Pass rate": f"{words.percent(row.pass_rate)} vs {words.percent(row.baseline_pass_rate)}",
                    "Difference (95% CI)": (
                        f"{words.points(row.pass_rate_difference)} ("
                        f"{words.points_interval(row.pass_rate_difference_ci_low, row.pass_rate_difference_ci_high)})"
                    ),
                    "Significant": "yes" if row.is_significant_difference else "no",
                }
                for row in comparison.itertuples()
            ],
            numbers=("Pass rate", "Difference (95% CI)"),
        )
    )


def regressions(report: Builder, ctx: Context) -> None:
    found = evals.eval_regressions(ctx.f.tenant)
    report.heading(
        "Regressions",
        "Cells whose latest replay failed where the replay before it passed.",
        anchor=context.REGRESSIONS,
        level=3,
    )
    if found.empty:
        report.text("No cell regressed: no latest replay failed where the one before passed.")
        return
    report.raw(
        table(
            [
                {
                    "Tenant": row.tenant_name or "",
                    "Golden set": row.golden_set,
                    "Golden session": session_name(row.golden_session_label, row.golden_session_id),
                    "Agent config": row.agent_config_label or charts.short_id(row.agent_id),
                    "Replayed at (UTC)": f"{row.replayed_at:%Y-%m-%d %H:%M}",
                    "Accuracy": words.percent(row.overall_accuracy),
                    "Before": words.percent(row.previous_overall_accuracy),
                    "Failed dimensions": names(row.failed_dimension_names),
                    "Newer replay pending": "yes" if row.has_pending_replay else "no",
                }
                for row in found.itertuples()
            ],
            numbers=("Accuracy", "Before"),
        )
    )


def worse_than_baseline(ctx: Context) -> pd.DataFrame:
    """The candidates with at least one cell worse than the baseline or a significantly lower pass rate."""
    comparison = evals.eval_baseline_comparison(ctx.f.tenant)
    lower = comparison["is_significant_difference"].fillna(False).astype(bool) & (
        comparison["pass_rate_difference"] < 0
    )
    return comparison[(comparison["cells_worse"] > 0) | lower]
