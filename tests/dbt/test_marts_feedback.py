"""End to end: the feedback marts (analyzer, session feedback, turn reactions) on the demo
warehouse agree with the metric definitions of docs/metrics.md recomputed here in plain Python
from the raw tables, and their statistics (Wilson intervals, z-tests, p- and q-values) agree
on every row with statsmodels (tests/dbt/test_statistics_oracle.py has the oracle).

One module-scoped warehouse: demo data as of AS_OF, ingested with the CLI, then
`dbt build` of the marts and everything upstream of them (models, seeds, data tests and
unit tests) in a subprocess, with target/ and logs/ in a temporary folder.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from statsmodels.stats.multitest import multipletests

from demo import IMPROVING_SKILL, NEW_SKILL, WORSENING_SKILL
from operations.build import dbt_command
from tests.support.statistics import dimension_change_oracle, round_like_the_marts, wilson_oracle, z_test_oracle

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
AS_OF = "2026-11-01"
# A date as_of means the end of that day (macros/as_of/as_of.sql).
AS_OF_TS = dt.datetime(2026, 11, 1, 23, 59, 59, 999999)
# dbt_project.yml defaults.
LOOKBACK_DAYS = 90
TREND_WINDOW_DAYS = 30
MIN_INVOCATIONS = 5
MACHINE_CONFIDENCE_THRESHOLD = 0.70
OUTCOME_WEIGHTS = {"correction": 1.0, "partial": 0.5, "acceptance": 0.0}
# The marts round rates to 6 decimals: a recomputed value is within half a unit of it.
ROUNDED = 6e-7
# A statistic published by a mart against statsmodels' value rounded as the marts round (6 decimals).
ORACLE = 1e-9
TREND_SIGNIFICANCE_LEVEL = 0.05
# Every rate with a Wilson interval in the feedback marts: (mart, rate, successes, trials).
WILSON_RATES = (
    ("skill_correction_rates", "correction_rate", "weighted_corrections", "sample_size"),
    ("skill_correction_trends", "recent_rate", "recent_weighted_corrections", "recent_sample"),
    ("skill_correction_trends", "prior_rate", "prior_weighted_corrections", "prior_sample"),
    ("skill_correction_weekly", "correction_rate", "weighted_corrections", "sample_size"),
    ("session_feedback_daily", "positive_rate", "positive", "positive + negative"),
    ("session_feedback_daily", "skip_rate", "skip", "responses"),
    ("session_feedback_by_turn_bucket", "positive_rate", "positive", "positive + negative"),
    ("session_feedback_by_turn_bucket", "skip_rate", "skip", "responses"),
    ("reaction_satisfaction_daily", "satisfaction_rate", "ok", "ok + not_ok + neutral"),
    ("reaction_changes_daily", "flip_rate", "replacements + clears", "user_reactions"),
)

FEEDBACK_MARTS = (
    "skill_correction_rates",
    "skill_correction_trends",
    "skill_dimension_hotspots",
    "skill_dimension_changes",
    "skill_correction_weekly",
    "session_feedback_daily",
    "session_feedback_by_turn_bucket",
    "turn_reactions_active",
    "conversation_feedback_summary",
    "reaction_satisfaction_daily",
    "reaction_changes_daily",
)


def run(command: list[str], *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, f"{' '.join(command[:3])} exited {result.returncode}:\n{result.stdout[-6000:]}"
    return result


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Demo data ingested and the feedback marts built, as of AS_OF."""
    work_dir = tmp_path_factory.mktemp("marts-feedback")
    demo_dir, db = work_dir / "demo", work_dir / "warehouse.duckdb"
    cli = [sys.executable, "-m", "cli"]
    run([*cli, "demo-data", str(demo_dir), "--as-of", AS_OF])
    run([*cli, "ingest", "--config", str(demo_dir / "sources.toml"), "--db", str(db), "-q"])
    selection = [f"+{mart}" for mart in FEEDBACK_MARTS] + ["analyzer_dimensions"]
    run(
        # Tests run only when every node they read is built: a staging test that
        # also reads another area's model is left to the full build.
        dbt_command(
            "build", "--select", *selection, "--indirect-selection", "cautious", as_of=AS_OF, work_dir=work_dir
        ),
        env={**os.environ, "FEEDBACK_DB": str(db)},
    )
    return db


