"""Which marts views the publish keeps as views (operations/serving.py): the ones whose comment is SERVING_VIEW,
the flag the post-hook macros/publish/serving_view.sql writes for `meta: {serving: view}`; every other view is
copied as a table of its rows, whatever it reads.

A small warehouse written by hand (the dbt side: tests/operations/test_serving.py on the demo build)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from operations.serving import SERVING_VIEW, publish
from tests.support.dashboard import ROOT
from warehouse.location import serving_path


def served_kinds(db: Path) -> dict[str, str]:
    with duckdb.connect(str(serving_path(db)), read_only=True) as con:
        return dict(
            con.execute(
                "select table_name, table_type from information_schema.tables where table_schema = 'marts'"
            ).fetchall()
        )


def test_only_a_flagged_view_stays_a_view(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema marts")
        con.execute("create schema intermediate")
        con.execute("create table intermediate.numbers as select range as n from range(5)")
        con.execute("create table marts.counted as select * from intermediate.numbers")
        # flagged, reading a published mart: a view over its published copy
        con.execute("create view marts.flagged as select n from marts.counted where n > 1")
        con.execute(f"comment on view marts.flagged is '{SERVING_VIEW}'")
        # not flagged, though it reads only a published mart: its rows
        con.execute("create view marts.plain as select n from marts.counted where n > 2")
        # flagged, but what it reads is not published: its rows
        con.execute("create view marts.flagged_elsewhere as select n from intermediate.numbers")
        con.execute(f"comment on view marts.flagged_elsewhere is '{SERVING_VIEW}'")
    published = publish(db, marts={"counted", "flagged", "plain", "flagged_elsewhere"})
    assert published.relations == 4
    assert served_kinds(db) == {
        "counted": "BASE TABLE",
        "flagged": "VIEW",
        "plain": "BASE TABLE",
        "flagged_elsewhere": "BASE TABLE",
    }
    with duckdb.connect(str(serving_path(db)), read_only=True) as con:
        counts = {
            name: con.execute(f"select count(*) from marts.{name}").fetchall()[0][0]
            for name in ("flagged", "plain", "flagged_elsewhere")
        }
    assert counts == {"flagged": 3, "plain": 2, "flagged_elsewhere": 5}


def test_the_post_hook_writes_the_flag_the_publish_reads() -> None:
    """The comment the macro writes is SERVING_VIEW, and the models published as views carry the flag."""
    macro = (ROOT / "macros" / "publish" / "serving_view.sql").read_text(encoding="utf-8")
    assert f"is '{SERVING_VIEW}'" in macro
    project = (ROOT / "dbt_project.yml").read_text(encoding="utf-8")
    assert '+post-hook: "{{ serving_view_comment() }}"' in project
    for name in ("retained_analyzer_events", "retained_turn_reactions"):
        assert f"{name}:\n          +meta: {{serving: view}}" in project
