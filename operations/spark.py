"""`feedback-analytics build --target spark`: the same dbt project on Apache Spark (docs/scale-out.md).

A Spark build has three steps around `dbt build`:

1. check the target and what it needs, each failure one line naming the fix
   (an unknown target, no dbt-spark or pyspark, no Java for a local Spark, a
   Thrift Server that does not answer, a warehouse folder that cannot be
   written);
2. write what changed in the raw tables to the Parquet lake (operations/lake.py)
   that the dbt sources read on Spark;
3. after a successful build, copy every mart Spark wrote into the DuckDB file,
   with the column types Spark's catalog gives (`dbt run-operation
   spark_mart_catalog`), in one transaction: the dashboard reads the marts of
   whichever engine built them, through the same queries.

FEEDBACK_SPARK_WAREHOUSE names the folder Spark's schemas land in
(`<folder>/<schema>.db/<table>/`) and the lake (`<folder>/lake/`); by default
`<warehouse file's stem>-spark/` next to the DuckDB file.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from operations.build import BuildResult, Sink, Target, dbt_build, dbt_command
from operations.lake import LakeExport, default_lake_dir, export_lake
from warehouse.as_of import ReportInstant
from warehouse.connection import connect
from warehouse.errors import UserError
from warehouse.sql import quote, sql_literal

# the Thrift target's defaults, as profiles.yml spells them
DEFAULT_THRIFT_HOST = "127.0.0.1"
DEFAULT_THRIFT_PORT = 10000
CATALOG_MARKER = "spark_mart_catalog: "


def spark_warehouse_dir(db: Path) -> Path:
    """FEEDBACK_SPARK_WAREHOUSE, else `<db stem>-spark/` next to the DuckDB file."""
    named = os.environ.get("FEEDBACK_SPARK_WAREHOUSE")
    return Path(named).resolve() if named else db.resolve().with_name(f"{db.stem}-spark")


def thrift_address() -> tuple[str, int]:
    host = os.environ.get("FEEDBACK_SPARK_HOST", DEFAULT_THRIFT_HOST)
    port = os.environ.get("FEEDBACK_SPARK_PORT", str(DEFAULT_THRIFT_PORT))
    if not port.isdigit():
        raise UserError(f"FEEDBACK_SPARK_PORT={port!r} is not a port number", exit_code=2)
    return host, int(port)


def java_executable() -> str | None:
    """`java` from JAVA_HOME, else from PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def check_spark_target(target: Target, spark_warehouse: Path) -> None:
    """Everything a Spark build needs before it starts, each missing piece one line naming the fix."""
    if importlib.util.find_spec("dbt.adapters.spark") is None:
        raise UserError("dbt-spark is not installed: pip install -e '.[spark]' (or `make venv`)")
    if target.method == "session":
        if importlib.util.find_spec("pyspark") is None:
            raise UserError("pyspark is not installed: pip install -e '.[spark]' (or `make venv`)")
        if java_executable() is None:
            raise UserError(
                "no Java for a local Spark: install Java 17 (apt-get install -y openjdk-17-jre-headless) "
                "or set JAVA_HOME"
            )
    else:
        host, port = thrift_address()
        try:
            socket.create_connection((host, port), timeout=5).close()
        except OSError as exc:
            raise UserError(
                f"Spark Thrift Server at {host}:{port} unreachable ({exc.strerror or exc}): start it "
                "(docs/scale-out.md) or point FEEDBACK_SPARK_HOST / FEEDBACK_SPARK_PORT at it"
            ) from None
    try:
        spark_warehouse.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=spark_warehouse, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise UserError(
            f"Spark warehouse folder {spark_warehouse} is not writable ({exc.strerror or exc}): "
            "set FEEDBACK_SPARK_WAREHOUSE to a folder you can write"
        ) from None


def spark_environment(spark_warehouse: Path) -> dict[str, str]:
    """What dbt needs to reach this warehouse's Spark folder (profiles.yml and the macros read it)."""
    return {"FEEDBACK_SPARK_WAREHOUSE": str(spark_warehouse)}


def export_lake_of(db: Path, spark_warehouse: Path) -> LakeExport:
    """Write what changed in the raw tables to the lake (a read-only look at the DuckDB file)."""
    con = connect(db, read_only=True)
    try:
        return export_lake(con, default_lake_dir(spark_warehouse))
    finally:
        con.close()


