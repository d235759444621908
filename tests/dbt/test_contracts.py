"""Contracts on the marts: every mart (each is read by a page, the report, `export` or MetricFlow) declares its
columns and their types, and dbt enforces them, so a renamed or retyped column fails the build, not a reader.
build_info serves the vars the pages must agree with, so a `--vars` change reaches them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from dashboards import data, filters, words
from dashboards.queries import scope
from operations.build import dbt_command
from tests.support.dbt import REPO, run_dbt
from warehouse.connection import connect
from warehouse.location import Warehouse, serving_path

pytestmark = pytest.mark.slow


def _warehouse(folder: Path) -> Path:
    path = folder / "warehouse.duckdb"
    connect(path).close()
    return path


def test_every_mart_enforces_a_contract_with_every_column_typed(tmp_path: Path) -> None:
    result = run_dbt(["parse"], warehouse=_warehouse(tmp_path), work_dir=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    nodes = json.loads((tmp_path / "target" / "manifest.json").read_text())["nodes"].values()
    marts = [node for node in nodes if node["resource_type"] == "model" and node["fqn"][1] == "marts"]
    assert len(marts) > 50
    for node in marts:
        assert node["config"]["contract"]["enforced"], node["name"]
        assert node["columns"], node["name"]
        untyped = [name for name, column in node["columns"].items() if not column.get("data_type")]
        assert not untyped, (node["name"], untyped)
        if node["config"]["materialized"] == "incremental":
            assert node["config"]["on_schema_change"] == "append_new_columns", node["name"]


def test_a_renamed_or_retyped_mart_column_fails_the_build(tmp_path: Path) -> None:
    """A scratch copy of the project whose build_info renames one column and retypes another: the build of that
    mart fails with dbt's contract error naming both, and the mart is not created."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(REPO / name, project / name)
    for folder in ("models", "macros", "seeds"):
        shutil.copytree(REPO / folder, project / folder)
    model = project / "models" / "marts" / "warehouse_ops" / "build_info.sql"
    sql = model.read_text()
    assert "as dbt_version" in sql and "as trend_significance_level" in sql
    sql = sql.replace("as dbt_version", "as dbt_release")
    sql = sql.replace(
        "{{ var('trend_significance_level') }} as {{ dbt.type_float() }}",
        "{{ var('trend_significance_level') }} as {{ dbt.type_string() }}",
    )
    model.write_text(sql)
    warehouse = _warehouse(tmp_path)
    result = subprocess.run(
        dbt_command("run", "--select", "build_info", project_dir=project, work_dir=tmp_path),
        cwd=project,
        env={**os.environ, "FEEDBACK_DB": str(warehouse)},
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1, result.stdout[-3000:]
    assert "This model has an enforced contract that failed" in result.stdout, result.stdout[-3000:]
    for column in ("dbt_release", "dbt_version", "trend_significance_level"):
        assert column in result.stdout, (column, result.stdout[-3000:])
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert not con.execute("select * from information_schema.tables where table_name = 'build_info'").fetchall()


def test_build_info_serves_the_vars_the_pages_read(tmp_path: Path) -> None:
    """A build with other vars: the dashboard's filters and its q-value help follow them (scope, data.status)."""
    warehouse = _warehouse(tmp_path)
    result = subprocess.run(
        dbt_command(
            "run",
            "--select",
            "build_info",
            "+session_feedback_daily",
            "--vars",
            # an as-of given: a selection without one reads the stored as-of from build_info as each model starts,
            # which this selection rebuilds at the same time (the command line reads it once, before dbt)
            json.dumps({"all_members_key": "everyone", "trend_significance_level": 0.01, "as_of": "2026-11-01"}),
            work_dir=tmp_path,
        ),
        cwd=REPO,
        env={**os.environ, "FEEDBACK_DB": str(warehouse)},
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert serving_path(warehouse).exists()
    with data.use_warehouse(Warehouse.at(warehouse)):
        status = data.status()
        assert status.ready, status.message
        assert status.all_members_key == "everyone" and status.trend_significance_level == 0.01
        assert scope.scope_params(None, "docs") == {
            "tenant_filter": "everyone",
            "project_filter": "docs",
            "all_members": "everyone",
        }
    assert "below 0.01, at most 1% are expected" in words.q_value_help(status.trend_significance_level)


def test_the_periods_offered_are_those_the_marts_hold() -> None:
    """The page's period choices and the report's --period come from metric_rates_by_period's lengths (var
    period_lengths_days, read into data.status().periods), not from a copy: a single day is the report's only."""
    held = data.WarehouseStatus("w.serving.duckdb", "ready", periods=(1, 14, 30, 60))
    assert filters.periods(held) == (14, 30, 60) and filters.default_period(held) == 30
    without_30 = data.WarehouseStatus("w.serving.duckdb", "ready", periods=(1, 7, 90))
    assert filters.periods(without_30) == (7, 90) and filters.default_period(without_30) == 90
