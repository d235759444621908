"""The warehouse is resolved once: `Warehouse.at` (option, else FEEDBACK_DB, else ./feedback.duckdb), called by the
command line's `--db` option alone; below it, everything takes the `Warehouse` or a `Path`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.dbt import REPO
from warehouse.errors import UserError
from warehouse.location import DEFAULT_DB, Warehouse

# the packages under the command line's option: none of them may resolve the warehouse again (the dashboard's
# entry point resolves it for a dashboard process, dashboards/app.py)
BELOW_THE_COMMAND_LINE = ("cli", "operations", "warehouse", "ingest")
RESOLVING = re.compile(r"\bWarehouse\.at\(")


def test_the_option_wins_over_the_environment_and_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEEDBACK_DB", "/srv/from-env.duckdb")
    assert Warehouse.at("given.duckdb") == Warehouse(Path("given.duckdb"), Path("given.serving.duckdb"))
    assert Warehouse.at(None).path == Path("/srv/from-env.duckdb")
    assert Warehouse.at(None).serving == Path("/srv/from-env.serving.duckdb")
    monkeypatch.delenv("FEEDBACK_DB")
    assert Warehouse.at(None).path == Path(DEFAULT_DB)


def test_a_schema_named_file_is_refused() -> None:
    with pytest.raises(UserError, match="clashes with the schema"):
        Warehouse.at("raw.duckdb")


def test_only_the_command_lines_option_resolves_the_warehouse() -> None:
    callers = sorted(
        str(path.relative_to(REPO))
        for package in BELOW_THE_COMMAND_LINE
        for path in (REPO / package).rglob("*.py")
        if RESOLVING.search(path.read_text(encoding="utf-8"))
    )
    assert callers == ["cli/options.py"]  # `Warehouse.at` itself is defined in warehouse/location.py
