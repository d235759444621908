"""The Parquet lake Spark reads (operations/lake.py): every raw table as Parquet partitioned by day, timestamps
in microseconds adjusted to UTC, written incrementally (only the day partitions that changed), and a crash
mid-export repaired by the next one. Real files and DuckDB throughout; Spark reads the lake in
tests/operations/test_spark_build.py."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest

from operations import lake as lake_module
from operations.lake import ARCHIVE_TABLE, PARTITION_COLUMN, SCHEMA_DAY, export_lake, lake_tables
from tests.support.ingest import analyzer_event, eval_run, ingest_ok, workspace_session, write_jsonl
from warehouse.connection import connect
from warehouse.raw_tables import RAW_TABLES


def lake_rows(lake: Path, table: str) -> list[tuple]:
    """The rows Spark would read: every Parquet file of the table's folder, the day from the folder names."""
    files = sorted(str(path) for path in (lake / table).rglob("*.parquet"))
    return duckdb.sql(
        f"select * exclude ({PARTITION_COLUMN}) from read_parquet({files}, hive_partitioning = true)"
    ).fetchall()


def data_files(lake: Path, table: str) -> dict[str, set[str]]:
    """Per day partition (the empty column-carrying one left out), the names of its data files."""
    found: dict[str, set[str]] = {}
    for path in (lake / table).glob(f"{PARTITION_COLUMN}=*/*.parquet"):
        day = path.parent.name.split("=", 1)[1]
        if day != SCHEMA_DAY:
            found.setdefault(day, set()).add(path.name)
    return found


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("lake-sources")
    db = tmp_path / "feedback.duckdb"
    events = [analyzer_event(n) for n in range(30)]
    ingest_ok("analyzer", write_jsonl(tmp_path / "feedback.jsonl", events), "--db", db)
    write_jsonl(tmp_path / "workspace" / "sessions.jsonl", [workspace_session(0), workspace_session(1)])
    write_jsonl(tmp_path / "workspace" / "eval_runs.jsonl", [eval_run(1)])
    ingest_ok("workspace", tmp_path / "workspace", "--db", db)
    return db


@pytest.fixture
def warehouse(loaded: Path, tmp_path: Path) -> Path:
    """A copy of the loaded warehouse for one test."""
    return Path(shutil.copy(loaded, tmp_path / "feedback.duckdb"))


def move_loads_back(db: Path, table: str, days: int) -> None:
    """Pretend the table's rows were loaded `days` earlier (a lake grows one load day at a time)."""
    with duckdb.connect(str(db)) as con:
        con.execute(f"update raw.{table} set _loaded_at = _loaded_at - interval {days} day")


