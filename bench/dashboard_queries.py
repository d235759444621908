"""Time every dashboard page's data access on a warehouse: p50/p95/max over N loads, cache cleared each time.

    .venv/bin/python -m bench.dashboard_queries [--db feedback.duckdb] [--loads 20] [--period 30] [--per-query]

A "load" of a page runs the data-access calls the page makes with the
sidebar's defaults (as of the marts' as-of day, 30 days, all tenants,
retention-filtered), drill-downs included (first conversation, busiest
skill, first eval cell), after st.cache_data has been emptied, so every call
opens the warehouse read-only and queries it: what a first visitor waits for.
Keep PAGE_CALLS in step with dashboards/pages/.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

Call = tuple[str, Callable[[], Any]]


def page_calls(period_days: int) -> dict[str, list[Call]]:
    from dashboards import data
    from dashboards.filters import Filters

    status = data.status()
    if not status.ready:
        raise SystemExit(f"error: {status.message}")
    f = Filters(as_of=status.as_of or dt.datetime.now(dt.UTC).date(), period_days=period_days)
    window = (f.start, f.end)

    def first_conversation() -> Any:
        rows = data.conversations(*window, f.retained, f.tenant, f.project)
        if rows.empty:
            return None
        row = rows.iloc[0]
        return data.conversation_detail(row["source_tenant_id"], row["project"], row["conversation_id"], f.retained)

    def busiest_skill() -> Any:
        rates = data.skill_correction_rates()
        if rates.empty:
            return None
        skill = rates.sort_values("sample_size", ascending=False)["skill_id"].iloc[0]
        return data.skill_detail(skill, *window, f.retained)

    def first_eval_cell() -> Any:
        matrix = data.eval_matrix(f.tenant)
        if matrix.empty:
            return None
        cell = matrix.iloc[0]
        data.eval_cell_dimensions(cell["replay_session_id"])
        return data.eval_cell_history(cell["golden_session_id"], cell["agent_id"])

    sidebar: list[Call] = [
        ("status", data.status),
        ("tenants and projects", lambda: (data.tenants(), data.projects(f.tenant))),
    ]
    return {
        "Overview": [
            *sidebar,
            ("kpi_counts", lambda: data.kpi_counts(*window, f.prev_start, f.retained, f.tenant, f.project)),
            ("signal_volume_daily", lambda: data.signal_volume_daily(*window, f.retained, f.tenant)),
            ("mover_counts", lambda: data.mover_counts(*window, f.prev_start, f.retained, f.tenant, f.project)),
        ],
        "Session feedback": [
            *sidebar,
            ("session_feedback_daily", lambda: data.session_feedback_daily(*window, f.retained)),
            ("session_feedback_by_turn_bucket", lambda: data.session_feedback_by_turn_bucket(*window, f.retained)),
        ],
        "Conversations and reactions": [
            *sidebar,
            (
                "reaction_satisfaction_daily",
                lambda: data.reaction_satisfaction_daily(*window, f.retained, f.tenant, f.project),
            ),
            ("reaction_changes_daily", lambda: data.reaction_changes_daily(*window, f.retained)),
            ("conversations + drill-down", first_conversation),
        ],
        "Skills": [
            *sidebar,
            ("skill rates, trends, hotspots", lambda: (data.skill_correction_rates(), data.skill_dimension_hotspots())),
            ("skill drill-down", busiest_skill),
        ],
        "Evals": [
            *sidebar,
            ("eval_matrix + cell drill-down", first_eval_cell),
            ("eval_regressions", lambda: data.eval_regressions(f.tenant)),
            ("eval_trend", lambda: data.eval_trend(*window, f.retained, f.tenant)),
        ],
        "Retention": [
            *sidebar,
            ("retention_windows", data.retention_windows),
            ("purge_log", data.purge_log),
        ],
        "Warehouse": [
            *sidebar,
            ("raw_table_counts", data.raw_table_counts),
            ("daily_loaded_rows", data.daily_loaded_rows),
            ("quarantine_by_reason", data.quarantine_by_reason),
            ("recent_loads", data.recent_loads),
        ],
    }


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered) + 0.5) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=os.environ.get("FEEDBACK_DB") or "feedback.duckdb", help="warehouse file")
    parser.add_argument("--loads", type=int, default=20, help="loads per page (default 20)")
    parser.add_argument("--period", type=int, default=30, choices=(7, 30, 90), help="period in days (default 30)")
    parser.add_argument("--per-query", action="store_true", help="also print every call's p95")
    args = parser.parse_args()
    if not Path(args.db).exists():
        raise SystemExit(f"error: no warehouse at {args.db}")
    os.environ["FEEDBACK_DB"] = str(Path(args.db).resolve())
    from streamlit.logger import set_log_level

    set_log_level("error")  # st.cache_data outside `streamlit run` warns "No runtime found"; it still caches
    from dashboards import data

    pages = page_calls(args.period)
    print(f"warehouse {os.environ['FEEDBACK_DB']}, {args.loads} loads per page, period {args.period} days")
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
        print(f"| {name} | {len(calls)} | {statistics.median(totals):.0f} | {p95(totals):.0f} | {max(totals):.0f} |")
    if args.per_query:
        print()
        print("| page: call | p50 ms | p95 ms |")
        print("|---|---:|---:|")
        for label, timings in per_query.items():
            print(f"| {label} | {statistics.median(timings):.1f} | {p95(timings):.1f} |")


if __name__ == "__main__":
    main()
