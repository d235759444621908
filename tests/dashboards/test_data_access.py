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


def test_the_app_says_why_a_refused_warehouse_path_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry point and the page show the one-line reason, not a traceback (the path itself is what is wrong)."""
    from streamlit.testing.v1 import AppTest

    from tests.support.dashboard import APP

    monkeypatch.setenv("FEEDBACK_DB", "/tmp/raw.duckdb")
    data.clear_caches()
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    assert not app.exception, [str(exc.value) for exc in app.exception]
    shown = [element.value for element in (*app.warning, *app.error)]
    assert any("clashes with the schema or catalog 'raw'" in text for text in shown), shown
