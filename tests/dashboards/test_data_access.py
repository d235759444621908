"""The dashboard's data layer reads the warehouse it is given (by app.py, the report, a `use_warehouse` block),
never one it finds in the environment; and it is reached through its public names only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboards import data
from dashboards.report import build_report
from tests.support.dashboard import APP, DemoWarehouse
from warehouse.location import Warehouse

ROOT = Path(__file__).resolve().parents[2]
DATA_MODULE = "dashboards.data"


def test_the_app_says_why_a_refused_warehouse_path_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry point resolves the handed-over path once and shows the one-line reason, not a traceback (the
    path itself is what is wrong)."""
    monkeypatch.setenv("FEEDBACK_DB", "/tmp/raw.duckdb")
    data.clear_caches()
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    assert not app.exception, [str(exc.value) for exc in app.exception]
    shown = [element.value for element in (*app.warning, *app.error)]
    assert any("clashes with the schema or catalog 'raw'" in text for text in shown), shown


def test_without_a_given_warehouse_the_data_layer_reads_none_whatever_feedback_db_says(
    monkeypatch: pytest.MonkeyPatch, demo: DemoWarehouse
) -> None:
    monkeypatch.setenv("FEEDBACK_DB", str(demo.db))
    data.clear_caches()
    with pytest.raises(data.WarehouseUnavailable, match="No warehouse given"):
        data.status()
    with pytest.raises(data.WarehouseUnavailable, match="No warehouse given"):
        data.query("select 1 as one")


def test_the_report_reads_the_warehouse_it_is_given_not_feedback_db(
    monkeypatch: pytest.MonkeyPatch, demo: DemoWarehouse, tmp_path: Path
) -> None:
    """FEEDBACK_DB names a warehouse that does not exist: the report of the one given is built all the same, and
    the data layer, given the other one, says it is missing."""
    elsewhere = tmp_path / "elsewhere.duckdb"
    monkeypatch.setenv("FEEDBACK_DB", str(elsewhere))
    data.clear_caches()
    made = build_report(Warehouse.at(demo.db), as_of=None, period_days=7, tenant=None)
    assert made.as_of.isoformat() == "2026-11-01" and made.charts > 0
    with data.use_warehouse(Warehouse.at(demo.db)):
        assert data.status().ready
    with data.use_warehouse(Warehouse.at(elsewhere)):
        assert data.status().state == "missing"
    data.clear_caches()


def private_names_of_data(path: Path) -> list[str]:
    """`from dashboards.data import _x` and `data._x` (with `data` imported from dashboards) in one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "dashboards"
        for alias in node.names
        if alias.name == "data"
    } | {
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == DATA_MODULE and alias.asname
    }
    found = [
        f"{where}:{node.lineno} imports {alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == DATA_MODULE
        for alias in node.names
        if alias.name.startswith("_")
    ]
    found += [
        f"{where}:{node.lineno} uses {node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in aliases
        and node.attr.startswith("_")
    ]
    return found


def test_no_module_outside_data_py_uses_a_private_name_of_it() -> None:
    """The query modules, pages, report, benchmarks, command line and tests use `cached`, `query`, `queries`
    and the rest of data.py's public names; its private ones may change without them."""
    modules = [
        path
        for folder in ("dashboards", "cli", "bench", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != ROOT / "dashboards" / "data.py"
    ]
    assert any("from dashboards.data import" in path.read_text() for path in modules), (
        "the check reads the modules that import data.py's names"
    )
    wrong = [line for path in modules for line in private_names_of_data(path)]
    assert not wrong, wrong


def test_the_private_name_check_finds_both_forms(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text("from dashboards import data\nfrom dashboards.data import _query, cached\n\ndata._cursor()\n")
    found = private_names_of_data(module)
    assert [line.split(" ", 1)[1] for line in found] == ["imports _query", "uses data._cursor"]
