"""End to end: the eval, unified-signal, review-backlog and retention marts on
the demo warehouse.

The demo data set (`feedback-analytics demo-data`) is ingested once; dbt then
builds the marts in a subprocess (FEEDBACK_DB pointing at a copy of the
warehouse, target/ and logs/ in a temporary folder) twice: as of the demo's
as-of date, and as of an earlier instant that cuts the last eval runs and
some signals off. Every expected number is recomputed here in Python from the
raw tables, independently of the SQL: the cell status of every eval matrix
cell, the signal count per source and rating, the review backlog and the
session feedback retention window.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from fixtures_dbt import dbt_executable

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

DEMO_AS_OF = "2026-11-01"
# An instant before the demo's last two weekly eval runs (2026-10-24 and
# 2026-10-31), in the middle of a day: the as-of cut matters everywhere.
EARLIER_AS_OF = "2026-10-20T12:00:00"

FLAKY_WINDOW = 5  # dbt_project.yml default
MACHINE_CONFIDENCE_THRESHOLD = 0.70  # dbt_project.yml default
SESSION_FEEDBACK_KEEP_DAYS = 180  # seeds/retention_policies.csv

SELECTED = [
    "+path:models/marts/evals",
    "+path:models/marts/signals",
    "+path:models/marts/workspace",
    "+path:models/marts/retention",
]
SEED_SOURCE_SYSTEM = {"turn_reactions": "reactions"}  # mart name -> seed name


def as_of_instant(value: str) -> dt.datetime:
    """The dbt var `as_of` as macros/metrics/as_of.sql reads it: a date is the end of that day."""
    if len(value) == 10:
        return dt.datetime.combine(dt.date.fromisoformat(value), dt.time.max)
    return dt.datetime.fromisoformat(value)


def run(command: list[str], *, env: dict[str, str] | None = None) -> None:
    result = subprocess.run(
        command,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    output = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, f"{' '.join(command[:3])} exited {result.returncode}:\n{output}"


def build_marts(warehouse: Path, work_dir: Path, as_of: str) -> None:
    """dbt build of the selected marts and their parents (cautious: only tests whose parents are all built)."""
    run(
        [
            dbt_executable(),
            "build",
            "--project-dir",
            str(REPO),
            "--profiles-dir",
            str(REPO),
            "--target-path",
            str(work_dir / "target"),
            "--log-path",
            str(work_dir / "logs"),
            "--vars",
            json.dumps({"as_of": as_of}),
            "--indirect-selection",
            "cautious",
            "--select",
            *SELECTED,
        ],
        env={"FEEDBACK_DB": str(warehouse)},
    )


@dataclass(frozen=True)
class Built:
    warehouse: Path
    as_of: dt.datetime

    def query(self, sql: str) -> list[tuple]:
        with duckdb.connect(str(self.warehouse), read_only=True) as con:
            return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("marts_evals")
    demo, warehouse = root / "demo", root / "ingested.duckdb"
    run([sys.executable, "-m", "ingest", "demo-data", str(demo), "--as-of", DEMO_AS_OF])
    run(
        [sys.executable, "-m", "ingest", "ingest", "--config", str(demo / "sources.toml"), "--db", str(warehouse), "-q"]
    )
    return warehouse


@pytest.fixture(scope="module", params=[DEMO_AS_OF, EARLIER_AS_OF], ids=["demo_as_of", "earlier_as_of"])
def built(request: pytest.FixtureRequest, ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    work_dir = tmp_path_factory.mktemp("build")
    warehouse = work_dir / "warehouse.duckdb"
    shutil.copyfile(ingested, warehouse)
    build_marts(warehouse, work_dir, request.param)
    return Built(warehouse, as_of_instant(request.param))


# --- expected values, from the raw tables --------------------------------------------


def expected_cells(built: Built) -> dict[tuple[str, str], tuple[str, str]]:
    """(golden session, agent) -> (latest replay id, cell status), by docs/metrics.md (part 2)."""
    sessions = built.query("select id, agent_id, created_at, completed_at, metadata from raw.workspace_sessions")
    golden = {sid for sid, _, _, _, meta in sessions if isinstance(json.loads(meta or "{}").get("golden"), dict)}
    replays: dict[tuple[str, str], list[tuple[dt.datetime, str, bool]]] = defaultdict(list)
    for sid, agent_id, created_at, completed_at, meta in sessions:
        metadata = json.loads(meta or "{}")
        source = metadata.get("eval_source")
        replayed_at = completed_at or created_at
        if source is None or source not in golden or replayed_at > built.as_of:
            continue
        dimensions = (metadata.get("eval_result") or {}).get("dimensions") or {}
        passed = bool(dimensions) and all(result.get("passed") is True for result in dimensions.values())
        replays[(source, agent_id)].append((replayed_at, sid, passed))

    cells = {}
    for cell, history in replays.items():
        history.sort()
        outcomes = [passed for _, _, passed in history]
        latest, previous = outcomes[-1], outcomes[-2] if len(outcomes) > 1 else None
        window = outcomes[-FLAKY_WINDOW:]
        if previous is True and not latest:
            status = "regressed"
        elif previous is False and latest:
            status = "fixed"
        elif 0 < sum(window) < len(window):
            status = "flaky"
        else:
            status = "pass" if latest else "fail"
        cells[cell] = (history[-1][1], status)
    return cells


def active_reactions(built: Built) -> list[tuple[str, str]]:
    """(origin, reaction) of every active reaction at as_of.

    A user's latest reaction per turn unless it is a clear; every machine
    reaction at or above the confidence threshold.
    """
    rows = built.query(
        "select rn, conversation_id, turn_id, user_id, origin, reaction, confidence, ts from raw.turn_reactions"
    )
    latest_user: dict[tuple[str, str, str | None], tuple[dt.datetime, str, str | None]] = {}
    active = []
    for rn, conversation_id, turn_id, user_id, origin, reaction, confidence, ts in rows:
        if ts > built.as_of:
            continue
        origin = origin.strip().lower()
        reaction = reaction.strip().lower() if reaction is not None else None
        if origin == "user":
            key = (conversation_id, turn_id, user_id)
            if key not in latest_user or (ts, rn) > latest_user[key][:2]:
                latest_user[key] = (ts, rn, reaction)
        elif reaction is not None and confidence is not None and confidence >= MACHINE_CONFIDENCE_THRESHOLD:
            active.append(("machine", reaction))
    active += [("user", reaction) for _, _, reaction in latest_user.values() if reaction is not None]
    return active


def expected_signals(built: Built) -> Counter[tuple[str, str]]:
    """(source_system, rating) -> signals, with the seed's label mapping."""
    with (REPO / "seeds" / "feedback_label_ratings.csv").open() as seed:
        ratings = {(row["source_system"], row["label"]): row["rating"] for row in csv.DictReader(seed)}
    as_of = built.as_of
    labels: list[tuple[str, str]] = []
    labels += [
        ("session_feedback", label.strip().lower())
        for label, recorded_at in built.query("select label, recorded_at from raw.session_feedback")
        if recorded_at <= as_of
    ]
    labels += [("turn_reactions", reaction) for _, reaction in active_reactions(built)]
    analyzer = {
        event_id: outcome.strip().lower()
        for event_id, outcome, invoked_at in built.query(
            'select event_id, outcome, "timestamp" from raw.analyzer_events'
        )
        if invoked_at <= as_of
    }
    labels += [("analyzer", outcome) for outcome in analyzer.values()]
    labels += [
        ("workspace", rating.strip().lower())
        for rating, created_at in built.query("select rating, created_at from raw.workspace_feedback")
        if created_at <= as_of
    ]
    return Counter((source, ratings[(SEED_SOURCE_SYSTEM.get(source, source), label)]) for source, label in labels)