@pytest.fixture(scope="module")
def con(warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        yield connection


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def analyzer_events(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """raw.analyzer_events, one per event_id (first loaded), invoked at or before as_of."""
    first_loaded: dict[str, dict[str, Any]] = {}
    for event in rows(
        con,
        'select event_id, "timestamp" as invoked_at, skill_id, outcome, dimension_hint, '
        "_loaded_at, _load_id from raw.analyzer_events order by _loaded_at, _load_id",
    ):
        first_loaded.setdefault(event["event_id"], event)
    return [event for event in first_loaded.values() if event["invoked_at"] <= AS_OF_TS]


def correction_rate(events: list[dict[str, Any]]) -> float | None:
    if not events:
        return None
    return sum(OUTCOME_WEIGHTS[event["outcome"].strip().lower()] for event in events) / len(events)


def test_correction_rate_recomputed_from_raw_events(con: duckdb.DuckDBPyConnection) -> None:
    start = AS_OF_TS - dt.timedelta(days=LOOKBACK_DAYS)
    by_skill: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in analyzer_events(con):
        by_skill[event["skill_id"]].append(event)
    mart = {row["skill_id"]: row for row in rows(con, "select * from marts.skill_correction_rates")}
    assert set(mart) == set(by_skill)
    for skill_id, events in by_skill.items():
        in_window = [event for event in events if start <= event["invoked_at"] <= AS_OF_TS]
        outcomes = Counter(event["outcome"] for event in in_window)
        row = mart[skill_id]
        assert (row["corrections"], row["partials"], row["acceptances"], row["sample_size"]) == (
            outcomes["correction"],
            outcomes["partial"],
            outcomes["acceptance"],
            len(in_window),
        ), skill_id
        expected = correction_rate(in_window)
        assert expected is not None
        assert row["correction_rate"] == pytest.approx(expected, abs=ROUNDED), skill_id
        weighted = sum(OUTCOME_WEIGHTS[event["outcome"].strip().lower()] for event in in_window)
        low, high = wilson_oracle(weighted, len(in_window))
        assert row["correction_rate_ci_low"] == pytest.approx(round_like_the_marts(low), abs=ORACLE), skill_id
        assert row["correction_rate_ci_high"] == pytest.approx(round_like_the_marts(high), abs=ORACLE), skill_id
        assert row["sufficient_data"] is (len(in_window) >= MIN_INVOCATIONS)
        assert row["last_invoked_at"] == max(event["invoked_at"] for event in events)
        assert row["correction_lookback_days"] == LOOKBACK_DAYS, "the mart records the window it was built with"


def test_trend_directions_of_the_demo_skills(con: duckdb.DuckDBPyConnection) -> None:
    window = dt.timedelta(days=TREND_WINDOW_DAYS)
    by_skill: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in analyzer_events(con):
        by_skill[event["skill_id"]].append(event)
    mart = {row["skill_id"]: row for row in rows(con, "select * from marts.skill_correction_trends")}
    for skill_id, events in by_skill.items():
        recent = [event for event in events if AS_OF_TS - window <= event["invoked_at"] <= AS_OF_TS]
        prior = [event for event in events if AS_OF_TS - 2 * window <= event["invoked_at"] < AS_OF_TS - window]
        row = mart[skill_id]
        assert (row["recent_sample"], row["prior_sample"]) == (len(recent), len(prior)), skill_id
        assert row["trend_window_days"] == TREND_WINDOW_DAYS, "the mart records the window it was built with"
        for column, expected in (("recent_rate", correction_rate(recent)), ("prior_rate", correction_rate(prior))):
            if expected is None:
                assert row[column] is None, f"{skill_id}: an empty window has a NULL rate"
            else:
                assert row[column] == pytest.approx(expected, abs=ROUNDED), skill_id

    assert mart[WORSENING_SKILL]["direction"] == "worsening"
    assert mart[IMPROVING_SKILL]["direction"] == "improving"
    assert mart[NEW_SKILL]["direction"] == "insufficient_data"
    assert mart[NEW_SKILL]["prior_rate"] is None
    for skill_id in (WORSENING_SKILL, IMPROVING_SKILL):
        assert mart[skill_id]["is_significant"] is True
    others = set(mart) - {WORSENING_SKILL, IMPROVING_SKILL, NEW_SKILL}
    assert {mart[skill_id]["direction"] for skill_id in others} == {"stable"}


def test_wilson_intervals_of_every_mart_row_match_statsmodels(con: duckdb.DuckDBPyConnection) -> None:
    """Every row of every feedback mart with a rate: its 95% interval is statsmodels'
    proportion_confint(successes, trials, method="wilson") of the row's own counts, rounded as the
    marts round (6 decimals); NULL when the sample is empty."""
    worst_rounded = worst_unrounded = 0.0
    compared: Counter[str] = Counter()
    for mart, rate, successes, trials in WILSON_RATES:
        for row in rows(
            con,
            f"select {successes} as successes, {trials} as trials, {rate}_ci_low as low, {rate}_ci_high as high "
            f"from marts.{mart}",
        ):
            if row["trials"] == 0:
                assert (row["low"], row["high"]) == (None, None), (mart, rate, row)
                continue
            exact = wilson_oracle(float(row["successes"]), float(row["trials"]))
            for published, expected in zip((row["low"], row["high"]), exact, strict=True):
                worst_rounded = max(worst_rounded, abs(published - round_like_the_marts(expected)))
                worst_unrounded = max(worst_unrounded, abs(published - expected))
            compared[f"{mart}.{rate}"] += 1
    print(
        f"\nWilson intervals of {sum(compared.values()):,} mart rows ({len(compared)} rates) vs statsmodels: "
        f"max abs difference {worst_rounded:.3g} to its value rounded to 6 decimals, "
        f"{worst_unrounded:.3g} to the unrounded value"
    )
    assert set(compared) == {f"{mart}.{rate}" for mart, rate, _, _ in WILSON_RATES}, "a rate had no row to compare"
    assert worst_rounded <= ORACLE


def test_trend_z_p_and_q_values_match_statsmodels(con: duckdb.DuckDBPyConnection) -> None:
    """Every skill: z and p are statsmodels' proportions_ztest (pooled, two-sided) of its weighted correction
    counts; q is multipletests(method="fdr_bh") over the family of every skill with a p-value; is_significant
    is q <= 0.05. Skills without a test have no z, p nor q and are not significant."""
    mart = rows(con, "select * from marts.skill_correction_trends order by skill_id")
    tests = {
        row["skill_id"]: z_test_oracle(
            float(row["recent_weighted_corrections"]),
            row["recent_sample"],
            float(row["prior_weighted_corrections"]),
            row["prior_sample"],
        )
        for row in mart
    }
    family = [skill_id for skill_id, test in tests.items() if test is not None]
    rejected, q_values, _, _ = multipletests(
        [tests[skill_id][1] for skill_id in family], alpha=TREND_SIGNIFICANCE_LEVEL, method="fdr_bh"
    )
    q_value = dict(zip(family, q_values, strict=True))
    reject = dict(zip(family, rejected, strict=True))
    worst = dict.fromkeys(("z_statistic", "p_value", "q_value"), 0.0)
    for row in mart:
        test = tests[row["skill_id"]]
        if test is None:
            assert (row["z_statistic"], row["p_value"], row["q_value"], row["is_significant"]) == (
                None,
                None,
                None,
                False,
            ), row["skill_id"]
            continue
        for column, expected in (("z_statistic", test[0]), ("p_value", test[1]), ("q_value", q_value[row["skill_id"]])):
            worst[column] = max(worst[column], abs(row[column] - round_like_the_marts(float(expected))))
        published_q = round_like_the_marts(float(q_value[row["skill_id"]]))
        assert row["is_significant"] is (published_q <= TREND_SIGNIFICANCE_LEVEL), row["skill_id"]
        if abs(q_value[row["skill_id"]] - TREND_SIGNIFICANCE_LEVEL) > 1e-6:
            assert row["is_significant"] is bool(reject[row["skill_id"]]), row["skill_id"]
    print(
        f"\nskill_correction_trends, {len(family)} tests of {len(mart)} skills vs statsmodels (rounded to 6 "
        "decimals): max abs difference " + ", ".join(f"{column} {value:.3g}" for column, value in worst.items())
    )
    assert len(family) >= 2 and len(family) < len(mart), "the demo has skills with and without a test"
    assert any(row["is_significant"] for row in mart)
    assert max(worst.values()) <= ORACLE


def test_hotspots_recomputed_from_raw_events(con: duckdb.DuckDBPyConnection) -> None:
    start = AS_OF_TS - dt.timedelta(days=LOOKBACK_DAYS)
    expected: Counter[tuple[str, str]] = Counter(
        (event["skill_id"], event["dimension_hint"].strip().lower())
        for event in analyzer_events(con)
        if start <= event["invoked_at"]
        and event["outcome"] in ("correction", "partial")
        and event["dimension_hint"] is not None
    )
    mart = {
        (row["skill_id"], row["dimension"]): row["occurrences"]
        for row in rows(con, "select * from marts.skill_dimension_hotspots")
    }
    assert mart == dict(expected)


def test_dimension_changes_recomputed_from_raw_events(con: duckdb.DuckDBPyConnection) -> None:
    """skill_dimension_changes from the raw events and statsmodels: per skill and dimension, the rates over every
    invocation of the skill (not the dimension's own events), Newcombe's interval of the change, the z-test's p
    and the BH q over every tested cell; the demo's worsening skill got significantly worse on some dimension."""
    events = [
        {
            "skill_id": event["skill_id"],
            "invoked_at": event["invoked_at"],
            "dimension_hint": None if event["dimension_hint"] is None else event["dimension_hint"].strip().lower(),
            "is_event": event["outcome"].strip().lower() in ("correction", "partial"),
        }
        for event in analyzer_events(con)
    ]
    expected = dimension_change_oracle(events, AS_OF_TS, TREND_WINDOW_DAYS, MIN_INVOCATIONS)
    mart = {
        (row.pop("skill_id"), row.pop("dimension")): row
        for row in rows(con, "select * from marts.skill_dimension_changes")
    }
    assert set(mart) == set(expected)
    worst = 0.0
    for key, row in mart.items():
        for column, value in expected[key].items():
            if isinstance(value, float):
                worst = max(worst, abs(row[column] - value))
            else:
                assert row[column] == value, (key, column)
    print(f"\nskill_dimension_changes, {len(mart)} cells vs statsmodels: max abs difference {worst:.3g}")
    assert worst <= ORACLE
    assert any(row["is_significant_worsening"] for key, row in mart.items() if key[0] == WORSENING_SKILL)


def active_reactions_from_raw(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """raw.turn_reactions up to as_of, reduced to the active ones by docs/metrics.md ("Which reactions are
    active"): each user's latest reaction per turn (by time, then rn) unless it is a clear; machine reactions at
    or above the confidence threshold."""
    latest_user: dict[tuple[str, str, str], dict[str, Any]] = {}
    machine: list[dict[str, Any]] = []
    for reaction in rows(con, "select * from raw.turn_reactions order by ts, rn"):
        if reaction["ts"] > AS_OF_TS:
            continue
        active = {
            "rn": reaction["rn"],
            "reacted_at": reaction["ts"],
            "origin": reaction["origin"].strip().lower(),
            "reaction": reaction["reaction"].strip().lower() if reaction["reaction"] is not None else None,
        }
        if active["origin"] == "user":
            latest_user[(reaction["conversation_id"], reaction["turn_id"], reaction["user_id"])] = active
        elif active["reaction"] is not None and (reaction["confidence"] or 0.0) >= MACHINE_CONFIDENCE_THRESHOLD:
            machine.append(active)
    return machine + [reaction for reaction in latest_user.values() if reaction["reaction"] is not None]


def test_active_reactions_recomputed_from_raw_reactions(con: duckdb.DuckDBPyConnection) -> None:
    """Latest user reaction per turn unless it is a clear; machine reactions from the threshold."""
    expected = {reaction["rn"] for reaction in active_reactions_from_raw(con)}
    active = {row["rn"] for row in rows(con, "select rn from marts.turn_reactions_active")}
    assert active == expected
    # The demo holds the edge cases: exactly 0.70 counts, 0.69 does not; clears and replacements.
    confidences = {
        row["confidence"]: row["is_active"]
        for row in rows(
            con,
            "select confidence, bool_or(is_active) as is_active from intermediate.int_reactions__history "
            "where origin = 'machine' and confidence in (0.69, 0.70) group by confidence",
        )
    }
    assert confidences == {0.69: False, 0.70: True}
    changes = rows(
        con, "select sum(replacements) as replacements, sum(clears) as clears from marts.reaction_changes_daily"
    )
    assert changes[0]["replacements"] > 0 and changes[0]["clears"] > 0


def test_satisfaction_recomputed_from_raw_reactions(con: duckdb.DuckDBPyConnection) -> None:
    """satisfaction_rate = ok / (ok + not_ok + neutral) per UTC day and origin, counted here from the raw
    reactions (not from another mart), with statsmodels' Wilson interval of those counts."""
    counts: dict[tuple[dt.date, str], Counter[str]] = defaultdict(Counter)
    for reaction in active_reactions_from_raw(con):
        counts[(reaction["reacted_at"].date(), reaction["origin"])][reaction["reaction"]] += 1
    mart = {
        (row["reaction_date"], row["origin"]): row
        for row in rows(con, "select * from marts.reaction_satisfaction_daily")
    }
    assert counts and set(mart) == set(counts)
    for key, counter in counts.items():
        row = mart[key]
        rated = counter["ok"] + counter["not_ok"] + counter["neutral"]
        assert (row["ok"], row["not_ok"], row["neutral"], row["reactions"]) == (
            counter["ok"],
            counter["not_ok"],
            counter["neutral"],
            sum(counter.values()),
        ), key
        if rated == 0:
            assert (row["satisfaction_rate"], row["satisfaction_rate_ci_low"]) == (None, None), key
            continue
        assert row["satisfaction_rate"] == pytest.approx(counter["ok"] / rated, abs=ROUNDED), key
        low, high = wilson_oracle(counter["ok"], rated)
        assert row["satisfaction_rate_ci_low"] == pytest.approx(round_like_the_marts(low), abs=ORACLE), key
        assert row["satisfaction_rate_ci_high"] == pytest.approx(round_like_the_marts(high), abs=ORACLE), key

    totals = rows(con, "select sum(total) as total from marts.conversation_feedback_summary")
    assert totals[0]["total"] == sum(sum(counter.values()) for counter in counts.values())


def test_session_feedback_rates_recomputed_from_raw_records(con: duckdb.DuckDBPyConnection) -> None:
    counts: dict[tuple[dt.date, str], Counter[str]] = defaultdict(Counter)
    for record in rows(con, "select recorded_at, recorded_date, label, source from raw.session_feedback"):
        if record["recorded_at"] <= AS_OF_TS:
            counts[(record["recorded_date"], record["source"].strip().lower())][record["label"].strip().lower()] += 1
    mart = {
        (row["feedback_date"], row["source"]): row for row in rows(con, "select * from marts.session_feedback_daily")
    }
    assert set(mart) == set(counts)
    for key, counter in counts.items():
        row = mart[key]
        rated = counter["positive"] + counter["negative"]
        responses = rated + counter["skip"]
        assert (row["positive"], row["negative"], row["skip"], row["responses"]) == (
            counter["positive"],
            counter["negative"],
            counter["skip"],
            responses,
        )
        if rated == 0:
            assert row["positive_rate"] is None
        else:
            assert row["positive_rate"] == pytest.approx(counter["positive"] / rated, abs=ROUNDED)
        assert row["skip_rate"] == pytest.approx(counter["skip"] / responses, abs=ROUNDED)

    by_bucket = rows(con, "select sum(responses) as responses from marts.session_feedback_by_turn_bucket")
    assert by_bucket[0]["responses"] == sum(sum(counter.values()) for counter in counts.values())
