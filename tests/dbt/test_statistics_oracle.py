"""The statistics against statsmodels, an independent and well-known implementation (a test-only dependency):
Wilson intervals (`proportion_confint(count, nobs, alpha=0.05, method="wilson")`), Newcombe's hybrid score
interval of a difference (`confint_proportions_2indep(..., method="newcomb")`), the pooled two-proportion
z-test and its two-sided p-value (`proportions_ztest`, which takes the tail from scipy's `norm.sf`) and
Benjamini-Hochberg q-values (`multipletests(pvals, method="fdr_bh")`).

- The SQL macros of macros/metrics/rate_statistics.sql, rendered by dbt (`dbt compile --inline`) and run
  unrounded on DuckDB over a grid of counts and z statistics.
- The expected rows of the analyzer unit tests (models/marts/analyzer/_analyzer__models.yml) and of
  metric_rates_by_period's (models/marts/metrics/_metrics__models.yml) are statsmodels' values, rounded to
  the marts' 6 decimals: the pasted numbers come from the oracle (skill_dimension_changes' too: Newcombe,
  z-test and BH q-values over its skill x dimension cells, tests/support/statistics.py). (The dashboard
  computes no statistic: the Python copy of the formulas, dashboards/stats.py, is gone.)

The demo marts are compared with statsmodels row by row in test_dbt_marts_feedback.py. Each test prints
the largest difference it measured (`pytest -s` shows it) and fails when it compared nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import subprocess
import warnings
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
import yaml
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep

from operations.build import dbt_command
from tests.support.statistics import dimension_change_oracle, round_like_the_marts, wilson_oracle, z_test_oracle

REPO = Path(__file__).resolve().parents[2]
ANALYZER_YAML = REPO / "models" / "marts" / "analyzer" / "_analyzer__models.yml"
TREND_WINDOW_DAYS = 30  # dbt_project.yml default, not overridden by the unit tests
LOOKBACK_DAYS = 90
MIN_INVOCATIONS = 5  # dbt_project.yml default
# Unrounded SQL and Python against statsmodels: both compute in binary64, in a different order.
EXACT = 1e-12
# The far tail of the normal (p < 1.6e-12 beyond |z| = 7.07) is compared relatively.
TAIL_RELATIVE = 2e-8


def count_grid() -> list[tuple[float, int]]:
    """(successes, trials): every half-count for small samples (partials weigh 0.5), a spread for large ones."""
    cases = [(k / 2, n) for n in (1, 2, 3, 4, 5, 7, 10, 20, 33) for k in range(2 * n + 1)]
    for n in (100, 250, 1_000, 12_345, 1_000_000):
        cases += [(x, n) for x in (0, 0.5, 1, 2, n / 100, n / 3, n / 2, 0.9 * n, n - 1, n - 0.5, n)]
    return cases


def pair_grid(seed: int = 20261101) -> list[tuple[float, int, float, int]]:
    """(x1, n1, x2, n2) for the two-proportion test: random samples of every size, plus the undefined cases."""
    generator = random.Random(seed)
    cases = []
    for _ in range(1500):
        n1, n2 = generator.choice((1, 2, 5, 30, 400, 5000)), generator.choice((1, 3, 8, 60, 900, 20000))
        n1, n2 = generator.randint(1, n1), generator.randint(1, n2)
        x1 = generator.randint(0, 2 * n1) / 2
        x2 = generator.randint(0, 2 * n2) / 2
        cases.append((x1, n1, x2, n2))
    # z far in the tail (up to about 60) and exactly 0; undefined ones: empty windows, pooled rate 0 or 1
    cases += [(9_000, 10_000, 1_000, 10_000), (300, 1_000, 180, 1_000), (5, 10, 5, 10), (0, 4, 0, 7), (3, 3, 8, 8)]
    cases += [(0, 0, 1, 2), (1, 2, 0, 0)]
    return cases


def z_grid() -> list[float]:
    """z statistics across both branches of the tail approximation and past its 37 cut-off, both signs."""
    steps = [i / 100 for i in range(0, 4001)]
    special = [1e-12, 1e-6, 0.5, 1.959963984540054, 7.07106781186547, 7.0710678118654, 7.0710678118655, 36.99, 37.01]
    return [sign * z for z in steps + special for sign in (1, -1)]


def compile_inline(sql: str, tmp_path: Path) -> str:
    """The SQL after dbt rendered the project's macros in it."""
    result = subprocess.run(
        dbt_command("compile", "--inline", sql, "--quiet", work_dir=tmp_path),
        cwd=REPO,
        env={**os.environ, "FEEDBACK_DB": str(tmp_path / "compile.duckdb")},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result.stdout.strip()


@pytest.fixture(scope="module")
def macro_results(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """Every grid case through the SQL macros, unrounded, on DuckDB: one row per case, NULL where not asked."""
    cases = (
        [{"kind": "wilson", "successes": s, "trials": n} for s, n in count_grid()]
        + [{"kind": "z_test", "x1": x1, "n1": n1, "x2": x2, "n2": n2} for x1, n1, x2, n2 in pair_grid()]
        + [{"kind": "tail", "z": z} for z in z_grid()]
        + [{"kind": "newcombe", "x1": x1, "n1": n1, "x2": x2, "n2": n2} for x1, n1, x2, n2 in pair_grid()]
    )
    frame = pd.DataFrame(cases, columns=["kind", "successes", "trials", "x1", "n1", "x2", "n2", "z"])
    compiled = compile_inline(
        """
        select
            *,
            {{ wilson_low('successes', 'trials') }} as wilson_low,
            {{ wilson_high('successes', 'trials') }} as wilson_high,
            {{ two_proportion_z('x1', 'n1', 'x2', 'n2') }} as z_statistic,
            {{ two_sided_p_value(two_proportion_z('x1', 'n1', 'x2', 'n2')) }} as z_test_p_value,
            {{ two_sided_p_value('z') }} as p_value_of_z,
            {{ normal_quantile_975() }} as z_975,
            {{ newcombe_difference_low(
                'x1 * 1.0 / nullif(n1, 0)', wilson_low('x1', 'n1'), wilson_high('x1', 'n1'),
                'x2 * 1.0 / nullif(n2, 0)', wilson_low('x2', 'n2'), wilson_high('x2', 'n2'),
            ) }} as newcombe_low,
            {{ newcombe_difference_high(
                'x1 * 1.0 / nullif(n1, 0)', wilson_low('x1', 'n1'), wilson_high('x1', 'n1'),
                'x2 * 1.0 / nullif(n2, 0)', wilson_low('x2', 'n2'), wilson_high('x2', 'n2'),
            ) }} as newcombe_high
        from grid_cases
        """,
        tmp_path_factory.mktemp("compile"),
    )
    assert "1.959963984540054" in compiled, "the Wilson macros use the exact normal quantile"
    with duckdb.connect() as con:
        con.register("grid_cases", frame)
        return con.execute(compiled).df()


def test_sql_wilson_interval_matches_statsmodels(macro_results: pd.DataFrame) -> None:
    rows = macro_results[macro_results["kind"] == "wilson"]
    worst = 0.0
    for row in rows.itertuples():
        low, high = wilson_oracle(row.successes, row.trials)
        worst = max(worst, abs(row.wilson_low - low), abs(row.wilson_high - high))
    print(f"\nSQL wilson_low/high vs statsmodels: max abs difference {worst:.3g} over {len(rows)} intervals")
    assert len(rows) > 100
    assert worst <= EXACT


def test_sql_z_test_and_p_value_match_statsmodels(macro_results: pd.DataFrame) -> None:
    rows = macro_results[macro_results["kind"] == "z_test"]
    worst_z = worst_p = 0.0
    compared = 0
    for row in rows.itertuples():
        expected = z_test_oracle(row.x1, row.n1, row.x2, row.n2)
        if expected is None:
            assert pd.isna(row.z_statistic) and pd.isna(row.z_test_p_value), row
            continue
        z, p = expected
        worst_z = max(worst_z, abs(row.z_statistic - z) / max(1.0, abs(z)))
        worst_p = max(worst_p, abs(row.z_test_p_value - p))
        compared += 1
    print(
        f"\nSQL two_proportion_z vs statsmodels proportions_ztest: max relative z difference {worst_z:.3g}, "
        f"max abs p-value difference {worst_p:.3g} over {compared} tests ({len(rows) - compared} undefined)"
    )
    assert compared > 1000 and len(rows) > compared
    assert worst_z <= EXACT and worst_p <= EXACT


def test_sql_p_value_is_the_exact_normal_tail(macro_results: pd.DataFrame) -> None:
    """2 Q(|z|) against statsmodels' p-value of a z statistic (2 * scipy norm.sf(|z|)): absolute everywhere,
    relative in the far tail, 0 beyond |z| = 37 where the exact value is below 1e-299."""
    rows = macro_results[macro_results["kind"] == "tail"]
    worst_abs = worst_rel = 0.0
    for row in rows.itertuples():
        expected = 2 * float(norm.sf(abs(row.z)))
        worst_abs = max(worst_abs, abs(row.p_value_of_z - expected))
        if abs(row.z) <= 37:
            worst_rel = max(worst_rel, abs(row.p_value_of_z - expected) / expected)
        else:
            assert row.p_value_of_z == 0.0
    print(
        f"\nSQL two_sided_p_value vs 2*norm.sf(|z|): max abs difference {worst_abs:.3g}, max relative "
        f"difference {worst_rel:.3g} over {len(rows)} z values in [-40, 40]"
    )
    assert len(rows) > 1000
    assert worst_abs <= 1e-15
    assert worst_rel <= TAIL_RELATIVE
    assert (rows.loc[rows["z"] == 0, "p_value_of_z"] == 1.0).all()
    assert (rows["z_975"] == norm.ppf(0.975)).all()


def newcombe_oracle(x1: float, n1: float, x2: float, n2: float) -> tuple[float, float]:
    low, high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=0.05)
    return float(low), float(high)


def test_sql_newcombe_interval_matches_statsmodels(macro_results: pd.DataFrame) -> None:
    """The change's interval of metric_rates_by_period (and skill_correction_trend_intervals): Newcombe's hybrid
    score interval from two Wilson intervals, against statsmodels' `newcomb` over the two-sample grid."""
    rows = macro_results[macro_results["kind"] == "newcombe"]
    worst = 0.0
    compared = 0
    for row in rows.itertuples():
        if row.n1 == 0 or row.n2 == 0:
            assert pd.isna(row.newcombe_low) and pd.isna(row.newcombe_high), row
            continue
        low, high = newcombe_oracle(row.x1, row.n1, row.x2, row.n2)
        worst = max(worst, abs(row.newcombe_low - max(-1.0, low)), abs(row.newcombe_high - min(1.0, high)))
        compared += 1
    print(f"\nSQL newcombe_difference_low/high vs statsmodels: max abs difference {worst:.3g} over {compared} pairs")
    assert compared > 1000
    assert worst <= EXACT


# -- the unit tests' expected rows are statsmodels' ---------------------------------------------------------------
def rounded(value: float | None) -> float | None:
    return None if value is None else round_like_the_marts(value)


def unit_tests(model: str) -> list[dict[str, Any]]:
    tests = yaml.safe_load(ANALYZER_YAML.read_text())["unit_tests"]
    return [test for test in tests if test["model"] == model]


def events_from_counts(rows: list[dict[str, Any]], as_of: dt.datetime, window: dt.timedelta) -> list[dict[str, Any]]:
    """The unit tests give the counting model's rows (int_analyzer__skill_events_daily: per day, skill, dimension
    and window, with counts): one event per invocation, at an instant of its window (undated: none), the row's
    weighted corrections on its first event, its corrections and partials as events of its dimension. The
    window assignment itself is the counting model's, checked by its own hand-computed unit test."""
    events = []
    for row in rows:
        invoked_at = None
        if row.get("invoked_date") is not None:
            if row["is_in_recent_window"]:
                invoked_at = as_of
            elif row["is_in_prior_window"]:
                invoked_at = as_of - window - dt.timedelta(seconds=1)
            else:
                invoked_at = as_of - 3 * window  # in neither window
        flagged = (row.get("corrections") or 0) + (row.get("partials") or 0)
        for index in range(row["invocations"]):
            events.append(
                {
                    "skill_id": row["skill_id"],
                    "invoked_at": invoked_at,
                    "dimension_hint": row["dimension"],
                    "is_event": index < flagged,
                    "correction_weight": (row.get("weighted_corrections") or 0.0) if index == 0 else 0.0,
                }
            )
    return events


def trend_oracle(test: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The statistics of skill_correction_trends recomputed by statsmodels from a unit test's given events."""
    as_of = dt.datetime.fromisoformat(test["overrides"]["vars"]["as_of"])
    window = dt.timedelta(days=TREND_WINDOW_DAYS)
    weights: dict[str, tuple[list[float], list[float]]] = {}
    for event in events_from_counts(test["given"][0]["rows"], as_of, window):
        recent, prior = weights.setdefault(event["skill_id"], ([], []))
        if event.get("invoked_at") is None:  # an undated event: in no window (docs/metrics.md)
            continue
        invoked_at = event["invoked_at"]
        if as_of - window <= invoked_at <= as_of:
            recent.append(event["correction_weight"])
        elif as_of - 2 * window <= invoked_at < as_of - window:
            prior.append(event["correction_weight"])
    expected: dict[str, dict[str, Any]] = {}
    for skill_id, (recent, prior) in weights.items():
        row: dict[str, Any] = {}
        for name, window_weights in (("recent", recent), ("prior", prior)):
            low, high = wilson_oracle(sum(window_weights), len(window_weights)) if window_weights else (None, None)
            row[f"{name}_rate_ci_low"], row[f"{name}_rate_ci_high"] = rounded(low), rounded(high)
        z_test = z_test_oracle(sum(recent), len(recent), sum(prior), len(prior))
        row["z_statistic"], row["p_value"] = (rounded(z_test[0]), z_test[1]) if z_test else (None, None)
        expected[skill_id] = row
    family = [skill_id for skill_id, row in expected.items() if row["p_value"] is not None]
    if family:
        _, q_values, _, _ = multipletests([expected[skill_id]["p_value"] for skill_id in family], method="fdr_bh")
        for skill_id, q_value in zip(family, q_values, strict=True):
            expected[skill_id]["q_value"] = rounded(float(q_value))
    for row in expected.values():
        row["p_value"] = rounded(row["p_value"])
        row.setdefault("q_value", None)
        row["is_significant"] = row["q_value"] is not None and row["q_value"] <= 0.05
    return expected


def test_trend_unit_tests_expect_statsmodels_values() -> None:
    compared = 0
    for test in unit_tests("skill_correction_trends"):
        expected = trend_oracle(test)
        for row in test["expect"]["rows"]:
            for column, value in expected[row["skill_id"]].items():
                if column not in row:  # a unit test that expects other columns only (undated events)
                    continue
                assert row[column] == value, (test["name"], row["skill_id"], column)
                compared += 1
    print(f"\ntrend unit tests: {compared} expected values equal statsmodels' (6 decimals)")
    assert compared > 100


def test_wilson_in_rate_unit_tests_is_statsmodels() -> None:
    """skill_correction_rates and skill_correction_weekly expect statsmodels' interval of their weighted counts."""
    compared = 0
    for test in unit_tests("skill_correction_rates") + unit_tests("skill_correction_weekly"):
        for row in test["expect"]["rows"]:
            if "correction_rate_ci_low" not in row:
                continue
            weighted = row.get("weighted_corrections", row.get("corrections", 0) + 0.5 * row.get("partials", 0))
            if row["sample_size"] == 0:
                expected: tuple[float | None, float | None] = (None, None)
            else:
                expected = wilson_oracle(weighted, row["sample_size"])
            assert (row["correction_rate_ci_low"], row["correction_rate_ci_high"]) == tuple(
                rounded(value) for value in expected
            ), (test["name"], row)
            compared += 1
    print(f"\nrate unit tests: {compared} expected intervals equal statsmodels' (6 decimals)")
    assert compared >= 4


def test_benjamini_hochberg_oracle_agrees_with_the_textbook_steps() -> None:
    """The oracle itself on a hand example (Benjamini & Hochberg 1995 step-up), so a change of statsmodels'
    default method would show: p = .01, .04, .03, .005 -> q = .02, .04, .04, .02."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, q_values, _, _ = multipletests([0.01, 0.04, 0.03, 0.005], method="fdr_bh")
    assert list(q_values) == pytest.approx([0.02, 0.04, 0.04, 0.02], abs=1e-15)


def test_period_rate_unit_test_expects_statsmodels_values() -> None:
    """metric_rates_by_period's unit test: each row's Wilson intervals and Newcombe change interval are
    statsmodels' (6 decimals), recomputed from the row's counts."""
    tests = yaml.safe_load((REPO / "models" / "marts" / "metrics" / "_metrics__models.yml").read_text())["unit_tests"]
    compared = 0
    for test in tests:
        for row in test["expect"]["rows"]:
            if "rate_ci_low" not in row:
                continue
            low, high = wilson_oracle(row["successes"], row["trials"])
            assert (row["rate_ci_low"], row["rate_ci_high"]) == (rounded(low), rounded(high)), row
            compared += 1
            if row["previous_trials"] and row["trials"]:
                change = newcombe_oracle(
                    row["successes"], row["trials"], row["previous_successes"], row["previous_trials"]
                )
                assert (row["rate_change_ci_low"], row["rate_change_ci_high"]) == tuple(rounded(v) for v in change), row
                compared += 1
    print(f"\nperiod rate unit test: {compared} expected intervals equal statsmodels' (6 decimals)")
    assert compared >= 6


def test_dimension_change_unit_tests_expect_statsmodels_values() -> None:
    """skill_dimension_changes' unit tests: every expected rate, change interval, p- and q-value is statsmodels'
    (Newcombe, pooled z-test, fdr_bh over the tested cells) recomputed from the given events."""
    compared = 0
    for test in unit_tests("skill_dimension_changes"):
        as_of = dt.datetime.fromisoformat(test["overrides"]["vars"]["as_of"])
        window = dt.timedelta(days=TREND_WINDOW_DAYS)
        events = events_from_counts(test["given"][0]["rows"], as_of, window)
        expected = dimension_change_oracle(events, as_of, TREND_WINDOW_DAYS, MIN_INVOCATIONS)
        assert {(row["skill_id"], row["dimension"]) for row in test["expect"]["rows"]} == set(expected), test["name"]
        for row in test["expect"]["rows"]:
            for column, value in expected[(row["skill_id"], row["dimension"])].items():
                assert row[column] == value, (test["name"], row["skill_id"], row["dimension"], column)
                compared += 1
    print(f"\ndimension change unit tests: {compared} expected values equal statsmodels' (6 decimals)")
    assert compared >= 40
