"""The dbt project parses and builds on a fresh, empty warehouse, and every raw
table the loader creates is declared as a dbt source with every column
described, its natural key tested and its freshness checkable."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import duckdb
import pytest
from fixtures_dbt import run_dbt

from ingest.warehouse import RAW_TABLES, connect

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

# Natural key of every upstream table (ingest/warehouse.py); the bookkeeping
# tables (quarantine, load_manifest, purge_log) have none.
NATURAL_KEYS = {
    "analyzer_events": "event_id",
    "session_feedback": "id",
    "turn_reactions": "rn",
    "workspace_feedback": "id",
    "workspace_sessions": "id",
    "workspace_eval_runs": "id",
}


def assert_succeeded(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, f"{' '.join(result.args[:2])} exited {result.returncode}:\n{result.stdout[-4000:]}"


def new_warehouse(folder: Path) -> Path:
    path = folder / "warehouse.duckdb"
    connect(path).close()
    return path


def raw_columns(warehouse: Path) -> dict[str, list[str]]:
    """Column names of every raw table, as the loader's DDL created them."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "select table_name, column_name from information_schema.columns "
            "where table_schema = 'raw' order by table_name, ordinal_position"
        ).fetchall()
    columns: dict[str, list[str]] = {}
    for table, column in rows:
        columns.setdefault(table, []).append(column)
    return columns


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dbt_project")


@pytest.fixture(scope="module")
def warehouse(work_dir: Path) -> Path:
    return new_warehouse(work_dir)


@pytest.fixture(scope="module")
def manifest(warehouse: Path, work_dir: Path) -> dict[str, Any]:
    assert_succeeded(run_dbt(["parse"], warehouse=warehouse, work_dir=work_dir))
    return json.loads((work_dir / "target" / "manifest.json").read_text())


def raw_sources(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """dbt sources over the raw schema, by table name."""
    return {source["identifier"]: source for source in manifest["sources"].values() if source["schema"] == "raw"}


def test_raw_tables_match_the_loader(warehouse: Path) -> None:
    assert sorted(raw_columns(warehouse)) == sorted(RAW_TABLES)


@pytest.mark.parametrize("table", sorted(RAW_TABLES))
def test_raw_table_is_a_described_source(table: str, manifest: dict[str, Any], warehouse: Path) -> None:
    sources = raw_sources(manifest)
    assert table in sources, f"raw.{table} is not declared as a dbt source"
    source = sources[table]
    assert source["description"].strip(), f"source {source['source_name']}.{table} has no description"

    ddl_columns = raw_columns(warehouse)[table]
    documented = {name: column["description"].strip() for name, column in source["columns"].items()}
    undescribed = [name for name in ddl_columns if not documented.get(name)]
    assert not undescribed, f"raw.{table}: columns without a description: {undescribed}"
    unknown = sorted(set(documented) - set(ddl_columns))
    assert not unknown, f"raw.{table}: documented columns that the DDL does not have: {unknown}"


@pytest.mark.parametrize(("table", "key"), sorted(NATURAL_KEYS.items()))
def test_natural_key_is_tested_and_fresh_checked(table: str, key: str, manifest: dict[str, Any]) -> None:
    source = raw_sources(manifest)[table]
    tests_on_key = {
        node["test_metadata"]["name"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "test"
        and source["unique_id"] in node["depends_on"]["nodes"]
        and node.get("column_name") == key
        and node.get("test_metadata")
    }
    assert {"not_null", "unique"} <= tests_on_key, f"raw.{table}.{key}: tests {sorted(tests_on_key)}"

    assert source["loaded_at_field"] == "_loaded_at"
    freshness = source["freshness"] or {}
    assert (freshness.get("warn_after") or {}).get("count"), f"raw.{table} has no freshness"
    assert (freshness.get("error_after") or {}).get("count"), f"raw.{table} has no freshness"


def test_dbt_build_on_an_empty_warehouse(tmp_path: Path) -> None:
    warehouse = new_warehouse(tmp_path)
    assert_succeeded(run_dbt(["build"], warehouse=warehouse, work_dir=tmp_path))


def test_source_freshness_after_a_load(tmp_path: Path) -> None:
    """One freshly loaded row per table: every source with freshness passes.

    (On an empty table dbt reports ERROR STALE: a source that never delivered
    is not fresh.)
    """
    warehouse = new_warehouse(tmp_path)
    with duckdb.connect(str(warehouse)) as con:
        con.execute("set TimeZone = 'UTC'")
        for table in NATURAL_KEYS:
            insert_placeholder_row(con, table)

    result = run_dbt(["source", "freshness"], warehouse=warehouse, work_dir=tmp_path)
    assert_succeeded(result)
    statuses = {
        entry["unique_id"].rsplit(".", 1)[-1]: entry["status"]
        for entry in json.loads((tmp_path / "target" / "sources.json").read_text())["results"]
    }
    assert statuses == dict.fromkeys(NATURAL_KEYS, "pass")


PLACEHOLDERS = {
    "VARCHAR": "'x'",
    "BIGINT": "1",
    "INTEGER": "1",
    "DOUBLE": "0.5",
    "BOOLEAN": "false",
    "DATE": "current_date",
    "TIMESTAMP": "current_timestamp::timestamp",
    "JSON": "'{}'",
    "BLOB": "''::blob",
    "VARCHAR[]": "[]",
}


def insert_placeholder_row(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Insert a row with a value in every not-null column, `_loaded_at` = now (UTC)."""
    columns = con.execute(
        "select column_name, data_type from information_schema.columns "
        "where table_schema = 'raw' and table_name = ? and is_nullable = 'NO'",
        [table],
    ).fetchall()
    names = ", ".join(f'"{name}"' for name, _ in columns)
    values = ", ".join(PLACEHOLDERS[data_type] for _, data_type in columns)
    con.execute(f"insert into raw.{table} ({names}) values ({values})")
