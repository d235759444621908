"""The page aggregates agree with the marts they are read from, and the status line with marts.build_info
(AppTest modules' fixtures: tests/dashboards/conftest.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from dashboards import data
from dashboards.queries import conversations, overview, session_feedback
from demo import TENANTS
from tests.support.dashboard import DemoWarehouse, copy_warehouse

pytestmark = pytest.mark.slow


def test_period_rates_of_one_day_are_the_daily_marts(use_warehouse, demo: DemoWarehouse) -> None:
    """metric_rates_by_period's 1-day periods carry the daily marts' counts and Wilson intervals (both are
    checked against statsmodels in tests/dbt/test_statistics_oracle.py); a month of demo data has a row per day."""
    use_warehouse(demo.db)
    start, end = dt.date(2026, 10, 1), dt.date(2026, 11, 1)
    daily = session_feedback.session_feedback_daily(start, end, True)
    assert len(daily) >= 20, "too few rows: the comparison would prove little"
    with duckdb.connect(str(demo.db), read_only=True) as con:
        rows = con.execute(
            """
            select as_of_date, segment_value, successes, trials, rate_ci_low, rate_ci_high
            from marts.metric_rates_by_period
            where metric = 'session_positive_rate' and segment_type = 'surface' and period_days = 1
              and not is_retention_filtered and trials > 0 and as_of_date between $start and $end
            """,
            {"start": start, "end": end},
        ).df()
    merged = daily.merge(rows, left_on=["feedback_date", "surface"], right_on=["as_of_date", "segment_value"])
    assert len(merged) == len(daily.dropna(subset=["positive_rate"]))
    assert (merged["successes"] == merged["positive"]).all()
    assert (merged["trials"] == merged["positive"] + merged["negative"]).all()
    assert (merged["rate_ci_low"] == merged["positive_rate_ci_low"]).all()
    assert (merged["rate_ci_high"] == merged["positive_rate_ci_high"]).all()


def test_headline_correction_rate_over_90_days_equals_the_mart(use_warehouse, demo: DemoWarehouse) -> None:
    """The Overview's correction rate over the last 90 days (daily history summed) is the mart's 90-day rate."""
    use_warehouse(demo.db)
    rates = overview.headline_rates(dt.date(2026, 11, 1), 90, True, None, None).set_index("metric")
    with duckdb.connect(str(demo.db), read_only=True) as con:
        weighted, invocations = con.execute(
            "select sum(weighted_corrections), sum(sample_size) from marts.skill_correction_rates"
        ).fetchone()
    assert rates.loc["correction_rate", "trials"] == invocations
    assert rates.loc["correction_rate", "rate"] == pytest.approx(weighted / invocations, abs=1e-6)


def test_tenant_satisfaction_adds_up_to_the_daily_mart(use_warehouse, demo: DemoWarehouse) -> None:
    """Per tenant, the period mart's daily satisfaction counts add up to reaction_satisfaction_daily."""
    use_warehouse(demo.db)
    start, end = dt.date(2026, 4, 1), dt.date(2026, 11, 1)
    per_tenant = [conversations.satisfaction_daily(start, end, True, tenant, None) for tenant in TENANTS]
    everyone = conversations.satisfaction_daily(start, end, True, None, None)
    with duckdb.connect(str(demo.db), read_only=True) as con:
        ok, reactions = con.execute(
            "select sum(ok), sum(reactions) from marts.reaction_satisfaction_daily "
            "where reaction_date between $start and $end and reaction_date >= $floor",
            {"start": start, "end": end, "floor": dict(data.status().retention_cutoffs)["turn_reactions"]},
        ).fetchone()
    for column, expected in (("ok", ok), ("reactions", reactions)):
        assert sum(frame[column].sum() for frame in per_tenant) == expected
        assert everyone[column].sum() == expected


def test_status_reads_as_of_and_build_time(use_warehouse, demo: DemoWarehouse, tmp_path: Path) -> None:
    """As-of day and build time come from marts.build_info, so they travel with the warehouse file."""
    use_warehouse(demo.db)
    status = data.status()
    assert status.state == "ready" and status.as_of == dt.date(2026, 11, 1)
    with duckdb.connect(str(demo.db), read_only=True) as con:
        (built_at,) = con.execute("select built_at from marts.build_info").fetchall()[0]
    assert status.built_at == built_at
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    assert now - dt.timedelta(hours=6) < built_at <= now + dt.timedelta(minutes=1)
    use_warehouse(copy_warehouse(demo.db, tmp_path / "other.duckdb"))
    other = data.status()
    assert (other.as_of, other.built_at) == (status.as_of, status.built_at)
