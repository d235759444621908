"""A purge changes what is stored, never what a report says.

One demo warehouse, built, purged as of a timestamp typed with an offset (the
UTC day differs from the local one), and rebuilt:

- every analyzer-derived mart is equal row for row before and after the
  purge, at as_of and at past as_ofs whose windows lie in the archive
  (docs/metrics.md, "Common rules": archived events stay visible, a past as_of reproduces a past
  report);
- the purge and the retention views cut at the same UTC day;
- what the dry run says each policy would remove (Python, operations/retention.py)
  is what retention_policy_windows calls outside its window (dbt);
- after the purge, each retained_* view holds exactly the rows left in the
  raw tables and the archive, counted here in plain SQL on the raw data.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.support.dbt import REPO, assert_same_rows, run_dbt
from warehouse.as_of import parse_as_of

pytestmark = pytest.mark.slow

DEMO_DAY = "2026-11-01"
# 23:30 in New York on 1 November is 04:30 UTC on 2 November: the purge day and
# the views' cutoff day are both 2026-11-02.
AS_OF = "2026-11-01T23:30:00-05:00"
AS_OF_UTC = dt.datetime(2026, 11, 2, 4, 30)
# Past report instants whose windows reach into what the purge archives (older than 90 days).
PAST_AS_OFS = ("2026-09-17", "2026-07-04T12:00:00+02:00")
ANALYZER_POLICIES = ("analyzer_events", "analyzer_events_archive")
# marts that keep the days of every build (incremental, never full-refreshed): compared as of the latest build
# only, not rebuilt as of a past instant (a past build adds its own evaluation days to alert_evaluations)
HISTORY_MARTS = ("skill_correction_daily_history", "alert_evaluations")
# built from alert_evaluations alone (the episodes and their evidence): compared through it; at this scale no
# episode need exist, so a row-for-row comparison of them could prove nothing
DERIVED_FROM_HISTORY = ("alert_states", "alert_evidence_daily")
FLOAT_TOLERANCE = 1e-12
MIXED_AS_OF = json.dumps({"allow_mixed_as_of": True})


def cli(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    # dbt's target/ and logs/ beside the warehouse, not in the checkout another test worker's dbt may be using
    dbt_paths = {"DBT_TARGET_PATH": str(db.parent / "dbt-target"), "DBT_LOG_PATH": str(db.parent / "dbt-logs")}
    result = subprocess.run(
        [sys.executable, "-m", "cli", *args, "--db", str(db)],
        cwd=REPO,
        env={**os.environ, **dbt_paths},
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, (
        f"{args[0]} exited {result.returncode}:\n{result.stdout[-4000:]}{result.stderr[-4000:]}"
    )
    return result


def analyzer_marts(work: Path, db: Path) -> list[str]:
    """Every mart downstream of the analyzer events, as dbt itself lists them."""
    listed = run_dbt(
        ["ls", "--select", "stg_analyzer__events+,path:models/marts", "--resource-type", "model", "--output", "name"]
        + ["--vars", MIXED_AS_OF],  # build_past's vars: its runs re-use this parse
        warehouse=db,
        work_dir=work,
    )
    assert listed.returncode == 0, listed.stdout[-3000:]
    names = sorted(line.strip() for line in listed.stdout.splitlines() if re.fullmatch(r"[a-z0-9_]+", line.strip()))
    # the warehouse_* marts describe the raw tables themselves (rows per table), which a purge changes by design
    names = [name for name in names if not name.startswith("warehouse_") and name not in DERIVED_FROM_HISTORY]
    assert {"skill_correction_rates", "skill_correction_trends", "retained_analyzer_events", "feedback_signals"} <= set(
        names
    ), names
    return names


def analyzer_rows_of(con: duckdb.DuckDBPyConnection, mart: str) -> list[tuple[Any, ...]]:
    """The mart's rows that come from analyzer events, in a canonical order."""
    columns = [row[0] for row in con.execute(f"describe marts.{mart}").fetchall()]
    where = "true"
    if "source_system" in columns:
        where = "source_system = 'analyzer'"
    elif mart in ("retention_policy_windows", "retention_policy_summary"):
        where = "policy in ('" + "', '".join(ANALYZER_POLICIES) + "')"
    elif "metric" in columns:  # metric_rates_*: every headline rate; the analyzer's is the correction rate
        where = "metric = 'correction_rate'"
    order = ", ".join(f'"{c}"' for c in columns)
    return con.execute(f"select * from marts.{mart} where {where} order by {order}").fetchall()


