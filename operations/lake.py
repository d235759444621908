"""The Parquet lake: the warehouse's raw tables as Spark reads them.

`feedback-analytics build --target spark` runs the dbt project on Spark, which
cannot open the DuckDB file. So the raw tables that the dbt sources name, and
the analyzer archive that purges wrote, are written as Parquet folders, one
per table, partitioned by day (`<lake>/<table>/_lake_day=YYYY-MM-DD/*.parquet`;
the day a row was loaded, or logged for the bookkeeping tables):

- timestamps as microseconds, adjusted to UTC (Spark rejects nanoseconds and
  reads an unadjusted timestamp as TIMESTAMP_NTZ); JSON as text;
- incrementally: each day partition has a fingerprint (row count and an
  order-independent hash of its rows) kept in `<lake>/_lake_state.json`; an
  export rewrites only the partitions whose fingerprint changed (new loads,
  and the rows a purge or an erasure removed) and deletes the ones that
  vanished. A crash mid-export leaves the state without the partitions being
  rewritten, so the next export writes them again;
- every table folder also holds an empty partition `_lake_day=1970-01-01` with
  the table's columns, so an empty table is still a table Spark can register;
- each day partition is one Parquet file, written by a COPY of its own, its
  rows in no particular order (the export's cost against DuckDB's bare COPY of
  the same tables is in docs/benchmarks.md). The fingerprints hash the rows as
  stored; a lake whose state an earlier version wrote (it hashed the rows as
  written) is rewritten once.

On Spark, `macros/sources/register_raw_sources.sql` registers each folder as
`raw.<table>` (one statement per call), so `source('raw', ...)` means the
same rows on both engines.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from operations.retention import logged_archives
from warehouse.raw_tables import DATA_TABLES, OPTIONAL_TABLES, RAW_TABLES, Column, empty_table_sql
from warehouse.sql import quote, sql_literal

PARTITION_COLUMN = "_lake_day"
STATE_FILE = "_lake_state.json"
SCHEMA_DAY = "1970-01-01"  # the empty partition that carries each table's columns
ARCHIVE_TABLE = "analyzer_events_archive"

# the day column of each bookkeeping table (a data table's rows go by the day they were loaded)
_BOOKKEEPING_DAY = {
    "load_manifest": "started_at",
    "purge_log": "applied_at",
    "quarantine": "quarantined_at",
    "erasure_log": "requested_at",
    "nightly_runs": "started_at",
}


@dataclass(frozen=True)
class LakeTable:
    name: str
    columns: tuple[Column, ...]
    day_column: str
    relation: str  # what DuckDB reads the rows from


@dataclass
class LakeExport:
    lake: Path
    partitions_written: dict[str, int] = field(default_factory=dict)
    partitions_deleted: dict[str, int] = field(default_factory=dict)
    rows_written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> str:
        written = sum(self.partitions_written.values())
        deleted = sum(self.partitions_deleted.values())
        rows = sum(self.rows_written.values())
        return (
            f"lake {self.lake}: {written:,} day partition(s) written ({rows:,} rows), "
            f"{deleted:,} deleted, in {self.seconds:.1f} s"
        )


def default_lake_dir(spark_warehouse: Path) -> Path:
    return spark_warehouse / "lake"


def _archive_relation(con: duckdb.DuckDBPyConnection) -> str:
    """The archive files committed purges logged and that still exist (the same rule as the dbt macro
    register_raw_sources), as one relation with raw.analyzer_events' columns."""
    columns = ", ".join(quote(column.name) for column in DATA_TABLES["analyzer_events"])
    empty = f"select {columns} from raw.analyzer_events where false"
    files = sorted(uri for uri in logged_archives(con) if Path(uri).is_file())
    if not files:
        return f"({empty})"
    listed = ", ".join(sql_literal(uri) for uri in files)
    return f"({empty} union all by name select {columns} from read_parquet([{listed}], union_by_name = true))"


