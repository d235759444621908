"""The incremental publish (operations/serving.py): after a new day, a purge and a change no log names, the serving
file brought up to date by difference is the one a full publish writes, relation by relation, row for row; and a
full publish whenever an incremental one cannot be trusted.

On a copy of the dashboard tests' demo warehouse (built once per session by the real command line); one more
day of demo data ingested and built once for the module.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from operations.serving import BY_KEY, SORTED_BY, TEMPORARY_MARK, _difference, publish
from operations.serving_days import BY_DAY, DIGESTS, MAX_DAY_RANGES, changed_days, digest
from tests.support.dashboard import ROOT, DemoWarehouse, copy_warehouse, demo_or_fail, marts_relations
from warehouse.location import serving_path

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoWarehouse:
    return demo_or_fail(tmp_path_factory.getbasetemp())


def cli(demo: DemoWarehouse, db: Path, work: Path, *args: str) -> str:
    env = {**demo.env(db), "DBT_TARGET_PATH": str(work / "target"), "DBT_LOG_PATH": str(work / "logs")}
    done = subprocess.run(
        [sys.executable, "-m", "cli", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


@dataclass(frozen=True)
class Nightly:
    db: Path
    before: Path  # the serving file before the new day
    build_output: str
    purge_output: str
    corrected: str  # the workspace session corrected in place upstream


@pytest.fixture(scope="module")
def nightly(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Nightly:
    """One more day ingested, a row changed under a view no log names, purged, and built (the hook publishes
    incrementally)."""
    work = tmp_path_factory.mktemp("incremental")
    db = copy_warehouse(demo.db, work / "w.duckdb")
    publish(db)  # a serving file of this version to start from
    before = work / "before.duckdb"
    shutil.copyfile(serving_path(db), before)
    day = work / "day"
    cli(demo, db, work, "demo-data", str(day), "--days", "1", "--seed", "1021", "--as-of", "2026-11-02", "-q")
    cli(demo, db, work, "ingest", "--config", str(day / "sources.toml"), "--db", str(db), "-q")
    with duckdb.connect(str(before), read_only=True) as con:
        (corrected,) = con.execute("select min(session_id) from marts.retained_workspace_sessions").fetchone()
    with duckdb.connect(str(db)) as con:  # an upstream correction in place: no load, purge or erasure names it
        con.execute("update raw.workspace_sessions set status = 'corrected in place' where id = ?", [corrected])
    # purge, then build, as the nightly does: the build computes the stored marts without the purged rows
    # (a standalone purge shows in them at the next build: docs/operations.md, "Retention purge")
    purged = cli(demo, db, work, "purge", "--db", str(db), "--as-of", "2026-11-02", "--yes")
    built = cli(demo, db, work, "build", "--db", str(db), "--as-of", "2026-11-02")
    return Nightly(db, before, built, purged, corrected)


def assert_same_serving_files(one: Path, other: Path) -> None:
    """The same relations (kind, columns, types, rows as multisets, the views' SQL) in both files."""
    with duckdb.connect() as con:
        con.execute(f"attach '{one}' as a (read_only)")
        con.execute(f"attach '{other}' as b (read_only)")
        kinds = marts_relations(con, "a")
        assert kinds == marts_relations(con, "b") and len(kinds) > 40
        views = "select view_name, sql from duckdb_views() where database_name = ? and schema_name = 'marts' order by 1"
        assert con.execute(views, ["a"]).fetchall() == con.execute(views, ["b"]).fetchall()
        columns = "select column_name, data_type from information_schema.columns where table_catalog = ? and "
        columns += "table_schema = 'marts' and table_name = ? order by ordinal_position"
        for name in kinds:
            assert con.execute(columns, ["a", name]).fetchall() == con.execute(columns, ["b", name]).fetchall(), name
            for left, right in (("a", "b"), ("b", "a")):
                (missing,) = con.execute(
                    f'select count(*) from (from {left}.marts."{name}" except all from {right}.marts."{name}")'
                ).fetchall()[0]
                assert missing == 0, f"{name}: {missing} row(s) of {left} not in {right}"


def changed_rows(before: Path, after: Path, name: str) -> tuple[int, int]:
    """(rows of `after` not in `before`, rows of `before` not in `after`) of one relation."""
    with duckdb.connect() as con:
        con.execute(f"attach '{before}' as a (read_only)")
        con.execute(f"attach '{after}' as b (read_only)")
        counts = [
            con.execute(f"select count(*) from (from {x}.marts.{name} except all from {y}.marts.{name})").fetchone()[0]
            for x, y in (("b", "a"), ("a", "b"))
        ]
    return counts[0], counts[1]


def test_the_build_after_a_new_day_publishes_incrementally(nightly: Nightly) -> None:
    """The hook's line says it: incremental, rows written and removed."""
    assert "incrementally: " in nightly.build_output and "relations recomputed" in nightly.build_output, (
        nightly.build_output[-2000:]
    )


def test_an_incremental_publish_equals_a_full_one_row_for_row(nightly: Nightly, tmp_path: Path) -> None:
    """The build's incremental publish after the new day, the change no log names and the purge, compared with a
    full publish of the same warehouse into another file; every relation brought up to date by difference changed
    (new rows, and rows gone or rewritten) between the two publishes, so each one's difference was applied. A
    second publish with nothing new removes no row and leaves the same relations."""
    reference = copy_warehouse(nightly.db, tmp_path / "reference.duckdb")
    serving_path(reference).unlink()
    full = publish(reference, full=True)
    assert (full.mode, full.reason) == ("full", "--full")
    assert_same_serving_files(serving_path(nightly.db), serving_path(reference))
    for name in BY_KEY:  # the new day's rows
        added, gone = changed_rows(nightly.before, serving_path(nightly.db), name)
        assert added > 0, name
        if name in ("feedback_signals", "stored_analyzer_events", "retained_session_feedback"):
            assert gone > 0, name  # rows purged, or whose retention flags moved with the report instant
    with duckdb.connect(str(serving_path(nightly.db)), read_only=True) as con:  # the change no log names
        status = "select status from marts.retained_workspace_sessions where session_id = ?"
        assert con.execute(status, [nightly.corrected]).fetchall() == [("corrected in place",)]
    again = publish(nightly.db)
    assert again.mode == "incremental" and again.reason == "" and again.removed == 0, again
    assert again.recomputed > 0, again  # the relations not brought up to date by difference are copied whole
    assert_same_serving_files(serving_path(nightly.db), serving_path(reference))


def test_the_difference_compares_the_rows_of_the_changed_days_only(nightly: Nightly) -> None:
    """Per BY_KEY relation, the days whose row count or digest differ between the warehouse and the serving file
    before the new day: the new day and the days the purge or the moved retention flags touched, a few of
    history's; the day of the session corrected in place (no log names it) among them."""
    assert set(BY_DAY) == set(BY_KEY)
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{nightly.db}' as built (read_only)")
        con.execute(f"attach '{nightly.before}' as served (read_only)")
        for name in BY_KEY:
            changed = changed_days(con, name, f"built.marts.{name}", f"served.marts.{name}")
            dated = (
                f"select count(distinct cast({BY_DAY[name]} as date)) + 1 from (select {BY_DAY[name]} from "
                f"built.marts.{name} union all select {BY_DAY[name]} from served.marts.{name})"
            )  # the days of either side, and the one of the undated rows
            days = con.execute(dated).fetchone()
            assert 0 < changed <= days[0], (name, changed, days)
            if name in ("feedback_signals", "stored_analyzer_events", "stored_turn_reactions"):
                assert changed < days[0] / 4, (name, changed, days)  # a few days, not history
            if name == "retained_workspace_sessions":
                (day,) = con.execute(
                    "select cast(created_at as date) from built.marts.retained_workspace_sessions where session_id = ?",
                    [nightly.corrected],
                ).fetchone()
                assert con.execute("select count(*) from temp.publish_days where day = ?", [day]).fetchone() == (1,)


@pytest.mark.parametrize("flipped", [1, 2, 24])
def test_rows_of_one_day_changed_alike_are_published(flipped: int) -> None:
    """DuckDB's hash of a row is XOR-linear in its last column: an even number of rows of one day whose last
    column changed alike (the retention flag of a day leaving the window, without a purge) would cancel out in
    a plain XOR of row hashes. The day's digest still changes, and the difference publishes every changed row."""
    name, key = "stored_analyzer_events", BY_KEY["stored_analyzer_events"]
    rows = (
        f"select i as {key}, timestamp '2026-01-01' + to_days(cast(i % 2 as integer)) as {BY_DAY[name]}, "
        "true as is_retained from range(48) as r(i)"
    )
    with duckdb.connect() as con:
        con.execute("attach ':memory:' as warehouse")
        for schema in ("warehouse.marts", "marts"):
            con.execute(f"create schema {schema}")
            con.execute(f"create table {schema}.{name} as {rows}")
        con.execute(
            f"update warehouse.marts.{name} set is_retained = false where {key} in "
            f"(select {key} from warehouse.marts.{name} where {key} % 2 = 0 order by {key} limit {flipped})"
        )
        assert changed_days(con, name, f"warehouse.marts.{name}", f"marts.{name}") == 1
        assert _difference(con, name, key, "warehouse") == (flipped, flipped)
        differ = f"select count(*) from (from warehouse.marts.{name} except all from marts.{name})"
        assert con.execute(differ).fetchone() == (0,)


def stored_and_recomputed_digests(con: duckdb.DuckDBPyConnection, catalog: str, name: str) -> tuple[list, list]:
    """Relation `name`'s rows of DIGESTS in `catalog`, and its digests computed again from its rows, both sorted."""
    stored = f"select day, row_count, digest from {catalog}.{DIGESTS} where relation = ? order by day"
    again = f"select * from ({digest(name, f'{catalog}.marts.{name}', 'row_again')}) order by day"
    return con.execute(stored, [name]).fetchall(), con.execute(again).fetchall()


def test_the_digests_a_publish_stores_are_those_of_its_rows(nightly: Nightly, tmp_path: Path) -> None:
    """The next incremental publish reads the served side's day digests from DIGESTS instead of computing them
    from every published row: after the hook's incremental publish and after a full one, they are the digests of
    the rows the file holds, for every BY_KEY relation."""
    reference = copy_warehouse(nightly.db, tmp_path / "digests.duckdb")
    serving_path(reference).unlink()
    assert publish(reference, full=True).mode == "full"
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{serving_path(nightly.db)}' as incremental (read_only)")
        con.execute(f"attach '{serving_path(reference)}' as full_one (read_only)")
        for catalog in ("incremental", "full_one"):
            for name in BY_KEY:
                stored, again = stored_and_recomputed_digests(con, catalog, name)
                assert stored == again and (len(stored) > 1 or name == "retained_eval_runs"), (catalog, name)


@pytest.mark.parametrize("days", [3, MAX_DAY_RANGES + 6])
def test_rows_of_changed_days_far_apart_and_undated_are_published(days: int) -> None:
    """The rows of the changed days are found by ranges of their timestamps (so DuckDB skips the row groups of
    other days), by the day's membership beyond MAX_DAY_RANGES runs of days: either way every changed row is
    published, the undated rows' changes among them, and the stored digests are those of the new rows."""
    name, key = "stored_analyzer_events", BY_KEY["stored_analyzer_events"]
    day = BY_DAY[name]
    rows = (
        f"select i as {key}, case when i % 500 = 7 then null else timestamp '2026-01-01' + to_days(cast(i % 250 as "
        f"integer)) + to_seconds(cast(i as bigint)) end as {day}, true as is_retained from range(5000) as r(i)"
    )
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute("attach ':memory:' as warehouse")
        for schema in ("warehouse.marts", "marts"):
            con.execute(f"create schema {schema}")
            con.execute(f"create table {schema}.{name} as {rows}")
        con.execute("create schema serving")
        con.execute(
            f"create table {DIGESTS} as select '{name}' as relation, * from ({digest(name, f'marts.{name}', 'r')})"
        )
        changed_days_of = f"i % 250 in (select unnest(range(0, {2 * days}, 2)))"  # every other day: runs of one day
        con.execute(
            f"update warehouse.marts.{name} set is_retained = false where {key} in (select i from range(5000) as r(i) "
            f"where {changed_days_of} or i % 500 = 7)"
        )
        con.execute(f"delete from warehouse.marts.{name} where {key} = 1")  # gone
        con.execute(f"insert into warehouse.marts.{name} values (9999, timestamp '2026-01-03 12:00:00', true)")
        expected = con.execute(
            f"select count(*) from (from warehouse.marts.{name} except all from marts.{name})"
        ).fetchone()[0]
        assert _difference(con, name, key, "warehouse") == (expected, expected)
        for left, right in ((f"warehouse.marts.{name}", f"marts.{name}"), (f"marts.{name}", f"warehouse.marts.{name}")):
            assert con.execute(f"select count(*) from (from {left} except all from {right})").fetchone() == (0,)
        stored, again = stored_and_recomputed_digests(con, "memory", name)
        assert stored == again


@pytest.mark.parametrize("odd", ["infinity", "-infinity", "9999-12-31 12:00:00", "0001-01-01 08:00:00"])
def test_rows_of_odd_days_are_published(odd: str) -> None:
    """A timestamp that is no plain calendar day of the ranges (infinite, the last day DuckDB's dates reach: the
    raw readers' `try_cast` lets them through) or on the day the undated rows share: its changed row is published
    like any other (by the day's membership where a range cannot say it), with no error."""
    name, key = "stored_analyzer_events", BY_KEY["stored_analyzer_events"]
    day = BY_DAY[name]
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute("attach ':memory:' as warehouse")
        for schema in ("warehouse.marts", "marts"):
            con.execute(f"create schema {schema}")
            con.execute(
                f"create table {schema}.{name} as select i as {key}, case when i = 0 then timestamp '{odd}' when "
                f"i = 1 then null else timestamp '2026-01-01' end as {day}, true as is_retained from range(3) r(i)"
            )
        con.execute("create schema serving")
        con.execute(
            f"create table {DIGESTS} as select '{name}' as relation, * from ({digest(name, f'marts.{name}', 'r')})"
        )
        con.execute(f"update warehouse.marts.{name} set is_retained = false where {key} in (0, 1)")
        assert _difference(con, name, key, "warehouse") == (2, 2)
        assert con.execute(f"select count(*) from marts.{name} where not is_retained").fetchone() == (2,)


def out_of_order(serving: Path) -> dict[str, tuple[int, int]]:
    """Per SORTED_BY relation: (rows stored before a row that sorts before them, rows)."""
    found = {}
    with duckdb.connect(str(serving), read_only=True) as con:
        for name, columns in SORTED_BY.items():
            key = "(" + ", ".join(columns) + ")"
            found[name] = con.execute(
                f"select count(*) filter (where previous > this), count(*) from (select {key} as this, "
                f"lag({key}) over (order by rowid) as previous from marts.{name})"
            ).fetchone()
    return found


def test_the_drill_down_relations_are_stored_in_conversation_order(nightly: Nightly, tmp_path: Path) -> None:
    """A full publish stores the relations the conversation drill-down looks up in conversation order (so DuckDB
    skips the row groups that cannot hold the conversation); an incremental one appends its changed rows after
    them, so only its appended rows can be out of order."""
    reference = copy_warehouse(nightly.db, tmp_path / "sorted.duckdb")
    serving_path(reference).unlink()
    publish(reference, full=True)
    full = out_of_order(serving_path(reference))
    assert all(rows > 1000 and wrong == 0 for wrong, rows in full.values()), full
    incremental = publish(nightly.db)
    assert incremental.mode == "incremental"
    for name, (wrong, rows) in out_of_order(serving_path(nightly.db)).items():
        added, _gone = changed_rows(nightly.before, serving_path(nightly.db), name)
        assert wrong <= added < rows, (name, wrong, added, rows)


def test_every_relation_by_difference_is_a_mart_with_that_primary_key() -> None:
    """BY_KEY names marts models, each with the column its `primary_key` test is on."""
    import yaml

    keys: dict[str, str] = {}
    for path in (ROOT / "models" / "marts").rglob("_*.yml"):
        for model in yaml.safe_load(path.read_text()).get("models", []):
            for test in model.get("data_tests") or []:
                if isinstance(test, dict) and "primary_key" in test:
                    arguments = test["primary_key"]["arguments"]
                    columns = arguments.get("columns") or [arguments.get("column_name")]
                    keys[model["name"]] = columns[0] if len(columns) == 1 else str(columns)
            for column in model.get("columns", []):
                if "primary_key" in (column.get("data_tests") or column.get("tests") or []):
                    keys[model["name"]] = column["name"]
    assert {name: keys[name] for name in BY_KEY} == BY_KEY


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("missing", "no serving file yet"),
        ("engine", "the serving file was published from spark"),
        ("older", "the serving file was published by an older version"),
        ("erasure", "an erasure since the last publish"),
        ("columns", "the columns of build_info changed"),
    ],
)
def test_a_full_publish_when_an_incremental_one_cannot_be_trusted(
    demo: DemoWarehouse, tmp_path: Path, change: str, reason: str
) -> None:
    """No serving file; one from another engine or an older version; an erasure since the last publish (its
    freed blocks would keep the erased bytes); a relation whose columns changed: the publish is a full one,
    and says why."""
    db = copy_warehouse(demo.db, tmp_path / "w.duckdb")
    publish(db)
    served = serving_path(db)
    if change == "missing":
        served.unlink()
    elif change in ("engine", "older"):
        with duckdb.connect(str(served)) as con:
            if change == "engine":
                con.execute("update serving.publish_info set engine = 'spark'")
            else:
                con.execute("alter table serving.publish_info drop column published_by")
    else:
        with duckdb.connect(str(db)) as con:
            if change == "erasure":
                con.execute("insert into raw.erasure_log values ('e1', 'ab', now()::timestamp, 1, 0, '{}', false)")
            else:
                con.execute("alter table marts.build_info add column extra integer")
    done = publish(db)
    assert (done.mode, done.reason) == ("full", reason)


