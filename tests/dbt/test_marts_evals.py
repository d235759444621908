"""End to end: the eval, unified-signal, review-backlog and retention marts on
the demo warehouse.

The demo data set (`feedback-analytics demo-data`) is ingested once, and a few
workspace sessions the demo does not have are added to raw.workspace_sessions
(see `add_eval_edge_cases`: replays still running, cancelled, failed to run or
completed after the earlier as-of, a cell with a running replay only, golden
sessions promoted late or without a promotion date). dbt then builds the marts
in a subprocess (FEEDBACK_DB pointing at a copy of the warehouse, target/ and
logs/ in a temporary folder) twice: as of the demo's as-of date, and as of an
earlier instant that cuts the last eval runs and some signals off. Every
expected number is recomputed here in Python from the raw tables,
independently of the SQL: the cell status and pending replay of every eval
matrix cell, the signal count per source and rating, the review backlog and
the session feedback retention window.
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
from pathlib import Path
from typing import Any

import duckdb
import pytest

from demo import TENANTS, demo_tenant_id
from operations.build import dbt_command
from tests.support.evals import (
    Built,
    EdgeCases,
    Ingested,
    expected_cells,
    expected_signals,
    replays_per_cell,
)

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

DEMO_AS_OF = "2026-11-01"
# An instant before the demo's last two weekly eval runs (2026-10-24 and
# 2026-10-31), in the middle of a day: the as-of cut matters everywhere.
EARLIER_AS_OF = "2026-10-20T12:00:00"

SESSION_FEEDBACK_KEEP_DAYS = 180  # seeds/retention_policies.csv

SELECTED = [
    "+path:models/marts/evals",
    "+path:models/marts/signals",
    "+path:models/marts/workspace",
    "+path:models/marts/retention",
]


def as_of_instant(value: str) -> dt.datetime:
    """The dbt var `as_of` as macros/as_of/as_of.sql reads it: a date is the end of that day."""
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
        # no unit tests: they check the SQL on fixed rows, whatever the warehouse (test_project's full build runs them)
        dbt_command(
            "build",
            "--indirect-selection",
            "cautious",
            "--select",
            *SELECTED,
            as_of=as_of,
            unit_tests=False,
            work_dir=work_dir,
        ),
        env={"FEEDBACK_DB": str(warehouse)},
    )


def passing_result(session_type: str) -> dict[str, Any]:
    return {
        "session_type": session_type,
        "dimensions": {"output": {"passed": True, "score": 0.97}},
        "overall_accuracy": 0.97,
        "divergences": [],
    }


def add_eval_edge_cases(warehouse: Path) -> EdgeCases:
    """Add replays and golden sessions the demo lacks to raw.workspace_sessions (deterministic).

    The unfinished replays go to demo cells whose every replay passes, so that counting one
    of them as a fail (as the models did before) would turn the cell regressed or flaky.
    """
    with duckdb.connect(str(warehouse)) as con:
        sessions = con.execute(
            "select id, tenant_id, agent_id, session_type, metadata from raw.workspace_sessions order by id"
        ).fetchall()
        history: dict[tuple[str, str], list[bool]] = defaultdict(list)
        tenant_of: dict[str, tuple[str, str]] = {}
        golden_sets: dict[str, str] = {}
        for sid, tenant_id, agent_id, session_type, meta in sessions:
            metadata = json.loads(meta or "{}")
            if isinstance(metadata.get("golden"), dict):
                tenant_of[sid] = (tenant_id, session_type)
                golden_sets[metadata["golden"]["set"]] = sid
            if "eval_source" in metadata:
                dimensions = metadata["eval_result"]["dimensions"].values()
                history[(metadata["eval_source"], agent_id)].append(all(d["passed"] for d in dimensions))
        always_passing = sorted(cell for cell, outcomes in history.items() if all(outcomes))
        running_now, running_stale, cancelled, failed_to_run = always_passing[:4]
        pending_only = (always_passing[4][0], "e2e-agent-config-new")
        late_tenant, late_type = tenant_of[golden_sets["pe-extraction"]]
        nopromo_tenant, nopromo_type = tenant_of[golden_sets["chat-smoke"]]
        late_agent = next(agent for golden, agent in history if golden == golden_sets["pe-extraction"])
        nopromo_agent = next(agent for golden, agent in history if golden == golden_sets["chat-smoke"])
        promoted_late = ("e2e-golden-promoted-late", late_agent)
        no_promoted_at = ("e2e-golden-without-promoted-at", nopromo_agent)

        def ts(text: str) -> dt.datetime:
            return dt.datetime.fromisoformat(text)

        rows: list[tuple[str, str, str, str, str, dt.datetime, dt.datetime | None, dict[str, Any]]] = []

        def replay(
            sid: str,
            cell: tuple[str, str],
            status: str,
            created: str,
            completed: str | None,
            result: dict[str, Any] | None,
        ) -> None:
            tenant_id, session_type = tenant_of[cell[0]]
            metadata: dict[str, Any] = {"eval_source": cell[0]}
            if result is not None:
                metadata["eval_result"] = result
            rows.append(
                (
                    sid,
                    tenant_id,
                    cell[1],
                    session_type,
                    status,
                    ts(created),
                    ts(completed) if completed else None,
                    metadata,
                )
            )

        failing = {
            "session_type": "response",
            "dimensions": {"output": {"passed": False, "score": 0.2}},
            "overall_accuracy": 0.2,
            "divergences": [{"dimension": "output", "severity": "major", "expected": "a", "actual": "b"}],
        }
        tenant_of[promoted_late[0]] = (late_tenant, late_type)
        tenant_of[no_promoted_at[0]] = (nopromo_tenant, nopromo_type)
        replay("e2e-replay-running-now", running_now, "running", "2026-11-01 09:00:00", None, None)
        replay(
            "e2e-replay-completed-late",
            running_now,
            "completed",
            "2026-10-20 11:00:00",
            "2026-10-20 13:00:00",
            passing_result(tenant_of[running_now[0]][1]),
        )
        replay("e2e-replay-running-stale", running_stale, "running", "2026-10-20 10:00:00", None, None)
        replay("e2e-replay-cancelled", cancelled, "cancelled", "2026-10-19 10:00:00", "2026-10-19 10:05:00", failing)
        replay("e2e-replay-failed-to-run", failed_to_run, "failed", "2026-10-31 23:00:00", "2026-10-31 23:01:00", None)
        replay("e2e-replay-pending-only", pending_only, "running", "2026-10-18 10:00:00", None, None)
        replay(
            "e2e-replay-of-late-golden",
            promoted_late,
            "completed",
            "2026-10-15 10:00:00",
            "2026-10-15 10:01:00",
            passing_result(late_type),
        )
        replay(
            "e2e-replay-of-golden-without-promoted-at",
            no_promoted_at,
            "completed",
            "2026-10-15 10:00:00",
            "2026-10-15 10:01:00",
            passing_result(nopromo_type),
        )
        golden_rows = [
            (
                promoted_late[0],
                late_tenant,
                late_agent,
                late_type,
                "completed",
                ts("2026-09-01 09:00:00"),
                ts("2026-09-01 09:05:00"),
                {"golden": {"set": "pe-extraction", "promoted_at": "2026-10-25T09:00:00Z", "promoted_by": None}},
            ),
            (
                no_promoted_at[0],
                nopromo_tenant,
                nopromo_agent,
                nopromo_type,
                "completed",
                ts("2026-09-01 09:00:00"),
                ts("2026-09-01 09:05:00"),
                {"golden": {"set": "chat-smoke"}},
            ),
        ]
        con.executemany(
            "insert into raw.workspace_sessions (id, tenant_id, agent_id, session_type, status, created_at, "
            "completed_at, metadata, _source_uri, _loaded_at, _load_id) "
            "values (?, ?, ?, ?, ?, ?, ?, ?, 'test:add_eval_edge_cases', now(), 'test-edge-cases')",
            [(*row[:7], json.dumps(row[7])) for row in golden_rows + rows],
        )
    return EdgeCases(running_now, running_stale, cancelled, failed_to_run, pending_only, promoted_late, no_promoted_at)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    root = tmp_path_factory.mktemp("marts_evals")
    demo, warehouse = root / "demo", root / "ingested.duckdb"
    run([sys.executable, "-m", "cli", "demo-data", str(demo), "--as-of", DEMO_AS_OF])
    run([sys.executable, "-m", "cli", "ingest", "--config", str(demo / "sources.toml"), "--db", str(warehouse), "-q"])
    return Ingested(warehouse, add_eval_edge_cases(warehouse))


@pytest.fixture(scope="module", params=[DEMO_AS_OF, EARLIER_AS_OF], ids=["demo_as_of", "earlier_as_of"])
def built(request: pytest.FixtureRequest, ingested: Ingested, tmp_path_factory: pytest.TempPathFactory) -> Built:
    work_dir = tmp_path_factory.mktemp("build")
    warehouse = work_dir / "warehouse.duckdb"
    shutil.copyfile(ingested.warehouse, warehouse)
    build_marts(warehouse, work_dir, request.param)
    return Built(warehouse, as_of_instant(request.param), ingested.edge_cases)


def test_matrix_has_one_cell_per_golden_session_and_agent(built: Built) -> None:
    cells = built.query("select golden_session_id, agent_id from marts.eval_matrix")
    assert len(cells) == len(set(cells))
    assert set(cells) == set(expected_cells(built))
    # The demo: 3 golden sets x 8 golden sessions, each replayed by the 3 agent configs of its tenant;
    # add_eval_edge_cases: a 4th agent config on one of them, a golden session without a promotion
    # date, and one promoted on 2026-10-25 (after the earlier as-of: no cell then).
    edge = built.edge_cases
    agents_per_golden = Counter(golden for golden, _ in cells)
    late = built.as_of >= dt.datetime(2026, 10, 25, 9)
    assert len(agents_per_golden) == 24 + 1 + late
    assert agents_per_golden[edge.pending_only[0]] == 4
    assert agents_per_golden[edge.no_promoted_at[0]] == 1
    assert agents_per_golden[edge.promoted_late[0]] == (1 if late else 0)
    assert set(agents_per_golden.values()) == {1, 3, 4}


def test_every_cell_status_follows_the_definition(built: Built) -> None:
    rows = built.query(
        "select golden_session_id, agent_id, replay_session_id, cell_status, pending_replay_session_id "
        "from marts.eval_matrix"
    )
    actual = {(golden, agent): (replay, status, pending) for golden, agent, replay, status, pending in rows}
    assert actual == expected_cells(built)


def test_demo_matrix_statuses(built: Built) -> None:
    statuses = Counter(status for (status,) in built.query("select cell_status from marts.eval_matrix"))
    if built.as_of == as_of_instant(DEMO_AS_OF):
        # demo/workspace_evals.py CELL_PATTERNS: two cells regress on the latest run, one is fixed
        # on it, one flip-flops, one always fails; add_eval_edge_cases adds two passing cells
        # (the late golden and the one without a promotion date) and one with a running replay only.
        assert statuses == {"regressed": 2, "fixed": 1, "flaky": 1, "fail": 1, "pass": 69, "pending": 1}
        regressions = built.query("select failed_dimension_names, divergences from marts.eval_regressions")
        assert len(regressions) == 2
        for names, divergences in regressions:
            # The demo writes one divergence per failing dimension.
            assert {d["dimension"] for d in json.loads(divergences)} == set(names.split(", "))
    else:
        # As of 2026-10-20 the latest replay is run 8 of 10. The flip-flopping cell's window
        # F,P,F,P,F flips four times: flaky (no longer regressed: flaky comes first). The cell
        # fixed on run 10 still fails; the cell that started passing on run 5 (F,P,P,P,P in
        # its window, one flip) passes. The late golden has no cell yet.
        assert statuses == {"flaky": 1, "fail": 2, "pass": 70, "pending": 1}


# (status, pending replay) of each cell add_eval_edge_cases touched, worked out by hand from its rows.
EDGE_CASE_CELLS: dict[str, dict[str, tuple[str, str | None] | None]] = {
    DEMO_AS_OF: {
        # running since 09:00 on the demo's last day, after run 10: the cell keeps its pass
        "running_now": ("pass", "e2e-replay-running-now"),
        # running since 2026-10-20, older than runs 9 and 10: stale, not pending
        "running_stale": ("pass", None),
        "cancelled": ("pass", None),
        "failed_to_run": ("pass", None),
        "pending_only": ("pending", "e2e-replay-pending-only"),
        "promoted_late": ("pass", None),
        "no_promoted_at": ("pass", None),
    },
    EARLIER_AS_OF: {
        # completed at 13:00, after the 12:00 as-of: still running then
        "running_now": ("pass", "e2e-replay-completed-late"),
        "running_stale": ("pass", "e2e-replay-running-stale"),
        "cancelled": ("pass", None),
        "failed_to_run": ("pass", None),  # it starts after the as-of
        "pending_only": ("pending", "e2e-replay-pending-only"),
        "promoted_late": None,  # not golden yet: no cell
        "no_promoted_at": ("pass", None),
    },
}


@pytest.mark.parametrize("name", list(EDGE_CASE_CELLS[DEMO_AS_OF]))
def test_unfinished_replays_are_neither_pass_nor_fail(built: Built, name: str) -> None:
    """A running, cancelled or failed-to-run replay never turns a passing cell regressed or flaky."""
    as_of = DEMO_AS_OF if built.as_of == as_of_instant(DEMO_AS_OF) else EARLIER_AS_OF
    golden, agent = getattr(built.edge_cases, name)
    rows = built.query(
        "select cell_status, pending_replay_session_id, has_pending_replay, passed, replay_session_id "
        f"from marts.eval_matrix where golden_session_id = '{golden}' and agent_id = '{agent}'"
    )
    expected = EDGE_CASE_CELLS[as_of][name]
    if expected is None:
        assert rows == []
        return
    assert len(rows) == 1
    status, pending, has_pending, passed, replay = rows[0]
    assert (status, pending) == expected
    assert has_pending == (expected[1] is not None)
    assert (passed is None, replay is None) == ((status == "pending"),) * 2
    finished = {r.replay_id for r in replays_per_cell(built)[(golden, agent)] if r.state == "finished"}
    assert replay is None or replay in finished, "an unfinished replay never decides a cell"


def test_no_replay_after_as_of_counts(built: Built) -> None:
    latest = built.query("select max(replayed_at) from marts.eval_matrix")[0][0]
    assert latest <= built.as_of
    finished = [r for replays in replays_per_cell(built).values() for r in replays if r.state == "finished"]
    trend_replays, trend_passes = built.query("select sum(replays), sum(passes) from marts.eval_set_accuracy_trend")[0]
    assert (trend_replays, trend_passes) == (len(finished), sum(r.passed for r in finished))
    drilled = {replay for (replay,) in built.query("select distinct replay_session_id from marts.eval_cell_dimensions")}
    assert drilled == {r.replay_id for r in finished}


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


def test_feedback_signals_name_each_demo_tenant_once_across_sources(built: Built) -> None:
    """The reactions name a tenant, the workspace gives it a uuid; through the seed `tenants` both are one
    tenant: as many tenants in feedback_signals as the demo has, each with reaction and workspace signals,
    under one name; the eval marts and the daily mart use the same keys and names."""
    with (REPO / "seeds" / "tenants.csv").open(encoding="utf-8", newline="") as seed:
        names = {row["tenant_key"]: row["tenant_name"] for row in csv.DictReader(seed)}
    per_tenant = built.query(
        """
        select tenant, list(distinct tenant_name), list(distinct source_system order by source_system),
               list(distinct source_tenant_id order by source_tenant_id)
        from marts.feedback_signals
        where tenant is not null
        group by tenant
        """
    )
    assert len(per_tenant) == len(TENANTS) == 4
    assert {tenant: (tenant_names, systems, ids) for tenant, tenant_names, systems, ids in per_tenant} == {
        name: ([names[name]], ["turn_reactions", "workspace"], sorted([name, demo_tenant_id(name)])) for name in TENANTS
    }
    assert built.query(
        "select count(*) from marts.feedback_signals where (tenant is null) != (source_tenant_id is null)"
    ) == [(0,)]
    for mart in ("feedback_signals_daily", "eval_matrix", "eval_set_accuracy_trend", "eval_regressions"):
        pairs = set(built.query(f"select distinct tenant, tenant_name from marts.{mart} where tenant is not null"))
        assert pairs <= set(names.items()), mart
        assert pairs or mart == "eval_regressions", f"{mart} has no tenant"
    daily = dict(built.query("select tenant, sum(signals) from marts.feedback_signals_daily group by tenant"))
    signals = dict(built.query("select tenant, count(*) from marts.feedback_signals group by tenant"))
    assert daily == signals


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
    assert golden == 24 + 2  # add_eval_edge_cases: two more golden sessions (golden now, whatever as_of)
