"""The operational alert rules on a real build (int_alerts__operational_checks, docs/alerts.md): a copy of the
demo warehouse (as of 2026-11-01, its signals up to that day) built again as of that day and as of 2026-11-05,
the clock moved four days on with nothing arriving: every source is silent past the 72 hours of the default
rule. The copy has no raw.nightly_runs (a warehouse no nightly of this version ran on): the build passes and the
nightly rule has nothing to say."""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import duckdb
import pytest

from tests.support.dashboard import copy_warehouse, demo_or_fail
from tests.support.dbt import run_dbt
from tests.support.ingest import query

pytestmark = pytest.mark.slow

MODELS = ("stg_warehouse_ops__nightly_runs", "int_alerts__operational_checks")
DAY = dt.timedelta(days=1)


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    demo = demo_or_fail(tmp_path_factory.getbasetemp())
    work = tmp_path_factory.mktemp("alerts-operational")
    db = copy_warehouse(demo.db, work / "warehouse.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("drop table raw.nightly_runs")
    found: dict[str, Any] = {"db": db}
    for as_of in ("2026-11-01", "2026-11-05"):
        done = run_dbt(
            [
                "build",
                "--select",
                *MODELS,
                "--exclude",
                "test_type:unit",
                "--vars",
                json.dumps({"allow_mixed_as_of": True}),
            ],
            warehouse=db,
            work_dir=work,
            as_of=as_of,  # FEEDBACK_AS_OF, not --vars: the second build re-uses the first one's parse
        )
        assert done.returncode == 0, done.stdout[-4000:]
        found[as_of] = query(
            db,
            "select rule_id, subject, evaluated_on, evaluated_at, value, evaluation "
            "from intermediate.int_alerts__operational_checks order by rule_id, subject, evaluated_on",
        )
    found["last_signals"] = dict(
        query(db, "select source_system, max(occurred_at) from marts.feedback_signals group by source_system")
    )
    return found


def silent(rows: list[tuple[Any, ...]], day: dt.date) -> dict[str, tuple[Any, ...]]:
    return {row[1]: row for row in rows if row[0] == "source_silent" and row[2] == day}


def test_evaluation_days_are_the_as_of_day_and_six_before(builds: dict[str, Any]) -> None:
    for as_of, last_day in (("2026-11-01", dt.date(2026, 11, 1)), ("2026-11-05", dt.date(2026, 11, 5))):
        days = sorted({row[2] for row in builds[as_of]})
        assert days == [last_day - n * DAY for n in range(6, -1, -1)], (as_of, days)


@pytest.mark.parametrize(("as_of", "evaluation"), [("2026-11-01", "clear"), ("2026-11-05", "breach")])
def test_source_silent_with_the_clock_moved(builds: dict[str, Any], as_of: str, evaluation: str) -> None:
    """Every source of the demo, evaluated at the end of the as-of day: hours since its last signal."""
    last_signals = builds["last_signals"]
    day = dt.date.fromisoformat(as_of)
    rows = silent(builds[as_of], day)
    assert sorted(rows) == sorted(last_signals), "one row per source system that has signals"
    instant = dt.datetime.combine(day, dt.time(23, 59, 59, 999999))
    for source, (_, _, _, evaluated_at, hours, found) in rows.items():
        assert evaluated_at == instant
        expected = (instant - last_signals[source]).total_seconds() / 3600
        assert math.isclose(hours, expected, abs_tol=1e-5), (source, hours, expected)
        assert found == evaluation and (hours > 72) == (evaluation == "breach"), (source, hours, found)


def test_without_raw_nightly_runs_the_build_has_no_nightly_row(builds: dict[str, Any]) -> None:
    assert query(builds["db"], "select count(*) from staging.stg_warehouse_ops__nightly_runs") == [(0,)]
    assert not [row for row in builds["2026-11-05"] if row[0] == "nightly_failed"]