def snapshot(db: Path, marts: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {mart: analyzer_rows_of(con, mart) for mart in marts}


def build_past(work: Path, db: Path, as_of: str) -> None:
    """The analyzer marts (not the history rollups, which keep the latest build's days) as of a past instant,
    on purpose beside marts of another as-of (var allow_mixed_as_of: macros/as_of/as_of.sql)."""
    done = run_dbt(
        [
            "run",
            "--select",
            "stg_analyzer__events+",
            "--exclude",
            *HISTORY_MARTS,
            "--vars",
            MIXED_AS_OF,
        ],
        warehouse=db,
        work_dir=work,
        as_of=as_of,  # FEEDBACK_AS_OF, not --vars: the four runs share one parse
    )
    assert done.returncode == 0, done.stdout[-4000:]
    with duckdb.connect(str(db), read_only=True) as con:  # the marts compared were built as of `as_of`
        built_at = con.execute("select distinct as_of_at from marts.retention_policy_windows").fetchall()
    assert built_at == [(parse_as_of(as_of).instant,)], (as_of, built_at)


@pytest.fixture(scope="module")
def purged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("purge-keeps-numbers")
    demo, db = work / "demo", work / "warehouse.duckdb"
    subprocess.run(
        [sys.executable, "-m", "cli", "demo-data", str(demo), "--as-of", DEMO_DAY, "--scale", "0.3", "-q"],
        cwd=REPO,
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    cli("ingest", "--config", str(demo / "sources.toml"), "-q", db=db)
    cli("build", "--as-of", AS_OF, db=db)
    marts = analyzer_marts(work, db)
    past_marts = [mart for mart in marts if mart not in HISTORY_MARTS]
    before = {AS_OF: snapshot(db, marts)}
    with duckdb.connect(str(db), read_only=True) as con:
        windows = {
            policy: (cutoff, outside)
            for policy, cutoff, outside in con.execute(
                "select policy, cutoff_at, rows_outside_window from marts.retention_policy_windows"
            ).fetchall()
        }
    dry_run = cli("purge", "--as-of", AS_OF, "--dry-run", db=db).stdout
    for as_of in PAST_AS_OFS:
        build_past(work, db, as_of)
        before[as_of] = snapshot(db, past_marts)

    purge = cli("purge", "--as-of", AS_OF, "--yes", db=db).stdout
    after = {}
    for as_of in PAST_AS_OFS:
        build_past(work, db, as_of)
        after[as_of] = snapshot(db, past_marts)
    cli("build", "--as-of", AS_OF, db=db)
    after[AS_OF] = snapshot(db, marts)
    return {
        "db": db,
        "before": before,
        "after": after,
        "windows": windows,
        "dry_run": dry_run,
        "purge": purge,
    }


def test_the_purge_archived_events_the_reports_need(purged: dict[str, Any]) -> None:
    """The premise: the purge really moved analyzer events out of the raw table."""
    with duckdb.connect(str(purged["db"]), read_only=True) as con:
        (archived,) = con.execute(
            "select sum(rows_archived) from raw.purge_log where policy = 'analyzer_events_archive' and not is_dry_run"
        ).fetchall()[0]
        (oldest_active,) = con.execute('select min("timestamp") from raw.analyzer_events').fetchall()[0]
    assert archived > 1000, purged["purge"]
    assert oldest_active >= dt.datetime(2026, 8, 4), "events older than 90 days before 2026-11-02 left the raw table"


@pytest.mark.parametrize("as_of", [AS_OF, *PAST_AS_OFS])
def test_analyzer_marts_are_equal_row_for_row_after_a_purge(purged: dict[str, Any], as_of: str) -> None:
    before, after = purged["before"][as_of], purged["after"][as_of]
    assert before.keys() == after.keys()
    for mart in before:
        assert before[mart], f"{mart} as of {as_of} has no analyzer rows: the comparison would prove nothing"
        assert_same_rows(before[mart], after[mart], f"{mart} as of {as_of}", tolerance=FLOAT_TOLERANCE)


def test_purge_and_retention_views_cut_at_the_same_utc_day(purged: dict[str, Any]) -> None:
    """-05:00 just before midnight is the next day in UTC, for the purge and for the views alike."""
    with duckdb.connect(str(purged["db"]), read_only=True) as con:
        logged = dict(
            con.execute(
                "select policy, cutoff from raw.purge_log where not is_dry_run and cutoff is not null"
            ).fetchall()
        )
        (as_of_at,) = con.execute("select distinct as_of_at from marts.retention_policy_windows").fetchall()[0]
    assert as_of_at == AS_OF_UTC
    assert logged["analyzer_events_archive"] == dt.datetime(2026, 8, 4), "2026-11-02 minus 90 days"
    for policy, (cutoff_at, _) in purged["windows"].items():
        if policy in logged:
            assert logged[policy] == cutoff_at, policy


def test_the_purge_says_the_stored_marts_show_it_at_the_next_build(purged: dict[str, Any]) -> None:
    """The stored marts hold what the last build computed (docs/operations.md, "Retention purge"): a purge that
    removed rows says so last; its dry run does not."""
    hint = "the marts show this at the next build: run `feedback-analytics build` (the nightly does)"
    assert purged["purge"].splitlines()[-1] == hint, purged["purge"]
    assert hint not in purged["dry_run"]


def test_dry_run_removes_what_the_windows_call_outside(purged: dict[str, Any]) -> None:
    """operations/retention.py (Python, whole days) and retention_policy_windows (dbt macros) agree per policy."""
    said = {}
    for line in purged["dry_run"].splitlines():
        match = re.match(
            r"(\S+)\s.*would move ([\d,]+) to the archive, would delete ([\d,]+) from the table and ([\d,]+)", line
        )
        if match:
            said[match[1]] = sum(int(match[group].replace(",", "")) for group in (2, 3, 4))
    assert set(said) == set(purged["windows"]), purged["dry_run"]
    assert sum(said.values()) > 0, "nothing to remove: the comparison would prove nothing"
    for policy, (_, outside) in purged["windows"].items():
        assert said[policy] == outside, f"{policy}: dry run {said[policy]}, window {outside}"


RAW_ROWS_LEFT = {
    # view: (count of the rows left in raw, dated at or before as_of)
    "retained_session_feedback": "select count(*) from raw.session_feedback where recorded_at <= $as_of",
    "retained_turn_reactions": "select count(*) from raw.turn_reactions where ts <= $as_of",
    "retained_workspace_feedback": "select count(*) from raw.workspace_feedback where created_at <= $as_of",
    "retained_workspace_sessions": "select count(*) from raw.workspace_sessions where created_at <= $as_of",
    "retained_eval_runs": "select count(*) from raw.workspace_eval_runs where started_at <= $as_of",
}


def test_retained_views_hold_exactly_the_rows_the_purge_left(purged: dict[str, Any]) -> None:
    db = purged["db"]
    with duckdb.connect(str(db), read_only=True) as con:
        archives = [
            uri
            for (uri,) in con.execute("select archive_uri from raw.purge_log where archive_uri is not null").fetchall()
        ]
        assert archives and all(Path(uri).exists() for uri in archives)
        files = "[" + ", ".join(f"'{uri}'" for uri in archives) + "]"
        (analyzer_left,) = con.execute(
            f"""
            select count(distinct event_id) from (
                select event_id, "timestamp" from raw.analyzer_events
                union all
                select event_id, "timestamp" from read_parquet({files})
            ) where "timestamp" <= $as_of
            """,
            {"as_of": AS_OF_UTC},
        ).fetchall()[0]
        expected = {"retained_analyzer_events": analyzer_left}
        for view, sql in RAW_ROWS_LEFT.items():
            (expected[view],) = con.execute(sql, {"as_of": AS_OF_UTC}).fetchall()[0]
        shown = {view: con.execute(f"select count(*) from marts.{view}").fetchall()[0][0] for view in expected}
    assert all(count > 0 for count in expected.values()), expected
    assert shown == expected
