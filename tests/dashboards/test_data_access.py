"""The dashboard finds the warehouse the way every command does (the ground floor's resolve_db_path)."""

from __future__ import annotations

import pytest

from dashboards import data


def test_a_schema_named_warehouse_file_is_refused_as_by_the_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEEDBACK_DB", "/tmp/raw.duckdb")
    with pytest.raises(data.WarehouseUnavailable, match="clashes with the schema or catalog 'raw'"):
        data.warehouse_path()


def test_the_default_file_is_the_commands_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FEEDBACK_DB", raising=False)
    assert str(data.warehouse_path()) == "feedback.duckdb"