# --- the facts -------------------------------------------------------------------------


def test_matrix_has_one_cell_per_golden_session_and_agent(built: Built) -> None:
    cells = built.query("select golden_session_id, agent_id from marts.eval_matrix")
    assert len(cells) == len(set(cells))
    assert set(cells) == set(expected_cells(built))
    # The demo: 3 golden sets x 8 golden sessions, each replayed by the 3 agent configs of its tenant.
    agents_per_golden = Counter(golden for golden, _ in cells)
    assert len(agents_per_golden) == 24
    assert set(agents_per_golden.values()) == {3}


def test_every_cell_status_follows_the_definition(built: Built) -> None:
    rows = built.query("select golden_session_id, agent_id, replay_session_id, cell_status from marts.eval_matrix")
    actual = {(golden, agent): (replay, status) for golden, agent, replay, status in rows}
    assert actual == expected_cells(built)


def test_demo_matrix_statuses(built: Built) -> None:
    statuses = Counter(status for (status,) in built.query("select cell_status from marts.eval_matrix"))
    if built.as_of == as_of_instant(DEMO_AS_OF):
        # ingest/demo_data.py CELL_PATTERNS: two cells regress on the latest run, one is fixed
        # on it, one flip-flops, one always fails.
        assert statuses == {"regressed": 2, "fixed": 1, "flaky": 1, "fail": 1, "pass": 67}
        regressions = built.query("select failed_dimension_names, divergences from marts.eval_regressions")
        assert len(regressions) == 2
        for names, divergences in regressions:
            # The demo writes one divergence per failing dimension.
            assert {d["dimension"] for d in json.loads(divergences)} == set(names.split(", "))
    else:
        # As of 2026-10-20 the latest replay is run 8 of 10: the flip-flopping cell has just
        # failed after a pass (regressed wins over flaky), the cell fixed on run 10 still
        # fails, and the cell that started passing on run 5 still has a fail in its window.
        assert statuses == {"regressed": 1, "flaky": 1, "fail": 2, "pass": 68}