def test_every_raw_table_lands_with_its_rows_partitioned_by_day(warehouse: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with duckdb.connect(str(warehouse)) as con:
        export = export_lake(con, lake)
        tables = {table.name for table in lake_tables(con)}
        for table in tables - {ARCHIVE_TABLE}:
            expected = con.execute(f"select count(*) from raw.{table}").fetchall()[0][0]
            assert len(lake_rows(lake, table)) == expected, table
    assert tables == set(RAW_TABLES) | {ARCHIVE_TABLE}
    assert export.rows_written["analyzer_events"] == 30
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert set(data_files(lake, "analyzer_events")) == {today}
    # an empty table is still a folder with its columns, so Spark can register it
    assert lake_rows(lake, "erasure_log") == []
    columns = duckdb.sql(f"describe select * from read_parquet('{lake}/erasure_log/*/*.parquet')").fetchall()
    assert [row[0] for row in columns][:2] == ["erasure_id", "user_id_sha256"]


def test_timestamps_are_microseconds_adjusted_to_utc_and_json_is_text(warehouse: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with duckdb.connect(str(warehouse)) as con:
        export_lake(con, lake)
        source = con.execute("select min(timestamp), max(_loaded_at) from raw.analyzer_events").fetchall()[0]
    file = next((lake / "analyzer_events").glob(f"{PARTITION_COLUMN}=2*/*.parquet"))
    schema = {
        row[0]: row[1:]
        for row in duckdb.sql(
            f"select name, logical_type, type from parquet_schema('{file}') where name in ('timestamp', '_loaded_at')"
        ).fetchall()
    }
    for name in ("timestamp", "_loaded_at"):
        logical, physical = schema[name]
        assert physical == "INT64" and "MICROS" in logical and "isAdjustedToUTC=1" in logical.replace(" ", ""), name
    with duckdb.connect() as reader:
        reader.execute("set TimeZone = 'UTC'")
        read = reader.execute(
            f"select min(timestamp)::timestamp, max(_loaded_at)::timestamp from read_parquet('{file}')"
        ).fetchall()[0]
    assert read == source  # to the microsecond
    json_file = next((lake / "workspace_sessions").glob(f"{PARTITION_COLUMN}=2*/*.parquet"))
    types = dict(duckdb.sql(f"select name, type from parquet_schema('{json_file}')").fetchall())
    assert types["metadata"] == "BYTE_ARRAY"


def test_a_second_export_writes_only_what_changed(warehouse: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    move_loads_back(warehouse, "analyzer_events", 3)
    with duckdb.connect(str(warehouse)) as con:
        first = export_lake(con, lake)
        old_day = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=3)).isoformat()
        old_files = data_files(lake, "analyzer_events")
        assert set(old_files) == {old_day} and first.partitions_written["analyzer_events"] == 1

        nothing = export_lake(con, lake)
        assert sum(nothing.partitions_written.values()) == 0 and sum(nothing.rows_written.values()) == 0
        assert data_files(lake, "analyzer_events") == old_files

    # a new load lands in today's partition; yesterday's files are not touched
    new_events = [analyzer_event(n) for n in range(100, 105)]
    ingest_ok("analyzer", write_jsonl(tmp_path / "more.jsonl", new_events), "--db", warehouse)
    with duckdb.connect(str(warehouse)) as con:
        second = export_lake(con, lake)
    after = data_files(lake, "analyzer_events")
    assert after[old_day] == old_files[old_day]
    assert second.partitions_written["analyzer_events"] == 1 and second.rows_written["analyzer_events"] == 5
    assert len(lake_rows(lake, "analyzer_events")) == 35

    # rows deleted from an old day (as `forget` or `purge` does) rewrite that day only
    with duckdb.connect(str(warehouse)) as con:
        con.execute("delete from raw.analyzer_events where session_id in ('session-1', 'session-2')")
        third = export_lake(con, lake)
        assert third.partitions_written["analyzer_events"] == 1 and third.rows_written["analyzer_events"] == 28
        ids = {row[0] for row in con.execute("select event_id from raw.analyzer_events").fetchall()}
    assert {row[0] for row in lake_rows(lake, "analyzer_events")} == ids
    assert data_files(lake, "analyzer_events")[old_day] != old_files[old_day]


def test_a_day_that_vanished_is_deleted(warehouse: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    move_loads_back(warehouse, "workspace_eval_runs", 10)
    with duckdb.connect(str(warehouse)) as con:
        export_lake(con, lake)
        assert len(data_files(lake, "workspace_eval_runs")) == 1
        con.execute("delete from raw.workspace_eval_runs")
        export = export_lake(con, lake)
    assert export.partitions_deleted["workspace_eval_runs"] == 1
    assert data_files(lake, "workspace_eval_runs") == {} and lake_rows(lake, "workspace_eval_runs") == []


def test_an_export_that_crashed_is_completed_by_the_next(
    warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    with duckdb.connect(str(warehouse)) as con:
        export_lake(con, lake)
        con.execute("delete from raw.analyzer_events where session_id = 'session-3'")
        real_copy = lake_module._write_schema_partition

        def crash(con: duckdb.DuckDBPyConnection, lake: Path, table: lake_module.LakeTable) -> None:
            if table.name == "analyzer_events":
                # the day's folder was removed before the copy: a crash here leaves it missing or half written
                raise KeyboardInterrupt("killed mid-export")
            real_copy(con, lake, table)

        monkeypatch.setattr(lake_module, "_write_schema_partition", crash)
        with pytest.raises(KeyboardInterrupt):
            export_lake(con, lake)
        monkeypatch.setattr(lake_module, "_write_schema_partition", real_copy)
        repaired = export_lake(con, lake)
        ids = {row[0] for row in con.execute("select event_id from raw.analyzer_events").fetchall()}
    assert repaired.partitions_written["analyzer_events"] == 1
    assert {row[0] for row in lake_rows(lake, "analyzer_events")} == ids and len(ids) == 29


def test_an_undated_analyzer_event_goes_by_its_load_day(tmp_path: Path) -> None:
    """An analyzer event whose timestamp the analyzer left empty (NULL in the table) is partitioned like every
    data row, by the day it was loaded, and reaches the lake with its NULL timestamp."""
    db, lake = tmp_path / "feedback.duckdb", tmp_path / "lake"
    events = [analyzer_event(0), analyzer_event(1, timestamp="")]
    ingest_ok("analyzer", write_jsonl(tmp_path / "feedback.jsonl", events), "--db", db)
    with duckdb.connect(str(db)) as con:
        export_lake(con, lake)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert set(data_files(lake, "analyzer_events")) == {today}
    files = sorted(str(path) for path in (lake / "analyzer_events").rglob("*.parquet"))
    stamps = duckdb.sql(f'select event_id, "timestamp" from read_parquet({files}) order by 1').fetchall()
    assert {event_id: ts is None for event_id, ts in stamps} == {
        events[0]["event_id"]: False,
        events[1]["event_id"]: True,
    }


def test_a_warehouse_without_the_optional_nightly_runs_exports_it_empty(warehouse: Path, tmp_path: Path) -> None:
    """raw.nightly_runs is optional (warehouse/raw_tables.py OPTIONAL_TABLES): a warehouse of an earlier version
    that no nightly or ingest of this one touched lacks it; read-only commands open it, and the lake still gets
    the table's folder with its columns, so Spark registers it and the build reads no runs."""
    with duckdb.connect(str(warehouse)) as con:
        con.execute("drop table raw.nightly_runs")
    con = connect(warehouse, read_only=True)
    try:
        export_lake(con, tmp_path / "lake")
    finally:
        con.close()
    assert lake_rows(tmp_path / "lake", "nightly_runs") == []
    files = f"{tmp_path / 'lake'}/nightly_runs/*/*.parquet"
    columns = duckdb.sql(f"describe select * from read_parquet('{files}', hive_partitioning = false)").fetchall()
    assert [(row[0], row[1]) for row in columns] == [
        ("run_id", "VARCHAR"),
        ("started_at", "TIMESTAMP WITH TIME ZONE"),
        ("finished_at", "TIMESTAMP WITH TIME ZONE"),
        ("as_of", "TIMESTAMP WITH TIME ZONE"),
        ("status", "VARCHAR"),
        ("failed_steps", "VARCHAR"),
    ]
