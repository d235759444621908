"""The alert benchmark (bench/alerts_power.py) computes what the dbt evaluation computes.

- Its vectorised statistics (the one-sided pooled two-proportion z-test, Benjamini-Hochberg across a
  night's family) equal statsmodels' `proportions_ztest(alternative="larger")` and
  `multipletests(method="fdr_bh")`, the independent implementation.
- Its state machine fires on the sustain-th consecutive breach, resolves on the first clear night, and
  lets a night with too little data neither count nor resolve (docs/alerts.md, "States").
- On the demo warehouse, the benchmark's windows, p and q over the same daily counts
  (int_alerts__daily_counts) equal alert_evaluations' n, baseline_n, p_value and q_value of every
  evaluation day (the marts round to 6 decimals).
- The script runs at a tiny size and prints its table; a bad size is one line.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import duckdb
import numpy as np
import pytest

from bench.alerts_power import bh_q_values, episodes, night_statsmodels, one_sided_p, read_rule, windows
from tests.support.dashboard import demo_or_fail

ROOT = Path(__file__).resolve().parents[2]
EXACT = 1e-12
ROUNDED = 5e-7 + 1e-12  # the marts round to 6 decimals


def test_vectorised_statistics_equal_statsmodels() -> None:
    rng = np.random.default_rng(29)
    worst, compared = 0.0, 0
    for _ in range(30):
        n1 = rng.integers(0, 400, size=36).astype(float)
        n2 = rng.integers(0, 2000, size=36).astype(float)
        x1 = np.floor(rng.uniform(0, 1, size=36) * (n1 + 1))
        x2 = np.floor(rng.uniform(0, 1, size=36) * (n2 + 1))
        x1[:3], n1[:3], x2[:3], n2[:3] = (0, 0, 7), (0, 5, 7), (0, 0, 7), (10, 9, 7)  # undefined tests
        x1[3], n1[3], x2[3], n2[3] = 4.5, 20, 1.5, 30  # partials weigh 0.5
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p_ref, q_ref = night_statsmodels(x1, n1, x2, n2)
        p = one_sided_p(x1, n1, x2, n2)
        q = bh_q_values(p[None, :])[0]
        assert np.array_equal(np.isnan(p), np.isnan(p_ref)) and np.array_equal(np.isnan(q), np.isnan(q_ref))
        assert np.isnan(p[:3]).all()
        worst = max(worst, float(np.nanmax(np.abs(p - p_ref))), float(np.nanmax(np.abs(q - q_ref))))
        compared += int(np.sum(~np.isnan(p)))
    print(f"largest gap to statsmodels over {compared} tests: {worst:.3g}")
    assert compared > 500 and worst < EXACT


def test_episodes_fire_on_the_sustained_breach_and_resolve_on_a_clear_night() -> None:
    # B breach, C clear, I insufficient data; one subject, sustain 2
    night = "BCBBBIBCBB" + "BIB" + "C"
    breach = np.array([[[c == "B"] for c in night]])
    sufficient = np.array([[[c != "I"] for c in night]])
    started, first = episodes(breach, sufficient, sustain=2)
    # fires at night 3 (second breach in a row), stays through I, resolves at C (7), fires again at 9;
    # 9's episode is still firing through BIB, resolves at the last C: two episodes
    assert (int(started[0, 0]), int(first[0, 0])) == (2, 3)
    # I does not break a streak: B I B fires on the third night
    started, first = episodes(np.array([[[True], [False], [True]]]), np.array([[[True], [False], [True]]]), 2)
    assert (int(started[0, 0]), int(first[0, 0])) == (1, 2)
    started, first = episodes(np.array([[[True], [False], [True]]]), np.ones((1, 3, 1), dtype=bool), 2)
    assert (int(started[0, 0]), int(first[0, 0])) == (0, -1)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_or_fail(tmp_path_factory.getbasetemp()).db


def test_the_benchmark_computes_the_marts_statistics_on_the_demo(demo_db: Path) -> None:
    with duckdb.connect(str(demo_db), read_only=True) as con:
        counts = con.sql(
            "select metric, scope, subject, count_date, successes, trials from intermediate.int_alerts__daily_counts"
        ).fetchall()
        # every tested row of the marts, with the counts its test was made on (eval cells have no windows)
        evaluations = con.sql(
            """
            select e.rule_id, e.subject, e.evaluated_on, e.n, e.baseline_n, e.p_value, e.q_value, e.is_breach,
                   e.metric, e.scope, e.bad_direction, r.recent_days, r.baseline_days,
                   t.recent_successes, t.baseline_successes
            from marts.alert_evaluations as e
            inner join seeds.alert_rules as r using (rule_id)
            inner join intermediate.int_alerts__statistical_tests as t using (rule_id, subject, evaluated_on)
            where e.p_value is not null
            order by e.evaluated_on, e.rule_id, e.subject
            """
        ).fetchall()
        tested = con.sql("select count(p_value) from marts.alert_evaluations").fetchall()[0][0]
    assert evaluations and counts and len(evaluations) == tested, "every tested evaluation has its counts"
    # room before the first count for the longest windows (a window before the data sums nothing)
    longest = max(row[11] + row[12] for row in evaluations if row[11] is not None)
    first_day = min(row[3] for row in counts) - dt.timedelta(days=longest)
    days = (max(max(row[3] for row in counts), max(row[2] for row in evaluations)) - first_day).days + 1
    daily: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
    for metric, scope, subject, day, successes, trials in counts:
        series = daily.setdefault((metric, scope, subject), (np.zeros((1, days, 1)), np.zeros((1, days, 1))))
        series[0][0, (day - first_day).days, 0] += successes
        series[1][0, (day - first_day).days, 0] += trials
    seed_rule = read_rule()
    by_day: dict[dt.date, list[tuple]] = {}
    for row in evaluations:
        by_day.setdefault(row[2], []).append(row)
    compared, windowed, worst = 0, 0, 0.0
    for day, rows in by_day.items():
        pairs, marts = [], []
        for row in rows:
            rule_id, subject, _, n, baseline_n, p_value, q_value, _, metric, scope, direction, recent, base, x1, x2 = (
                row
            )
            if scope != "eval_cell":  # the benchmark's windows over the daily counts: the marts' samples
                rule = replace(seed_rule, recent_days=recent, baseline_days=base)
                night = np.array([(day - first_day).days])
                successes, trials = daily[(metric, scope, subject)]
                sums = [float(total[0, 0, 0]) for part in (successes, trials) for total in windows(part, rule, night)]
                assert sums == [x1, x2, n, baseline_n], (rule_id, subject, day)
                windowed += 1
            # a test of `down` is the test of `up` with the windows swapped (Q(-z))
            pairs.append((x1, n, x2, baseline_n) if direction == "up" else (x2, baseline_n, x1, n))
            marts.append((p_value, q_value))
        x1s, n1s, x2s, n2s = (np.array(values, dtype=float) for values in zip(*pairs, strict=True))
        p = one_sided_p(x1s, n1s, x2s, n2s)
        q = bh_q_values(p[None, :])[0]
        p_ref, q_ref = night_statsmodels(x1s, n1s, x2s, n2s)
        expected = np.array(marts)
        worst = max(worst, float(np.max(np.abs(p - expected[:, 0]))), float(np.max(np.abs(q - expected[:, 1]))))
        assert np.max(np.abs(p - p_ref)) < EXACT and np.max(np.abs(q - q_ref)) < EXACT
        compared += len(rows)
    print(f"compared {compared} evaluations ({windowed} windows) over {len(by_day)} days: largest gap {worst:.3g}")
    assert worst <= ROUNDED
    assert compared >= 100 and windowed >= 100 and len(by_day) >= 2
    assert any(r[0] == "skill_correction_rate_up" and r[1] == "cpp-expert" and r[7] for r in evaluations)


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bench/alerts_power.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_the_script_prints_its_table_at_a_tiny_size() -> None:
    result = run_script("--simulations", "3", "--nights", "20", "--base-rates", "0.05")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("| method | base rate | false alarms per 30 nights")
    assert [line.split("|")[1].split(":")[0].split("(")[0].strip() for line in lines[2:5]] == [
        "statistical rule",
        "threshold",
        "threshold, tuned",
    ]
    assert '"statsmodels_gap"' in lines[-1]
    bad = run_script("--simulations", "0")
    assert bad.returncode != 0 and bad.stderr.strip().splitlines() == ["--simulations and --nights must be at least 1"]
    bad = run_script("--base-rates", "0.05,0.95")
    assert bad.returncode != 0 and bad.stderr.strip().splitlines() == ["--base-rates: 0.95 is not between 0 and 0.9"]
