"""The large models' data tests read the new loads in a nightly, every row with --full-tests (issue 30).

A test that says `where: "new_loads_only(COLUMN[, KEY])"` (macros/test_scope/new_loads_only.sql) reads the rows
stored since the last successful build (warehouse/build_record.py), and for a key test every row sharing a key
with one of them: a new row that repeats an old key still fails. A bad row of an old load waits for the full
tests (`nightly --full-tests`, `build --full-tests`, `--full-refresh`, a plain `dbt build`). Real processes: the
demo warehouse, the command line, dbt's run_results.json and compiled SQL. A row that breaks a key is written
into the incremental table itself: every load is deduplicated before it reaches it, so only a bug could.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from operations.build import dbt_command
from operations.data_test_scope import new_loads_since, since_text
from tests.support.dashboard import AS_OF, copy_warehouse, demo_or_fail
from tests.support.operations import ok, ops_env, run_ops
from warehouse.build_record import last_build, record_build, record_path

pytestmark = pytest.mark.slow

KEY_TEST = "primary_key_int_reactions__sequenced_reaction_rn"
ROW_TEST = "not_null_int_reactions__sequenced_turn_id"
FILTER = "held_at > cast("


def warehouse_copy(demo_db: Path, folder: Path) -> Path:
    """The demo warehouse and its build record under `folder`."""
    folder.mkdir()
    db = copy_warehouse(demo_db, folder / "w.duckdb")
    shutil.copyfile(record_path(demo_db), record_path(db))
    return db


def repeat_a_reaction(db: Path, *, held_at: str) -> str:
    """A second row of the latest held reaction (the same reaction_rn), stored at `held_at`; returns its key."""
    with duckdb.connect(str(db)) as con:
        key = con.execute(
            "select reaction_rn from intermediate.int_reactions__sequenced "
            "order by reacted_at desc, reaction_rn limit 1"
        ).fetchone()[0]
        con.execute(
            f"""
            insert into intermediate.int_reactions__sequenced
            select * replace ({held_at} as held_at)
            from intermediate.int_reactions__sequenced where reaction_rn = ?
            """,
            [key],
        )
    return key


def dbt_test_result(work: Path, name: str) -> tuple[str, str]:
    """The status of the data test `name` in the last dbt run under `work`, and the SQL it ran."""
    target = work / "dbt-target"
    results = json.loads((target / "run_results.json").read_text())["results"]
    status = next(node["status"] for node in results if node["unique_id"].split(".")[2] == name)
    sql = next((target / "run").rglob(f"{name}.sql")).read_text()
    return status, sql


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_or_fail(tmp_path_factory.getbasetemp()).db


def test_a_new_row_repeating_an_old_key_fails_the_nightly(demo_db: Path, tmp_path: Path) -> None:
    db = warehouse_copy(demo_db, tmp_path / "new")
    before = last_build(db)
    repeat_a_reaction(db, held_at="now()::timestamp")  # stored after the last build: a new load's row

    result = run_ops("nightly", "--as-of", AS_OF, "--db", db, env=ops_env(tmp_path), timeout=900)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "build" in result.stderr and "Traceback" not in result.stdout + result.stderr
    status, sql = dbt_test_result(tmp_path, KEY_TEST)
    assert status == "fail"
    assert before is not None and before.finished_at is not None
    assert f"held_at > cast('{since_text(before.finished_at)}'" in sql  # the loads since the last build
    assert "exists" in sql  # and the rows sharing a key with them
    assert last_build(db) == before  # a failed build records nothing: the next nightly tests these loads again


def test_a_bad_row_of_an_old_load_waits_for_the_full_tests(demo_db: Path, tmp_path: Path) -> None:
    db = warehouse_copy(demo_db, tmp_path / "old")
    repeat_a_reaction(db, held_at="held_at")  # stored with the rows the last successful build tested
    env = ops_env(tmp_path)

    run_ops("build", "--as-of", AS_OF, "--db", db, env=env, timeout=900)  # other (full) tests fail: not asserted
    assert dbt_test_result(tmp_path, KEY_TEST)[0] == "pass"  # the new loads hold no such row
    status, sql = dbt_test_result(tmp_path, ROW_TEST)
    assert status == "pass" and FILTER in sql

    result = run_ops("nightly", "--full-tests", "--as-of", AS_OF, "--db", db, env=env, timeout=900)

    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr
    status, sql = dbt_test_result(tmp_path, KEY_TEST)
    assert status == "fail"
    assert FILTER not in sql and "exists" not in sql
    assert "data tests on every row" in db.with_name(db.name + ".nightly.log").read_text()


def test_which_instant_the_build_passes(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert new_loads_since(db) is None  # no build yet: every row
    record = record_build(db, "build-1", None)
    assert record.finished_at is not None
    assert new_loads_since(db) == record.finished_at
    assert new_loads_since(db, full_tests=True) is None
    assert new_loads_since(db, ["--full-refresh"]) is None
    assert since_text(dt.datetime(2026, 11, 2, 3, 4, 5)) == "2026-11-02 03:04:05.000000"
    assert since_text(None) == ""


def test_dbt_reads_the_instant_when_the_test_runs(demo_db: Path, tmp_path: Path) -> None:
    """With FEEDBACK_TESTS_SINCE the new loads; without it (a plain `dbt test`) and on --full-refresh every row;
    an instant that is no timestamp stops the test with one line."""
    db = warehouse_copy(demo_db, tmp_path / "plain")
    env = {**ops_env(tmp_path), "FEEDBACK_DB": str(db), "FEEDBACK_AS_OF": "2026-11-01 23:59:59.999999"}

    def dbt(verb: str, *args: str, since: str = "") -> subprocess.CompletedProcess[str]:
        command = dbt_command(verb, "--select", KEY_TEST, *args)
        return subprocess.run(
            command, env={**env, "FEEDBACK_TESTS_SINCE": since}, capture_output=True, text=True, check=False
        )

    ok(dbt("test", since="2026-11-01 12:00:00"))
    assert "held_at > cast('2026-11-01 12:00:00' as timestamp)" in dbt_test_result(tmp_path, KEY_TEST)[1]
    ok(dbt("test"))
    assert FILTER not in dbt_test_result(tmp_path, KEY_TEST)[1]
    ok(dbt("build", "--full-refresh", since="2026-11-01 12:00:00"))
    assert FILTER not in dbt_test_result(tmp_path, KEY_TEST)[1]

    wrong = dbt("test", since="yesterday'; drop table x; --")
    assert wrong.returncode != 0 and "expected a UTC timestamp" in wrong.stdout