def _relation(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """raw.<table>; an optional table the warehouse lacks (warehouse/raw_tables.py) as no rows of its columns."""
    if table in OPTIONAL_TABLES:
        found = con.execute(
            "select count(*) from information_schema.tables "
            "where table_catalog = current_database() and table_schema = 'raw' and table_name = ?",
            [table],
        ).fetchall()[0][0]
        if not found:
            return f"({empty_table_sql(table)})"
    return f"raw.{table}"


def lake_tables(con: duckdb.DuckDBPyConnection) -> list[LakeTable]:
    tables = [LakeTable(name, columns, "_loaded_at", f"raw.{name}") for name, columns in DATA_TABLES.items()]
    tables += [
        LakeTable(name, RAW_TABLES[name], day_column, _relation(con, name))
        for name, day_column in _BOOKKEEPING_DAY.items()
    ]
    tables.append(LakeTable(ARCHIVE_TABLE, DATA_TABLES["analyzer_events"], "_loaded_at", _archive_relation(con)))
    return tables


def _columns(table: LakeTable) -> str:
    """The table's columns as Spark reads them."""
    expressions = []
    for column in table.columns:
        name = quote(column.name)
        if column.sql_type == "timestamp":
            expressions.append(f"cast({name} as timestamptz) as {name}")
        elif column.sql_type == "json":
            expressions.append(f"cast({name} as varchar) as {name}")
        else:
            expressions.append(name)
    return ", ".join(expressions)


def _day(table: LakeTable) -> str:
    """The partition day of a row."""
    return f"coalesce(cast({quote(table.day_column)} as date), date '{SCHEMA_DAY}')"


def _fingerprints(con: duckdb.DuckDBPyConnection, table: LakeTable) -> dict[str, str]:
    """Per day partition: row count and the sum of the rows' hashes (order does not matter).

    The hashes are of the rows as stored, not as written (the casts are the same for every row, and skipping
    them halves the fingerprints' time: 1.9 s against 4.6 s for the 10.3M rows of demo scale 100)."""
    rows = con.execute(
        f"""
        select cast({_day(table)} as varchar), count(*), sum(hash(rows)) % 18446744073709551557
        from {table.relation} as rows
        group by all
        """
    ).fetchall()
    return {day: f"{count}:{digest}" for day, count, digest in rows}


def _read_state(lake: Path) -> dict[str, dict[str, str]]:
    path = lake / STATE_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def _write_state(lake: Path, state: dict[str, dict[str, str]]) -> None:
    temporary = lake / f"{STATE_FILE}.tmp"
    temporary.write_text(json.dumps(state, indent=1, sort_keys=True))
    os.replace(temporary, lake / STATE_FILE)


def _partition_dir(lake: Path, table: str, day: str) -> Path:
    return lake / table / f"{PARTITION_COLUMN}={day}"


def export_lake(con: duckdb.DuckDBPyConnection, lake: Path) -> LakeExport:
    """Write what changed since the last export of the raw tables into the lake (see the module's docstring).

    The rows of a day file need no order (Spark reads a table as a set), so the export lets DuckDB write them
    in any order: with the order kept, a COPY within the connection's memory limit (1 GB) took 15-20% longer."""
    started = time.perf_counter()
    lake.mkdir(parents=True, exist_ok=True)
    con.execute("set TimeZone = 'UTC'")
    keep_order = con.execute("select current_setting('preserve_insertion_order')").fetchall()[0][0]
    con.execute("set preserve_insertion_order = false")
    try:
        export = _export_tables(con, lake)
    finally:
        con.execute(f"set preserve_insertion_order = {'true' if keep_order else 'false'}")
    export.seconds = time.perf_counter() - started
    return export


def _export_tables(con: duckdb.DuckDBPyConnection, lake: Path) -> LakeExport:
    state = _read_state(lake)
    export = LakeExport(lake)
    for table in lake_tables(con):
        now = _fingerprints(con, table)
        before = state.get(table.name, {})
        changed = sorted(day for day, fingerprint in now.items() if before.get(day) != fingerprint)
        vanished = sorted(day for day in before if day not in now)
        # forget the partitions about to be rewritten first: a crash from here on leaves them to the next export
        state[table.name] = {day: fp for day, fp in before.items() if day not in changed and day not in vanished}
        _write_state(lake, state)
        for day in changed + vanished:
            shutil.rmtree(_partition_dir(lake, table.name, day), ignore_errors=True)
        for day in changed:
            _write_day(con, lake, table, day)
        _write_schema_partition(con, lake, table)
        state[table.name] = now
        _write_state(lake, state)
        export.partitions_written[table.name] = len(changed)
        export.partitions_deleted[table.name] = len(vanished)
        export.rows_written[table.name] = sum(int(now[day].split(":")[0]) for day in changed)
    return export


def _write_day(con: duckdb.DuckDBPyConnection, lake: Path, table: LakeTable, day: str) -> None:
    """One day partition as one Parquet file, by a COPY of its own.

    Not one COPY with `partition_by` for all the changed days: within the connection's memory limit (1 GB) such a
    write took 4x as long as a plain COPY of the same rows (50 s against 11 s for the 5M analyzer events of demo
    scale 100) and the full export of that warehouse mostly ran out of memory (docs/benchmarks.md). The range on
    the day column lets DuckDB skip the row groups of other days (loads are appended in time order), so a full
    export of many days does not read each table once per day (1,100 day partitions: 25 s, against 65 s)."""
    folder = _partition_dir(lake, table.name, day)
    folder.mkdir(parents=True, exist_ok=True)
    column = quote(table.day_column)
    if day == SCHEMA_DAY:  # where the rows without a day go too (the coalesce of _day)
        where = f"{_day(table)} = date '{day}'"
    else:  # the same rows as `_day(table) = day`, and a filter DuckDB checks against each row group's range
        where = f"{column} >= date '{day}' and {column} < date '{day}' + 1"
    file = folder / f"part-{uuid.uuid4()}.parquet"
    con.execute(
        f"copy (select {_columns(table)} from {table.relation} where {where}) "
        f"to {sql_literal(str(file))} (format parquet)"
    )


def _write_schema_partition(con: duckdb.DuckDBPyConnection, lake: Path, table: LakeTable) -> None:
    """An empty file with the table's columns, so that Spark can register a table with no rows yet."""
    folder = _partition_dir(lake, table.name, SCHEMA_DAY)
    folder.mkdir(parents=True, exist_ok=True)
    con.execute(
        f"copy (select {_columns(table)} from {table.relation} where false) "
        f"to {sql_literal(str(folder / 'columns.parquet'))} (format parquet)"
    )
