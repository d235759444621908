"""The alert marts of the demo warehouse against statsmodels and against what the demo holds.

- Every statistical evaluation of `alert_evaluations`: its z statistic and one-sided p-value in the bad
  direction against `proportions_ztest(alternative="larger"/"smaller")` on the window counts the build tested
  (`int_alerts__statistical_tests`), its Newcombe interval against `confint_proportions_2indep(method="newcomb")`,
  its q-value against `multipletests(method="fdr_bh")` over every test of its evaluation day (all rules and
  subjects), and its evaluation against the rule's min_n and significance level.
- The demo's one real worsening (skill cpp-expert, from 2026-10-05) fires the skill rule; deslop, which
  improved, does not fire.
- A build of a copy as of 2026-10-03, before the worsening, shows nothing firing for cpp-expert then, and
  keeps the later evaluations the first build wrote (alert_evaluations is never rebuilt whole).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep, proportions_ztest

from tests.support.dashboard import DemoWarehouse, cli, copy_warehouse, demo_or_fail

# the marts round to 6 decimals; the oracle is rounded the same way, so a rounding boundary differs by 1e-6
ROUNDED = 1.000001e-6
DEMO_AS_OF = dt.date(2026, 11, 1)
PAST_AS_OF = "2026-10-03"


def read(db: Path, sql: str) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.sql(sql).df()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoWarehouse:
    return demo_or_fail(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def tested(demo: DemoWarehouse) -> pd.DataFrame:
    """The statistical evaluations of the demo build with the window counts they tested."""
    return read(
        demo.db,
        """
        select
            evaluations.*,
            tests.recent_successes,
            tests.recent_trials,
            tests.baseline_successes,
            tests.baseline_trials,
            tests.has_enough_data,
            rules.min_n
        from marts.alert_evaluations as evaluations
        inner join intermediate.int_alerts__statistical_tests as tests
            using (rule_id, subject, evaluated_on)
        inner join seeds.alert_rules as rules using (rule_id)
        """,
    )


def test_z_and_one_sided_p_values_match_statsmodels(tested: pd.DataFrame) -> None:
    with_test = tested[tested["p_value"].notna()]
    assert len(with_test) >= 20, "the demo should make statistical tests"
    assert set(with_test["bad_direction"]) == {"up", "down"}
    largest = 0.0
    for row in with_test.itertuples():
        z, p = proportions_ztest(
            [row.recent_successes, row.baseline_successes],
            [row.recent_trials, row.baseline_trials],
            alternative="larger" if row.bad_direction == "up" else "smaller",
        )
        largest = max(largest, abs(row.z_statistic - z), abs(row.p_value - p))
        assert row.z_statistic == pytest.approx(z, abs=ROUNDED), row
        assert row.p_value == pytest.approx(p, abs=ROUNDED), row
    print(f"largest z/p difference: {largest:.2e} over {len(with_test)} tests")


def test_no_test_below_min_n(tested: pd.DataFrame) -> None:
    statistical = tested[
        tested["metric"].isin(["correction_rate", "session_positive_rate", "reaction_satisfaction", "eval_pass_rate"])
    ]
    small = (statistical["n"] < statistical["min_n"]) | (statistical["baseline_n"] < statistical["min_n"])
    assert small.any() and (~small).any()
    assert (statistical.loc[small, "evaluation"] == "insufficient_data").all()
    assert statistical.loc[small, "p_value"].isna().all()
    assert (statistical.loc[~small, "evaluation"] != "insufficient_data").all()


def test_q_values_are_benjamini_hochberg_per_evaluation_day(tested: pd.DataFrame) -> None:
    days = 0
    for evaluated_on, family in tested[tested["p_value"].notna()].groupby("evaluated_on"):
        assert family["rule_id"].nunique() > 1, "one family holds every rule of the day"
        p_values = [
            proportions_ztest(
                [row.recent_successes, row.baseline_successes],
                [row.recent_trials, row.baseline_trials],
                alternative="larger" if row.bad_direction == "up" else "smaller",
            )[1]
            for row in family.itertuples()
        ]
        q_values = multipletests(p_values, method="fdr_bh")[1]
        for row, q in zip(family.itertuples(), q_values, strict=True):
            assert row.q_value == pytest.approx(q, abs=ROUNDED), (evaluated_on, row)
            breach = round(q, 6) <= row.significance_level
            assert row.evaluation == ("breach" if breach else "clear"), row
        days += 1
    assert days == 7  # alert_backfill_days


def test_change_interval_is_newcombe(tested: pd.DataFrame) -> None:
    both = tested[(tested["n"] > 0) & (tested["baseline_n"] > 0) & tested["value"].notna()]
    assert len(both) > 0
    for row in both.itertuples():
        low, high = confint_proportions_2indep(
            row.recent_successes, row.recent_trials, row.baseline_successes, row.baseline_trials, method="newcomb"
        )
        assert row.change_ci_low == pytest.approx(low, abs=ROUNDED), row
        assert row.change_ci_high == pytest.approx(high, abs=ROUNDED), row
        assert row.value == pytest.approx(row.recent_successes / row.recent_trials, abs=ROUNDED)


def test_the_demo_worsening_fires_and_the_improvement_does_not(demo: DemoWarehouse) -> None:
    states = read(demo.db, "select * from marts.alert_states where rule_id = 'skill_correction_rate_up'")
    firing = states[states["is_firing"]]
    assert "cpp-expert" in set(firing["subject"]), states
    assert "deslop" not in set(states["subject"]), states
    cpp = firing[firing["subject"] == "cpp-expert"].iloc[0]
    assert cpp["value"] > cpp["baseline_value"] and cpp["q_value"] <= 0.02
    assert cpp["firing_since"] <= pd.Timestamp(DEMO_AS_OF)
    evidence = read(
        demo.db,
        "select * from marts.alert_evidence_daily"
        " where rule_id = 'skill_correction_rate_up' and subject = 'cpp-expert'",
    )
    assert set(evidence["evidence_window"]) == {"recent", "baseline"}


@pytest.fixture(scope="module")
def past_build(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo warehouse built again as of a day before the worsening."""
    root = tmp_path_factory.mktemp("alerts-past")
    db = copy_warehouse(demo.db, root / "past.duckdb")
    env = {
        **os.environ,
        "FEEDBACK_DB": str(db),
        "DBT_TARGET_PATH": str(root / "dbt-target"),
        "DBT_LOG_PATH": str(root / "dbt-logs"),
    }
    result = cli("build", "--as-of", PAST_AS_OF, "--db", str(db), env=env)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return db


def test_a_past_as_of_shows_what_was_firing_then(past_build: Path, demo: DemoWarehouse) -> None:
    states = read(past_build, "select * from marts.alert_states")
    cpp = states[(states["rule_id"] == "skill_correction_rate_up") & (states["subject"] == "cpp-expert")]
    assert not cpp["is_firing"].any(), cpp
    days = set(read(past_build, "select distinct evaluated_on from marts.alert_evaluations")["evaluated_on"])
    first_build = set(read(demo.db, "select distinct evaluated_on from marts.alert_evaluations")["evaluated_on"])
    assert pd.Timestamp(PAST_AS_OF) in days
    assert first_build <= days, "the later evaluations of the first build are kept"
