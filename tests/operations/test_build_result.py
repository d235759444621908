"""A build returns a result (issue 28, item 3): dbt's exit code, its run results, what was published, the output;
its lines go to one sink as they come. What the on-run-end hook published is read from the plugin's own line
(operations/dbt_plugin.py), into the same `Publication` a Spark build's publish returns; `nightly` reads that."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from operations.dbt_plugin import publish_build
from operations.targets import build_on_target, hook_publication
from tests.support.dashboard import DemoWarehouse, copy_warehouse, demo_or_fail
from warehouse.as_of import parse_as_of
from warehouse.connection import connect
from warehouse.location import serving_path


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoWarehouse:
    return demo_or_fail(tmp_path_factory.getbasetemp())


def test_what_the_hook_says_is_what_was_published(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    con = connect(db)
    try:
        con.execute("create schema marts")
        con.execute("create table marts.build_info as select * from range(3) as t(n)")
        line = publish_build(con, "build-1", None)
    finally:
        con.close()
    published, said = hook_publication(f"12:00:00  {line}\n12:00:01  Finished running 1 hook\n")
    assert said == line
    assert published is not None and (published.path, published.relations, published.rows) == (serving_path(db), 1, 3)
    with duckdb.connect(str(published.path), read_only=True) as served:
        assert served.execute("select relations from serving.publish_info").fetchall() == [(1,)]


def test_the_hook_line_says_whether_the_publish_was_incremental_or_full(tmp_path: Path) -> None:
    """The first publish is a full one (no serving file yet), the next one incremental: the hook's line says
    which, why, and the rows removed and relations recomputed, and reads back as the same Publication."""
    db = tmp_path / "w.duckdb"
    con = connect(db)
    try:
        con.execute("create schema marts")
        con.execute("create table marts.build_info as select * from range(3) as t(n)")
        first = publish_build(con, "build-1", None)
        con.execute("delete from marts.build_info where n = 0")
        second = publish_build(con, "build-2", None)
    finally:
        con.close()
    full, _ = hook_publication(first)
    incremental, _ = hook_publication(second)
    assert full is not None and (full.mode, full.reason, full.rows) == ("full", "no serving file yet", 3)
    assert incremental is not None
    assert (incremental.mode, incremental.reason, incremental.removed, incremental.recomputed) == (
        "incremental",
        "",
        0,
        1,
    )
    assert "s incrementally: 0 rows removed, 1 relations recomputed (the file" in second


def test_nothing_published_is_a_publication_of_no_relations(tmp_path: Path) -> None:
    db = tmp_path / "empty.duckdb"
    con = connect(db)
    try:
        line = publish_build(con, "build-1", None)
    finally:
        con.close()
    published, said = hook_publication(line)
    assert said.startswith("nothing published") and published is not None and published.relations == 0
    assert hook_publication("12:00:00  Completed successfully\n") == (None, "")


def test_a_build_returns_its_run_results_and_publication(
    demo: DemoWarehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = copy_warehouse(demo.db, tmp_path / "copy.duckdb")
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
    monkeypatch.setenv("DBT_LOG_PATH", str(tmp_path / "logs"))
    lines: list[str] = []
    result = build_on_target(db, parse_as_of("2026-11-01"), ["--select", "build_info"], sink=lines.append)
    assert result.ok and "".join(lines) == result.output
    assert [(node.unique_id, node.status) for node in result.nodes if node.unique_id.startswith("model.")] == [
        ("model.feedback_analytics.build_info", "success")
    ]
    assert result.statuses["success"] >= 1 and "ERROR=0" in result.summary
    assert result.published is not None and result.published.path == serving_path(db)
    with duckdb.connect(str(serving_path(db)), read_only=True) as served:
        assert served.execute("select relations from serving.publish_info").fetchall() == [
            (result.published.relations,)
        ]
        assert (
            served.execute("select as_of_at from marts.build_info").fetchall()[0][0].isoformat()
            == "2026-11-01T23:59:59.999999"
        )


def test_a_failed_build_returns_no_run_results_and_publishes_nothing(
    demo: DemoWarehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = copy_warehouse(demo.db, tmp_path / "copy.duckdb")
    target = tmp_path / "target"
    target.mkdir()
    shutil.copyfile(demo.dbt_target / "run_results.json", target / "run_results.json")  # an earlier run's
    monkeypatch.setenv("DBT_TARGET_PATH", str(target))
    monkeypatch.setenv("DBT_LOG_PATH", str(tmp_path / "logs"))
    result = build_on_target(db, None, ["--select", "no_such_model+", "--no-such-flag"])
    assert not result.ok and result.nodes == () and result.published is None and result.publish_note == ""
