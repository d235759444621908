"""Fixtures the AppTest modules share: the demo warehouse (built once per session) and a way to point the
dashboard in this process at a warehouse file: handed over as FEEDBACK_DB to the entry point (app.py, which
AppTest runs), and given to the data layer for the test's own direct calls (`data.use_warehouse`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from dashboards import data
from tests.support.dashboard import DemoWarehouse, demo_or_fail
from warehouse.location import Warehouse


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoWarehouse:
    return demo_or_fail(tmp_path_factory.getbasetemp())


@pytest.fixture
def use_warehouse(monkeypatch: pytest.MonkeyPatch, demo: DemoWarehouse) -> Iterator[Callable[[Path], Path]]:
    """Point the dashboard (in this process) at a warehouse file; caches are emptied around each test."""

    with ExitStack() as given:

        def use(db: Path) -> Path:
            monkeypatch.setenv("FEEDBACK_DB", str(db))
            monkeypatch.setenv("DBT_TARGET_PATH", str(demo.dbt_target))
            given.enter_context(data.use_warehouse(Warehouse.at(db)))
            data.clear_caches()
            return db

        yield use
    data.clear_caches()


@pytest.fixture
def on_demo(monkeypatch: pytest.MonkeyPatch, demo: DemoWarehouse) -> Iterator[DemoWarehouse]:
    """The dashboard (in this process) on the demo warehouse; caches are emptied around the test."""
    monkeypatch.setenv("FEEDBACK_DB", str(demo.db))
    monkeypatch.setenv("DBT_TARGET_PATH", str(demo.dbt_target))
    data.clear_caches()
    with data.use_warehouse(Warehouse.at(demo.db)):
        yield demo
    data.clear_caches()
