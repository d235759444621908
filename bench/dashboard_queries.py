"""Time every dashboard page's data access on a warehouse: p50/p95/max over N loads, cache cleared each time.

    .venv/bin/python -m bench.dashboard_queries [--db feedback.duckdb] [--loads 20] [--period 30] [--per-query]
        [--page Conversations]

A "load" of a page runs the data-access calls the page makes with the
sidebar's defaults (as of the marts' as-of day, 30 days, all tenants,
retention-filtered), drill-downs included (first conversation, busiest
skill, first eval cell), after st.cache_data has been emptied, so every call
opens the warehouse read-only and queries it: what a first visitor waits for.
Keep PAGE_CALLS in step with dashboards/app_pages/.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from warehouse.location import Warehouse

ROOT = Path(__file__).resolve().parents[1]

Call = tuple[str, Callable[[], Any]]


def page_calls(period_days: int) -> dict[str, list[Call]]:
    from dashboards import data
    from dashboards.filters import Filters
    from dashboards.queries import (
        alerts,
        conversations,
        evals,
        overview,
        retention,
        scope,
        session_feedback,
        skills,
        warehouse,
    )

    status = data.status()
    if not status.ready:
        raise SystemExit(f"error: {status.message}")
    f = Filters(as_of=status.as_of or dt.datetime.now(dt.UTC).date(), period_days=period_days)
    window = (f.start, f.end)
    period = (f.as_of, f.period_days)

    def first_conversation() -> Any:
        rows = conversations.conversations(*window, f.retained, f.tenant, f.project)
        if rows.empty:
            return None
        row = rows.iloc[0]
        return conversations.conversation_detail(
            row["source_tenant_id"], row["project"], row["conversation_id"], f.retained
        )

    def busiest_skill() -> Any:
        rates = skills.skill_correction_rates()
        if rates.empty:
            return None
        skill = rates.sort_values("sample_size", ascending=False)["skill_id"].iloc[0]
        return skills.skill_detail(skill, *window, f.retained)

    def first_eval_cell() -> Any:
        matrix = evals.eval_matrix(f.tenant)
        if matrix.empty:
            return None
        cell = matrix.iloc[0]
        evals.eval_cell_dimensions(cell["replay_session_id"])
        return evals.eval_cell_history(cell["golden_session_id"], cell["agent_id"])

    sidebar: list[Call] = [
        ("status", data.status),
        ("tenants and projects", lambda: (scope.tenants(), scope.projects(f.tenant))),
    ]
    return {
        "Overview": [
            *sidebar,
            ("headline_rates", lambda: overview.headline_rates(*period, f.retained, f.tenant, f.project)),
            ("signal_volume_daily", lambda: overview.signal_volume_daily(*window, f.retained, f.tenant)),
            ("movers", lambda: overview.movers(*period, f.retained, f.tenant, f.project)),
        ],
        "Alerts": [
            *sidebar,
            ("firing + counts", lambda: (alerts.firing(f.as_of), alerts.firing_counts(f.as_of))),
            ("resolved", lambda: alerts.resolved(f.as_of)),
            ("last_evaluated_at", lambda: alerts.last_evaluated_at(f.as_of)),
            ("evidence", lambda: alerts.evidence(f.as_of)),
        ],
        "Session feedback": [
            *sidebar,
            ("session_feedback_daily", lambda: session_feedback.session_feedback_daily(*window, f.retained)),
            ("session_feedback_rates", lambda: session_feedback.session_feedback_rates(*period, f.retained)),
            (
                "session_feedback_rates by bucket",
                lambda: session_feedback.session_feedback_rates(*period, f.retained, "turn_count_bucket"),
            ),
        ],
        "Conversations and reactions": [
            *sidebar,
            ("satisfaction_daily", lambda: conversations.satisfaction_daily(*window, f.retained, f.tenant, f.project)),
            (
                "satisfaction_by_origin",
                lambda: conversations.satisfaction_by_origin(*period, f.retained, f.tenant, f.project),
            ),
            ("reaction_changes_daily", lambda: conversations.reaction_changes_daily(*window, f.retained)),
            ("flip_rate", lambda: conversations.flip_rate(*period, f.retained)),
            ("conversations + drill-down", first_conversation),
        ],
        "Skills": [
            *sidebar,
            (
                "skill rates, trends, hotspots",
                lambda: (skills.skill_correction_rates(), skills.skill_dimension_changes()),
            ),
            ("skill drill-down", busiest_skill),
        ],
        "Evals": [
            *sidebar,
            ("eval_matrix + cell drill-down", first_eval_cell),
            ("eval_regressions", lambda: evals.eval_regressions(f.tenant)),
            ("eval_trend", lambda: evals.eval_trend(*window, f.retained, f.tenant)),
        ],
        "Retention": [
            *sidebar,
            ("retention_windows", retention.retention_windows),
            ("purge_log", retention.purge_log),
        ],
        "Warehouse": [
            *sidebar,
            ("raw_table_counts", warehouse.raw_table_counts),
            ("daily_loaded_rows", warehouse.daily_loaded_rows),
            ("quarantine_by_reason", warehouse.quarantine_by_reason),
            ("recent_loads", warehouse.recent_loads),
        ],
    }


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered) + 0.5) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None, help="warehouse file (default: $FEEDBACK_DB, else ./feedback.duckdb)")
    parser.add_argument("--loads", type=int, default=20, help="loads per page (default 20)")
    parser.add_argument("--period", type=int, default=30, choices=(7, 30, 90), help="period in days (default 30)")
    parser.add_argument("--per-query", action="store_true", help="also print every call's p95")
    parser.add_argument("--page", default=None, help="only the pages whose name starts with this (e.g. Conversations)")
    args = parser.parse_args()
    warehouse = Warehouse.at(args.db)  # as every command finds it
    if not warehouse.path.exists():
        raise SystemExit(f"error: no warehouse at {warehouse.path}")
    # imported here, after the arguments: Streamlit's import is slow, and `--help` needs none of it
    from streamlit.logger import set_log_level

    set_log_level("error")  # st.cache_data outside `streamlit run` warns "No runtime found"; it still caches
    from dashboards import data

    with data.use_warehouse(warehouse):  # the data layer reads the warehouse it is given
        pages = {name: calls for name, calls in page_calls(args.period).items() if name.startswith(args.page or "")}
        if not pages:
            raise SystemExit(f"error: no page named {args.page!r}")
        print(f"warehouse {warehouse.path}, {args.loads} loads per page, period {args.period} days")
        print()
        print("| page | calls | p50 ms | p95 ms | max ms |")
        print("|---|---:|---:|---:|---:|")
        per_query: dict[str, list[float]] = {}
        for name, calls in pages.items():
            totals = []
            for _ in range(args.loads):
                data.clear_caches()
                started = time.perf_counter()
                for label, call in calls:
                    call_started = time.perf_counter()
                    call()
                    per_query.setdefault(f"{name}: {label}", []).append(1000 * (time.perf_counter() - call_started))
                totals.append(1000 * (time.perf_counter() - started))
            p50 = statistics.median(totals)
            print(f"| {name} | {len(calls)} | {p50:.0f} | {p95(totals):.0f} | {max(totals):.0f} |")
    if args.per_query:
        print()
        print("| page: call | p50 ms | p95 ms |")
        print("|---|---:|---:|")
        for label, timings in per_query.items():
            print(f"| {label} | {statistics.median(timings):.1f} | {p95(timings):.1f} |")


if __name__ == "__main__":
    main()