def test_no_replay_after_as_of_counts(built: Built) -> None:
    latest = built.query("select max(replayed_at) from marts.eval_matrix")[0][0]
    assert latest <= built.as_of
    trend_replays = built.query("select sum(replays) from marts.eval_set_accuracy_trend")[0][0]
    assert trend_replays == len(golden_replays_by_as_of(built))


def golden_replays_by_as_of(built: Built) -> list[str]:
    """Ids of the replays of golden sessions at or before as_of."""
    sessions = built.query("select id, created_at, completed_at, metadata from raw.workspace_sessions")
    golden = {sid for sid, _, _, meta in sessions if isinstance(json.loads(meta or "{}").get("golden"), dict)}
    return [
        sid
        for sid, created_at, completed_at, meta in sessions
        if json.loads(meta or "{}").get("eval_source") in golden and (completed_at or created_at) <= built.as_of
    ]


def test_feedback_signals_per_source_and_rating_match_the_raw_tables(built: Built) -> None:
    actual = Counter(
        {
            (source, rating): count
            for source, rating, count in built.query(
                "select source_system, rating, count(*) from marts.feedback_signals group by all"
            )
        }
    )
    expected = expected_signals(built)
    assert per_source(actual) == per_source(expected)
    assert actual == expected
    assert set(per_source(actual)) == {"session_feedback", "turn_reactions", "analyzer", "workspace"}
    daily = built.query("select sum(signals) from marts.feedback_signals_daily")[0][0]
    assert daily == sum(expected.values())


def per_source(counts: Counter[tuple[str, str]]) -> Counter[str]:
    totals: Counter[str] = Counter()
    for (source, _), count in counts.items():
        totals[source] += count
    return totals


def test_review_backlog_counts_every_row_with_its_status_at_as_of(built: Built) -> None:
    rows = built.query("select status, reviewed_at, created_at from raw.workspace_feedback")
    expected: Counter[str] = Counter()
    for status, reviewed_at, created_at in rows:
        if created_at > built.as_of:
            continue
        reviewed_later = reviewed_at is not None and reviewed_at > built.as_of
        expected["pending" if reviewed_later else status.strip().lower()] += 1
    actual = Counter(
        {
            status: int(n)
            for status, n in built.query("select status, sum(rows) from marts.feedback_review_backlog group by 1")
        }
    )
    assert actual == expected


def test_session_feedback_retention_window(built: Built) -> None:
    cutoff = built.as_of.date() - dt.timedelta(days=SESSION_FEEDBACK_KEEP_DAYS)
    rows = built.query("select recorded_date, recorded_at from raw.session_feedback")
    in_report = [recorded_date for recorded_date, recorded_at in rows if recorded_at <= built.as_of]
    kept = sum(1 for recorded_date in in_report if recorded_date >= cutoff)
    assert 0 < kept < len(in_report), "the demo's 200 days of history reach past the 180-day window"
    assert built.query("select count(*) from marts.retained_session_feedback")[0][0] == kept
    window = built.query(
        "select rows_kept, rows_outside_window, cast(cutoff_at as date) "
        "from marts.retention_policy_windows where policy = 'session_feedback'"
    )
    assert window == [(kept, len(in_report) - kept, cutoff)]
    golden = built.query("select count(*) from marts.retained_workspace_sessions where is_golden")[0][0]
    assert golden == 24
