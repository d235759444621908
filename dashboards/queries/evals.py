"""The Evals page's queries: the matrix, a cell's dimensions and replays, regressions, trends per set and agent."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import cached, query
from dashboards.queries.scope import all_members, floor


@cached
def eval_matrix(tenant: str | None) -> pd.DataFrame:
    return query(
        """
        select golden_set, golden_session_id, agent_id, replay_session_id, replayed_at, passed, overall_accuracy,
               cell_status, failed_dimension_names, divergence_count, previous_passed, previous_overall_accuracy,
               replays_in_window, passes_in_window, flips_in_window, has_pending_replay, pending_replay_session_id,
               latest_pending_at, pending_since, tenant_name, golden_session_label, agent_config_label, is_baseline,
               versus_baseline
        from marts.eval_matrix
        where $tenant is null or tenant = $tenant
        order by golden_set, golden_session_id, agent_id
        """,
        {"tenant": tenant},
    )


@cached
def eval_cell_dimensions(replay_session_id: str) -> pd.DataFrame:
    return query(
        """
        select dimension, score, passed, divergence_count, divergences
        from marts.eval_cell_dimensions
        where replay_session_id = $replay_session_id
        order by passed, dimension
        """,
        {"replay_session_id": replay_session_id},
    )


@cached
def eval_cell_divergences(replay_session_id: str) -> pd.DataFrame:
    """One replay's dimensions, expected against actual: a row per divergence (one per dimension without any)."""
    return query(
        """
        select dimension, divergence_rank, passed, score, has_divergence, severity, expected_value, actual_value
        from marts.eval_cell_divergences
        where replay_session_id = $replay_session_id
        order by passed nulls first, dimension, divergence_rank
        """,
        {"replay_session_id": replay_session_id},
    )


@cached
def eval_matrix_columns(tenant: str | None) -> pd.DataFrame:
    """Each matrix column's pass rate (golden set x agent config) over its cells' latest finished replays."""
    return query(
        """
        select golden_set, agent_id, finished_cells, passing_cells, pass_rate, pass_rate_ci_low, pass_rate_ci_high
        from marts.eval_matrix_columns
        where $tenant is null or tenant = $tenant
        order by golden_set, agent_id
        """,
        {"tenant": tenant},
    )


@cached
def eval_baseline_worse_cells(tenant: str | None) -> pd.DataFrame:
    """The cells where a candidate fails a golden session its set's pinned baseline passes, by name."""
    return query(
        """
        select golden_set, tenant_name, golden_session_label, agent_config_label, baseline_agent_config_label,
               overall_accuracy, baseline_overall_accuracy, accuracy_change, failed_dimension_names, replayed_at,
               golden_session_id, agent_id
        from marts.eval_baseline_worse_cells
        where $tenant is null or tenant = $tenant
        order by accuracy_change nulls last, golden_set, golden_session_label, agent_config_label
        """,
        {"tenant": tenant},
    )


@cached
def eval_cell_history(golden_session_id: str, agent_id: str) -> pd.DataFrame:
    """Every finished replay of one matrix cell: when, whether it passed, its mean dimension score."""
    return query(
        """
        select replay_session_id, replayed_at, passed, mean_score, divergences
        from marts.eval_cell_replays
        where golden_session_id = $golden_session_id and agent_id = $agent_id
        order by replayed_at
        """,
        {"golden_session_id": golden_session_id, "agent_id": agent_id},
    )


@cached
def eval_regressions(tenant: str | None) -> pd.DataFrame:
    return query(
        """
        select cells.tenant_name, regressions.golden_set, cells.golden_session_label, cells.agent_config_label,
               regressions.replayed_at,
               regressions.overall_accuracy, regressions.previous_overall_accuracy, regressions.accuracy_change,
               regressions.failed_dimension_names, regressions.divergence_count, regressions.has_pending_replay,
               regressions.golden_session_id, regressions.agent_id
        from marts.eval_regressions as regressions
        left join marts.eval_matrix as cells using (golden_session_id, agent_id)
        where $tenant is null or regressions.tenant = $tenant
        order by regressions.replayed_at desc
        """,
        {"tenant": tenant},
    )


@cached
def eval_trend(start: dt.date, end: dt.date, retained: bool, tenant: str | None) -> pd.DataFrame:
    """Pass rate and mean accuracy per golden set, agent config and run day, of one tenant or of all of them
    (eval_set_accuracy_trend_rollup)."""
    return query(
        """
        select golden_set, agent_id, run_date, replays, passes, pass_rate, pass_rate_ci_low, pass_rate_ci_high,
               accuracy_replays, mean_accuracy, mean_accuracy_ci_low, mean_accuracy_ci_high
        from marts.eval_set_accuracy_trend_rollup
        where run_date between $start and $end and ($floor is null or run_date >= $floor)
          and tenant_filter = $tenant_filter
        order by golden_set, agent_id, run_date
        """,
        {
            "start": start,
            "end": end,
            "floor": floor("replay_sessions", retained),
            "tenant_filter": tenant or all_members(),
        },
    )


@cached
def eval_baseline_comparison(tenant: str | None) -> pd.DataFrame:
    """Each candidate agent config against its golden set's pinned baseline (seed eval_baselines)."""
    return query(
        """
        select golden_set, tenant_name, agent_config_label, baseline_agent_config_label, compared_cells,
               cells_better, cells_worse, cells_same, pass_rate, baseline_pass_rate, pass_rate_difference,
               pass_rate_difference_ci_low, pass_rate_difference_ci_high, is_significant_difference
        from marts.eval_baseline_comparison
        where $tenant is null or tenant = $tenant
        order by golden_set, tenant_name, agent_config_label
        """,
        {"tenant": tenant},
    )
