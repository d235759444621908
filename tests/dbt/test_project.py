"""The dbt project parses and builds on a fresh, empty warehouse, and every raw
table the loader creates is declared as a dbt source with every column
described, its natural key tested and its freshness checkable."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest

from operations.build import dbt_command
from tests.support.dbt import run_dbt
from warehouse.connection import connect
from warehouse.contracts import CONTRACTS
from warehouse.raw_tables import RAW_TABLES

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

# Natural key of every upstream table (the contracts); the bookkeeping tables
# (quarantine, load_manifest, purge_log, erasure_log) have none.
NATURAL_KEYS = {contract.table: contract.key for contract in CONTRACTS}


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


def test_dbt_build_on_an_empty_warehouse(tmp_path: Path, manifest: dict[str, Any]) -> None:
    """Every model, seed, data test and unit test of the project runs and passes on an empty warehouse."""
    warehouse = new_warehouse(tmp_path)
    assert_succeeded(run_dbt(["build"], warehouse=warehouse, work_dir=tmp_path))
    results = json.loads((tmp_path / "target" / "run_results.json").read_text())["results"]
    ran = Counter((entry["unique_id"].split(".")[0], entry["status"]) for entry in results)
    declared = Counter(node["resource_type"] for node in manifest["nodes"].values())
    declared["unit_test"] = len(manifest["unit_tests"])
    assert declared["unit_test"] >= 30 and declared["model"] >= 40, declared
    for kind, done in (("model", "success"), ("seed", "success"), ("test", "pass"), ("unit_test", "pass")):
        assert ran[(kind, done)] == declared[kind], f"{kind}: {ran[(kind, done)]} of {declared[kind]} {done}"


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


MACRO_SIGNATURE = re.compile(r"\{%-?\s*(?:macro|test)\s+\w+\s*\((?P<arguments>.*?)\)\s*-?%\}", re.DOTALL)


def test_every_macro_is_documented_in_its_folder(manifest: dict[str, Any]) -> None:
    """Every macro of the project has a description and each of its arguments a type and a description, in the
    _<folder>__macros.yml next to it (dbt_project.yml's validate_macro_args checks the names and types at parse)."""
    macros = [macro for macro in manifest["macros"].values() if macro["package_name"] == "feedback_analytics"]
    assert len(macros) > 40
    problems = []
    for macro in macros:
        where = f"{macro['name']} ({macro['original_file_path']})"
        folder = Path(macro["original_file_path"]).parent
        properties = folder / f"_{folder.name}__macros.yml"
        if not macro["patch_path"] or Path(macro["patch_path"].split("://")[1]) != properties:
            problems.append(f"{where}: not documented in {properties}")
            continue
        if not macro["description"].strip():
            problems.append(f"{where}: no description")
        signature = MACRO_SIGNATURE.match(macro["macro_sql"])
        assert signature, where
        names = [argument.split("=")[0].strip() for argument in signature["arguments"].split(",") if argument.strip()]
        documented = [argument["name"] for argument in macro["arguments"]]
        if documented != names:
            problems.append(f"{where}: arguments {names}, documented {documented}")
        problems += [
            f"{where}: argument {argument['name']} without a type or a description"
            for argument in macro["arguments"]
            if not (argument.get("type") or "").strip() or not (argument.get("description") or "").strip()
        ]
    assert problems == []


KEY_TESTS = {"primary_key", "unique_combination_of_columns"}


def holds_on_every_row(where: str | None) -> bool:
    """A key holds on every row, not on a filtered subset; a key test on the new loads
    (`new_loads_only(COLUMN, KEY...)`, macros/test_scope/new_loads_only.sql) checks their keys against every row,
    and every row on --full-refresh and with --full-tests."""
    return not where or (where.startswith("new_loads_only(") and "," in where)


def test_every_model_has_a_primary_key_test(manifest: dict[str, Any]) -> None:
    keyed = {
        dependency
        for node in manifest["nodes"].values()
        if node["resource_type"] == "test"
        and (node.get("test_metadata") or {}).get("name") in KEY_TESTS
        and holds_on_every_row(node["config"].get("where"))
        for dependency in node["depends_on"]["nodes"]
    }
    models = [uid for uid, node in manifest["nodes"].items() if node["resource_type"] == "model"]
    assert len(models) > 40
    assert [uid for uid in models if uid not in keyed] == []


def test_primary_key_test_fails_on_a_duplicate_and_on_a_null(tmp_path: Path) -> None:
    """The project's primary_key generic test in a throwaway project: a seed with one duplicated key and one
    null key fails it with exactly those two keys; a compound key fails on a null part too; a clean key passes."""
    project = tmp_path / "project"
    (project / "macros").mkdir(parents=True)
    (project / "seeds").mkdir()
    (project / "macros" / "primary_key.sql").write_text((REPO / "macros/generic_tests/primary_key.sql").read_text())
    (project / "dbt_project.yml").write_text(
        "name: pk_check\nversion: '1.0'\nconfig-version: 2\nprofile: pk_check\n"
        "flags:\n  send_anonymous_usage_stats: false\n"
    )
    (project / "profiles.yml").write_text(
        f"pk_check:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: {tmp_path / 'pk.duckdb'}\n"
    )
    (project / "seeds" / "keys.csv").write_text("id,part,clean\na,1,x\nb,1,y\nb,2,z\n,3,w\n")
    (project / "seeds" / "_seeds.yml").write_text(
        "version: 2\nseeds:\n  - name: keys\n"
        "    config:\n      column_types: {id: varchar, part: integer, clean: varchar}\n"
        "    data_tests:\n"
        "      - primary_key:\n          name: compound_key_with_a_null_part\n"
        "          arguments:\n            columns: [id, part]\n"
        "    columns:\n"
        "      - name: id\n        data_tests: [primary_key]\n"
        "      - name: clean\n        data_tests: [primary_key]\n"
    )
    result = subprocess.run(
        dbt_command("build", project_dir=project),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1, result.stdout[-3000:]
    outcomes = {
        entry["unique_id"].split(".")[2]: (entry["status"], entry["failures"])
        for entry in json.loads((project / "target" / "run_results.json").read_text())["results"]
        if entry["unique_id"].startswith("test.")
    }
    assert outcomes == {
        "primary_key_keys_id": ("fail", 2),  # b twice, and the null id
        "compound_key_with_a_null_part": ("fail", 1),  # (null, 3); (b, 1) and (b, 2) are distinct
        "primary_key_keys_clean": ("pass", 0),
    }


def test_feedback_analytics_build_leaves_the_unit_tests_to_the_test_suite(tmp_path: Path) -> None:
    """`feedback-analytics build` runs every model and data test but no unit test; `--unit-tests` adds them."""
    warehouse = new_warehouse(tmp_path)
    target = tmp_path / "target"
    result = subprocess.run(
        [sys.executable, "-m", "cli", "build", "--db", str(warehouse), "--", "--target-path", str(target), "-q"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    kinds = Counter(
        entry["unique_id"].split(".")[0] for entry in json.loads((target / "run_results.json").read_text())["results"]
    )
    assert kinds["model"] > 40 and kinds["test"] > 200
    assert kinds["unit_test"] == 0
    assert "unit_test" in dbt_command("build", unit_tests=False)
    assert "unit_test" not in dbt_command("build")


def test_build_on_a_terminal_shows_progress_not_dbt_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal `feedback-analytics build` prints one progress line and dbt's summary, not dbt's raw log."""
    from tests.support.ingest import run_on_a_terminal

    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "dbt-target"))  # not the checkout's target/ and logs/
    monkeypatch.setenv("DBT_LOG_PATH", str(tmp_path / "dbt-logs"))
    warehouse = new_warehouse(tmp_path)
    code, printed = run_on_a_terminal(
        ["build", "--db", warehouse, "--", "--select", "path:seeds", "staging", "--indirect-selection", "cautious"]
    )
    assert code == 0, printed[-3000:]
    assert re.search(r"dbt build: (\d+) of \1 nodes done", printed), printed[-2000:]
    assert re.search(r"PASS=\d+ WARN=0 ERROR=0", printed)
    assert " START " not in printed and "Running with dbt" not in printed, printed[-2000:]


def test_dbt_on_a_warehouse_without_raw_tables_says_which_file_and_what_to_do(tmp_path: Path) -> None:
    """An analyst's first `dbt build` on the wrong (or a new, empty) file: one clear line, not a Catalog Error."""
    wrong = tmp_path / "elsewhere.duckdb"
    result = run_dbt(["build"], warehouse=wrong, work_dir=tmp_path)
    assert result.returncode != 0
    assert f"the warehouse {wrong} has no raw.analyzer_events" in result.stdout, result.stdout[-3000:]
    assert "FEEDBACK_DB=" in result.stdout and "feedback-analytics ingest" in result.stdout
    assert "Catalog Error" not in result.stdout


def test_a_new_as_of_keeps_partial_parsing(tmp_path: Path) -> None:
    """`build --as-of` passes the instant as FEEDBACK_AS_OF, read when the SQL runs: a nightly with a new
    instant re-uses the parsed project (a changed --vars would parse it all again), and the marts say the new
    instant. (A build of a selection keeps the as-of the warehouse's marts were built at, macros/as_of/as_of.sql:
    the warehouse forgets it between the two builds here, as a fresh warehouse would, so the second takes the new
    instant.)"""
    warehouse = new_warehouse(tmp_path)
    env = {**os.environ, "DBT_TARGET_PATH": str(tmp_path / "target"), "DBT_LOG_PATH": str(tmp_path / "logs")}
    for day in ("2026-11-01", "2026-11-02"):
        result = subprocess.run(
            [sys.executable, "-m", "cli", "build", "--as-of", day, "--db", str(warehouse), "--", "-s", "build_info"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        with duckdb.connect(str(warehouse), read_only=True) as con:
            assert con.execute("select as_of_at from marts.build_info").fetchall() == [
                (dt.datetime.fromisoformat(f"{day}T23:59:59.999999"),)
            ]
        with duckdb.connect(str(warehouse)) as con:
            con.execute("drop table marts.build_info")
    log = (tmp_path / "logs" / "dbt.log").read_text()
    second = log[log.rindex("Running with dbt") :]
    assert "Unable to do partial parsing" not in second, second[:3000]
    assert "Unable to do partial parsing because saved manifest not found" in log  # the first build parsed all
