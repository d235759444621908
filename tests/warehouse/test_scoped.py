"""warehouse/scoped.py on a small serving file of hand-written rows: a reader of tenant A sees A's rows of a mart
with a tenant, none of a mart without one (one added later too), the metadata without counts, and nothing of
another schema; a reader of everything reads the file itself."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from warehouse.access import EVERYTHING, NOTHING, Scope
from warehouse.scoped import scoped

READER = Scope.only({"a"})


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    path = tmp_path / "small.serving.duckdb"
    with duckdb.connect(str(path)) as build:
        build.execute(
            """
            create schema marts;
            create schema serving;
            create schema raw;
            create table marts.signals as
                select * from (values ('a', 1), ('b', 2), (null, 3)) as t(tenant, signals);
            create table marts.rates as
                select * from (values ('a', 0.5), ('b', 0.7), ('(all)', 0.6)) as t(tenant_filter, rate);
            create table marts.added_later as select * from (values ('x', 10)) as t(skill_id, events);
            create table marts.build_info as select 'run-1' as invocation_id;
            create table marts.retention_policy_windows as
                select 'p' as policy, 30 as keep_days, 100 as rows_kept, 5 as rows_outside_window;
            create table serving.publish_info as select timestamp '2026-11-01' as last_loaded_at, 'x' as source;
            create table raw.session_feedback as select 'b' as tenant;
            """
        )
    connection = duckdb.connect(":memory:")
    connection.execute(f"attach '{path}' as served (read_only)")
    yield connection
    connection.close()


def values(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


@pytest.mark.parametrize("lazy", [False, True], ids=["every view", "lazy"])
def test_a_tenant_reader_sees_its_rows_and_nothing_else(con: duckdb.DuckDBPyConnection, lazy: bool) -> None:
    with scoped(con, "served", READER, lazy=lazy) as prepare:

        def read(sql: str) -> list[tuple]:
            prepare(sql)
            return values(con, sql)

        assert read("select tenant, signals from marts.signals") == [("a", 1)]
        assert read("select tenant_filter, rate from marts.rates") == [("a", 0.5)]  # no rollup over every tenant
        assert read("select * from marts.added_later") == []  # no tenant column: no rows
        assert read("select * from marts.build_info") == [("run-1",)]
        assert read("select * from marts.retention_policy_windows") == [("p", 30)]  # without the counts
        assert read("select * from serving.publish_info") == [(values(con, "select timestamp '2026-11-01'")[0][0],)]
        for elsewhere in ("raw.session_feedback", "main.signals"):
            with pytest.raises(duckdb.CatalogException):
                read(f"select * from {elsewhere}")
    assert values(con, "select current_database()") == [("memory",)]
    assert [name for (name,) in values(con, "select database_name from duckdb_databases()") if "scoped" in name] == []


def test_nothing_and_everything(con: duckdb.DuckDBPyConnection) -> None:
    with scoped(con, "served", NOTHING) as prepare:
        prepare("select * from information_schema.tables")
        assert values(con, "select count(*) from marts.signals") == [(0,)]
        assert values(con, "select count(*) from marts.rates") == [(0,)]
        listed = values(
            con, "select table_name from information_schema.tables where table_catalog = current_database()"
        )
        assert {name for (name,) in listed} == {
            "signals",
            "rates",
            "added_later",
            "build_info",
            "retention_policy_windows",
            "publish_info",
        }
    with scoped(con, "served", EVERYTHING):
        assert values(con, "select count(*) from marts.signals") == [(3,)]
        assert values(con, "select count(*) from raw.session_feedback") == [(1,)]