def test_publish_full_and_a_full_refresh_build_publish_in_full(demo: DemoWarehouse, tmp_path: Path) -> None:
    """`publish --full` writes from nothing, `publish` alone does not; a `--full-refresh` build's hook publishes
    in full; each says so."""
    db = copy_warehouse(demo.db, tmp_path / "w.duckdb")
    publish(db)
    assert "s incrementally: " in cli(demo, db, tmp_path, "publish", "--db", str(db))
    assert "s in full: --full (the file" in cli(demo, db, tmp_path, "publish", "--db", str(db), "--full")
    out = cli(demo, db, tmp_path, "build", "--db", str(db), "--as-of", "2026-11-01", "--", "--select", "build_info")
    assert "incrementally: " in out, out[-2000:]
    out = cli(
        demo,
        db,
        tmp_path,
        "build",
        "--db",
        str(db),
        "--as-of",
        "2026-11-01",
        "--",
        "--full-refresh",
        "--select",
        "build_info",
    )
    assert "in full: --full-refresh" in out, out[-2000:]


def test_a_publish_killed_midway_through_its_difference_leaves_the_old_serving_file(
    demo: DemoWarehouse, tmp_path: Path
) -> None:
    """Killed while it brings its copy up to date (after the first relation by difference): the serving file
    is the old one, byte for byte, and the next publish removes the dead one's staging folder."""
    db = copy_warehouse(demo.db, tmp_path / "killed.duckdb")
    publish(db)
    served = serving_path(db)
    old_bytes = served.read_bytes()
    code = f"from pathlib import Path; from operations.serving import publish; publish(Path({str(db)!r}))"
    publisher = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "FEEDBACK_PAUSE_AT": "publish-incremental-relation"},
    )
    try:
        _, status = os.waitpid(publisher.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), "the publish ended before its pause point"
        assert len(list(tmp_path.glob(f"{served.name}{TEMPORARY_MARK}*"))) == 1
    finally:
        os.kill(publisher.pid, signal.SIGKILL)
        publisher.wait()
    assert served.read_bytes() == old_bytes, "the killed publish touched the serving file"
    assert publish(db).mode == "incremental" and not list(tmp_path.glob(f"{served.name}{TEMPORARY_MARK}*"))