def mart_catalog(target: Target, env: dict[str, str], work_dir: Path | None = None) -> list[dict]:
    """The marts Spark holds, with locations and column types (macros/publish/spark_mart_catalog.sql)."""
    command = dbt_command("run-operation", "spark_mart_catalog", target=target.name, work_dir=work_dir)
    result = subprocess.run(
        command,
        env={**os.environ, **env, "DBT_USE_COLORS": "false"},
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    for line in result.stdout.splitlines():
        if line.startswith(CATALOG_MARKER):
            return json.loads(line[len(CATALOG_MARKER) :])
    last = (result.stdout.strip().splitlines() or ["no output"])[-1]
    raise UserError(f"could not read the marts Spark built (dbt run-operation exited {result.returncode}): {last}")


def duckdb_type(spark_type: str) -> str:
    """A Spark SQL type name as DuckDB spells it."""
    spark_type = spark_type.strip().lower()
    if spark_type.startswith("array<") and spark_type.endswith(">"):
        return duckdb_type(spark_type[len("array<") : -1]) + "[]"
    if spark_type.startswith("decimal"):
        return spark_type
    simple = {
        "string": "varchar",
        "bigint": "bigint",
        "int": "integer",
        "integer": "integer",
        "smallint": "smallint",
        "tinyint": "tinyint",
        "double": "double",
        "float": "float",
        "boolean": "boolean",
        "date": "date",
        "timestamp": "timestamp",
        "timestamp_ntz": "timestamp",
        "binary": "blob",
        "void": "varchar",
    }
    if spark_type not in simple:
        raise UserError(f"a mart column has Spark type {spark_type!r}, which the copy into DuckDB does not map yet")
    return simple[spark_type]


def _local_folder(location: str) -> Path:
    if location.startswith("file:"):
        return Path(location.removeprefix("file:").removeprefix("//"))
    if "://" in location:
        raise UserError(
            f"the marts are at {location}: the copy into the DuckDB file reads local folders only "
            "(mount the Spark warehouse, or copy its marts.db folder here)"
        )
    return Path(location)


def _mart_select(entry: dict) -> tuple[str, str]:
    """The columns of a mart as DuckDB declares them, and the select that reads its Parquet folder."""
    columns = [(name, duckdb_type(spark_type)) for name, spark_type in entry["columns"]]
    declared = ", ".join(f"{quote(name)} {sql_type}" for name, sql_type in columns)
    folder = _local_folder(entry["location"]) if entry.get("location") else None
    files = sorted(folder.rglob("*.parquet")) if folder and folder.is_dir() else []
    if not files:
        return declared, ""
    listed = ", ".join(sql_literal(str(file)) for file in files if not file.name.startswith(("_", ".")))
    selected = ", ".join(f"cast({quote(name)} as {sql_type}) as {quote(name)}" for name, sql_type in columns)
    return declared, f"select {selected} from read_parquet([{listed}], hive_partitioning = true, union_by_name = true)"


def publish_marts(db: Path, catalog: list[dict]) -> int:
    """Replace the marts of the DuckDB file with Spark's, in one transaction; returns how many."""
    con = connect(db)
    try:
        existing = dict(
            con.execute(
                "select table_name, table_type from information_schema.tables where table_schema = 'marts'"
            ).fetchall()
        )
        con.execute("begin transaction")
    except BaseException:
        con.close()
        raise
    try:
        con.execute("create schema if not exists marts")
        for entry in catalog:
            name = quote(entry["name"])
            if entry["name"] in existing:
                kind = "view" if existing[entry["name"]] == "VIEW" else "table"
                con.execute(f"drop {kind} marts.{name}")
            declared, select = _mart_select(entry)
            con.execute(f"create table marts.{name} ({declared})")
            if select:
                con.execute(f"insert into marts.{name} {select}")
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    finally:
        con.close()
    return len(catalog)


def spark_build(
    db: Path,
    as_of: ReportInstant | None,
    target: Target,
    dbt_args: list[str] | None = None,
    *,
    sink: Sink | None = None,
    unit_tests: bool = False,
) -> BuildResult:
    """Check, write the lake, `dbt build --target <spark target>`, copy the marts into `db` (see the module); the
    lines beside dbt's own go to `sink` and into the result's output as dbt's do."""
    spark_warehouse = spark_warehouse_dir(db)
    check_spark_target(target, spark_warehouse)
    lake = export_lake_of(db, spark_warehouse).summary() + "\n"
    if sink is not None:
        sink(lake)
    env = spark_environment(spark_warehouse)
    result = dbt_build(db, as_of, dbt_args, sink=sink, unit_tests=unit_tests, target=target.name, env=env)
    copied = ""
    if result.ok:
        published = publish_marts(db, mart_catalog(target, env))
        copied = f"copied {published} marts from {spark_warehouse / 'marts.db'} into {db}\n"
        if sink is not None:
            sink(copied)
    return dataclasses.replace(result, output=lake + result.output + copied)
