"""The serving file (operations/serving.py): what the dashboard reads, published atomically after a build.

On copies of the dashboard tests' demo warehouse (built once per session by the real command line).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from operations.serving import SERVING_VIEW, TEMPORARY_MARK, publish
from tests.support.dashboard import ROOT, DemoWarehouse, copy_warehouse, demo_or_fail, marts_relations
from warehouse.location import serving_path

pytestmark = pytest.mark.slow
PUBLISH = "from pathlib import Path; from operations.serving import publish; publish(Path({db!r}))"


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoWarehouse:
    return demo_or_fail(tmp_path_factory.getbasetemp())


def test_the_build_published_every_mart_and_view_row_for_row(demo: DemoWarehouse) -> None:
    """Every relation of the marts schema (marts, stored and retained views) is in the serving file with the same
    columns, types and rows; the retained views that read only a stored view stay views over its published copy,
    every other relation is a table. The status row says where and when data came from."""
    with duckdb.connect() as con:
        con.execute(f"attach '{demo.db}' as w (read_only)")
        con.execute(f"attach '{serving_path(demo.db)}' as s (read_only)")
        built, served = marts_relations(con, "w"), marts_relations(con, "s")
        assert sorted(served) == sorted(built) and len(served) > 40
        assert {name for name, kind in served.items() if kind == "VIEW"} == {
            "retained_analyzer_events",
            "retained_turn_reactions",
        }
        assert {built[name] for name in served} == {"BASE TABLE", "VIEW"}
        for name in served:
            columns = "select column_name, data_type from information_schema.columns where table_catalog = ? and "
            columns += "table_schema = 'marts' and table_name = ? order by ordinal_position"
            assert con.execute(columns, ["w", name]).fetchall() == con.execute(columns, ["s", name]).fetchall()
            for one, other in (("w", "s"), ("s", "w")):
                (missing,) = con.execute(
                    f'select count(*) from (from {one}.marts."{name}" except all from {other}.marts."{name}")'
                ).fetchall()[0]
                assert missing == 0, f"{name}: {missing} row(s) of {one} not in {other}"
        info = con.execute("select warehouse, engine, last_loaded_at, relations from s.serving.publish_info").fetchall()
        (last_loaded,) = con.execute("select max(finished_at) from w.raw.load_manifest").fetchall()[0]
    assert info == [(str(demo.db.resolve()), "duckdb", last_loaded, len(served))]


def test_the_views_kept_as_views_read_the_serving_file_alone(demo: DemoWarehouse, tmp_path: Path) -> None:
    """A retained view kept as a view opens from a copy of the serving file far from its warehouse, attached under
    any name (its SQL names `marts.<relation>`, resolved in its own file)."""
    alone = tmp_path / "elsewhere.duckdb"
    alone.write_bytes(serving_path(demo.db).read_bytes())
    with duckdb.connect() as con:
        con.execute(f"attach '{alone}' as another_name (read_only)")
        for name in ("retained_analyzer_events", "retained_turn_reactions"):
            (rows,) = con.execute(f"select count(*) from another_name.marts.{name}").fetchall()[0]
            (stored,) = con.execute(
                f"select count(*) from another_name.marts.{name.replace('retained', 'stored')} where is_retained"
            ).fetchall()[0]
            assert rows == stored > 0


def test_the_exposures_name_every_mart_the_dashboard_code_reads() -> None:
    """models/exposures.yml declares what each page reads: every `marts.<name>` that dashboards/ reads is
    declared there, and nothing declared goes unread."""
    declared = yaml.safe_load((ROOT / "models" / "exposures.yml").read_text())["exposures"]
    refs = {item.split("'")[1] for exposure in declared for item in exposure.get("depends_on", []) if "ref(" in item}
    read = {
        match
        for path in (ROOT / "dashboards").rglob("*.py")
        for match in re.findall(r"\bmarts\.([a-z_]+)", path.read_text())
    }
    assert read and read == refs


def test_the_exposures_name_no_source_the_dashboard_code_does_not_read() -> None:
    """A `source(...)` in models/exposures.yml is a raw table that dashboards/ reads as `raw.<name>`; the pages
    read the serving file, which holds no raw table (the last ingest comes from serving.publish_info)."""
    declared = yaml.safe_load((ROOT / "models" / "exposures.yml").read_text())["exposures"]
    sources = {item.split("'")[3] for exposure in declared for item in exposure["depends_on"] if "source(" in item}
    read = {
        match
        for path in (ROOT / "dashboards").rglob("*.py")
        for match in re.findall(r"\braw\.([a-z_]+)", path.read_text())
    }
    assert sources == read


def test_a_killed_publish_leaves_the_old_serving_file(demo: DemoWarehouse, tmp_path: Path) -> None:
    """Killed after the new file is written and flushed, before the rename: the old serving file is intact
    (same bytes), and the next publish removes the dead one's temporary file."""
    db = copy_warehouse(demo.db, tmp_path / "killed.duckdb")
    served = serving_path(db)
    old_bytes = served.read_bytes()
    with duckdb.connect(str(db)) as con:  # a change the killed publish would have carried
        con.execute("delete from marts.build_info")
    publisher = subprocess.Popen(
        [sys.executable, "-c", PUBLISH.format(db=str(db))],
        cwd=ROOT,
        env={**os.environ, "FEEDBACK_PAUSE_AT": "publish-before-rename"},
    )
    try:
        _, status = os.waitpid(publisher.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), "the publish ended before its pause point"
        leftovers = list(tmp_path.glob(f"{served.name}{TEMPORARY_MARK}*"))
        assert len(leftovers) == 1 and (leftovers[0] / served.name).is_file(), leftovers  # its staging folder
    finally:
        os.kill(publisher.pid, signal.SIGKILL)
        publisher.wait()
    assert served.read_bytes() == old_bytes, "the killed publish touched the serving file"
    with duckdb.connect(str(served), read_only=True) as con:
        assert con.execute("select count(*) from marts.build_info").fetchall() == [(1,)]
    done = publish(db)
    assert done.path == served and not list(tmp_path.glob(f"{served.name}{TEMPORARY_MARK}*"))
    with duckdb.connect(str(served), read_only=True) as con:
        assert con.execute("select count(*) from marts.build_info").fetchall() == [(0,)]


def test_a_failed_build_publishes_nothing(demo: DemoWarehouse, tmp_path: Path) -> None:
    """dbt fails (a raw table is gone): the command fails and the serving file is the one published before."""
    db = copy_warehouse(demo.db, tmp_path / "failing.duckdb")
    served = serving_path(db)
    before = (served.stat().st_ino, served.stat().st_mtime_ns, served.read_bytes())
    with duckdb.connect(str(db)) as con:
        con.execute("drop table raw.workspace_eval_runs")
    build = subprocess.run(
        [sys.executable, "-m", "cli", "build", "--db", str(db), "--as-of", "2026-11-01"],
        cwd=ROOT,
        env={**demo.env(db), "DBT_TARGET_PATH": str(tmp_path / "target"), "DBT_LOG_PATH": str(tmp_path / "logs")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 1, build.stdout[-2000:] + build.stderr[-2000:]
    assert "dbt build failed" in build.stderr and "published" not in build.stdout
    assert (served.stat().st_ino, served.stat().st_mtime_ns, served.read_bytes()) == before


def test_a_build_with_the_target_left_for_mf_builds_the_warehouse(demo: DemoWarehouse, tmp_path: Path) -> None:
    """FEEDBACK_DBT_TARGET=serving, exported for `mf` (docs/metrics.md), does not send the command line's dbt to
    the read-only serving target: the build names its target (dev), writes the warehouse and publishes."""
    db = copy_warehouse(demo.db, tmp_path / "left.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("delete from marts.build_info")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "build",
            "--db",
            str(db),
            "--as-of",
            "2026-11-01",
            "--",
            "--select",
            "build_info",
        ],
        cwd=ROOT,
        env={
            **demo.env(db),
            "FEEDBACK_DBT_TARGET": "serving",
            "DBT_TARGET_PATH": str(tmp_path / "target"),
            "DBT_LOG_PATH": str(tmp_path / "logs"),
        },
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    for path in (db, serving_path(db)):
        with duckdb.connect(str(path), read_only=True) as con:
            assert con.execute("select count(*) from marts.build_info").fetchall() == [(1,)], path


def test_flagged_views_are_kept_over_published_marts_only_and_leftovers_stay_out(tmp_path: Path) -> None:
    """A view flagged SERVING_VIEW (the comment the post-hook writes for `meta: {serving: view}`) over published
    marts stays a view (a flagged view over it too); a view without the flag becomes a table of its rows, even
    over published marts; a flagged one that reads another schema too. A relation no marts model builds (left by
    a removed model, here over a dropped table) is not published and does not stop the publish. Only copied rows
    are counted."""
    db = tmp_path / "views.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema marts; create schema intermediate")
        con.execute("create table intermediate.events as select range as n from range(5)")
        con.execute("create table intermediate.dropped as select 1 as n")
        con.execute("create table marts.base as select range as n, range % 2 = 0 as is_even from range(10)")
        con.execute("create view marts.evens as select n from marts.base where is_even")
        con.execute("create view marts.small_evens as select n from marts.evens where n < 5")
        con.execute("create view marts.unflagged as select n from marts.base where n < 3")
        con.execute("create view marts.from_elsewhere as select n from intermediate.events")
        con.execute("create view marts.leftover as select n from intermediate.dropped")
        for name in ("evens", "small_evens", "from_elsewhere", "leftover"):
            con.execute(f"comment on view marts.{name} is '{SERVING_VIEW}'")
        con.execute("drop table intermediate.dropped")
    done = publish(db, marts={"base", "evens", "small_evens", "unflagged", "from_elsewhere"})
    assert (done.relations, done.rows) == (5, 10 + 3 + 5)
    with duckdb.connect(str(serving_path(db)), read_only=True) as con:
        (catalog,) = con.execute("select current_database()").fetchall()[0]
        assert marts_relations(con, catalog) == {
            "base": "BASE TABLE",
            "evens": "VIEW",
            "small_evens": "VIEW",
            "unflagged": "BASE TABLE",
            "from_elsewhere": "BASE TABLE",
        }
        assert con.execute("select list(n order by n) from marts.small_evens").fetchall() == [([0, 2, 4],)]
        assert con.execute("select count(*) from marts.from_elsewhere").fetchall() == [(5,)]


def test_the_post_hook_writes_the_flag_the_publish_reads() -> None:
    """The comment macros/publish/serving_view.sql writes is SERVING_VIEW, every mart runs it, and the two
    retained views read by `stored_*` alone carry the flag (the demo build above keeps them views)."""
    macro = (ROOT / "macros" / "publish" / "serving_view.sql").read_text(encoding="utf-8")
    assert f"is '{SERVING_VIEW}'" in macro
    marts = yaml.safe_load((ROOT / "dbt_project.yml").read_text(encoding="utf-8"))["models"]["feedback_analytics"]
    assert marts["marts"]["+post-hook"] == "{{ serving_view_comment() }}"
    retention = marts["marts"]["retention"]
    for name in ("retained_analyzer_events", "retained_turn_reactions"):
        assert retention[name]["+meta"] == {"serving": "view"}


def test_a_warehouse_without_marts_publishes_nothing(tmp_path: Path) -> None:
    """A build of a selection without marts: nothing to publish, no serving file, no temporary file left."""
    db = tmp_path / "bare.duckdb"
    duckdb.connect(str(db)).close()
    assert publish(db).relations == 0
    assert not serving_path(db).exists() and not list(tmp_path.glob(f"*{TEMPORARY_MARK}*"))
