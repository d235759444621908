"""The raw tables come from the source contracts: every field a column of its kind's type, `not null` exactly
where the contract demands a value, lineage columns after them; an older warehouse gets the missing columns."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from warehouse.connection import connect
from warehouse.contracts import CONTRACTS, SESSION_FEEDBACK
from warehouse.raw_tables import BOOKKEEPING_TABLES, DATA_TABLES, RAW_TABLES, ensure_raw_schema

KIND_TYPES = {  # DuckDB's names for the types, as information_schema reports them
    "string": "VARCHAR",
    "int": "BIGINT",
    "float": "DOUBLE",
    "timestamp": "TIMESTAMP",
    "date": "DATE",
    "string_list": "VARCHAR[]",
    "json": "JSON",
}


def columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str, str]]:
    return con.execute(
        "select column_name, data_type, is_nullable from information_schema.columns "
        "where table_schema = 'raw' and table_name = ? order by ordinal_position",
        [table],
    ).fetchall()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("raw") / "feedback.duckdb"
    connect(db).close()
    return db


def test_one_raw_table_per_contract_and_the_bookkeeping_tables(warehouse: Path) -> None:
    assert list(DATA_TABLES) == [contract.table for contract in CONTRACTS]
    assert set(RAW_TABLES) == set(DATA_TABLES) | {
        "quarantine",
        "load_manifest",
        "purge_log",
        "erasure_log",
        "nightly_runs",
        "alert_notifications",
    }
    with duckdb.connect(str(warehouse), read_only=True) as con:
        found = {row[0] for row in con.execute("select table_name from information_schema.tables").fetchall()}
    assert set(RAW_TABLES) <= found


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.table)
def test_a_contract_is_its_raw_table(contract, warehouse: Path) -> None:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        actual = columns(con, contract.table)
    expected = [
        (
            field.name,
            "INTEGER" if field.storage_type == "integer" else KIND_TYPES[field.kind],
            "NO" if (field.required and not field.empty_is_null) or field.default_sql is not None else "YES",
        )
        for field in contract.fields
    ] + [("_source_uri", "VARCHAR", "NO"), ("_loaded_at", "TIMESTAMP", "NO"), ("_load_id", "VARCHAR", "NO")]
    if contract.table == "reaction_index":  # what a later load learns: the row was found gone from the index
        expected += [("_removed_at", "TIMESTAMP", "YES"), ("_removed_by_load", "VARCHAR", "YES")]
    assert actual == expected


def test_the_session_schema_version_keeps_its_integer_type(warehouse: Path) -> None:
    """The one field stored in another type than its kind's: upstream's `schema_version` is an INTEGER."""
    assert [f.name for f in SESSION_FEEDBACK.fields if f.storage_type] == ["schema_version"]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert ("schema_version", "INTEGER", "NO") in columns(con, "session_feedback")


def test_an_older_warehouse_gets_the_columns_added_since(tmp_path: Path) -> None:
    """A warehouse from before `rows_deleted_from_archive` and a contract field: both are added, nullable (the
    old rows have no value), and the rows stay."""
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema raw")
        con.execute(
            "create table raw.purge_log (purge_id varchar not null, policy varchar not null, table_name varchar "
            "not null, cutoff timestamp, rows_archived bigint not null, rows_deleted bigint not null, applied_at "
            "timestamp not null, is_dry_run boolean not null, archive_uri varchar)"
        )
        con.execute("insert into raw.purge_log values ('p', 'x', 't', null, 1, 2, now(), false, null)")
        con.execute(
            "create table raw.analyzer_events (event_id varchar not null, timestamp timestamp not null, "
            "skill_id varchar not null, outcome varchar not null, _source_uri varchar not null, "
            "_loaded_at timestamp not null, _load_id varchar not null)"
        )
        ensure_raw_schema(con)
        purge_log = columns(con, "purge_log")
        analyzer = {name: nullable for name, _, nullable in columns(con, "analyzer_events")}
        assert con.execute("select count(*) from raw.purge_log").fetchall() == [(1,)]
    assert purge_log[-1] == ("rows_deleted_from_archive", "BIGINT", "YES")
    assert [name for name, _, _ in purge_log] == [c.name for c in BOOKKEEPING_TABLES["purge_log"]]
    assert analyzer["dimension_hint"] == "YES" and analyzer["event_id"] == "NO"
    assert set(analyzer) == {c.name for c in DATA_TABLES["analyzer_events"]}


def test_an_older_warehouse_takes_undated_analyzer_events(tmp_path: Path) -> None:
    """Before undated events landed, raw.analyzer_events.timestamp was `not null`: the old warehouse loses that
    constraint (its rows stay) and takes an event whose timestamp the analyzer left empty."""
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema raw")
        con.execute(
            "create table raw.analyzer_events (event_id varchar not null, timestamp timestamp not null, "
            "skill_id varchar not null, outcome varchar not null, _source_uri varchar not null, "
            "_loaded_at timestamp not null, _load_id varchar not null)"
        )
        con.execute("insert into raw.analyzer_events values ('e1', '2026-05-01', 's', 'correction', 'f', now(), 'l')")
    connect(db).close()  # what every command that writes does first
    with duckdb.connect(str(db)) as con:
        nullable = {name: null for name, _, null in columns(con, "analyzer_events")}
        con.execute(
            "insert into raw.analyzer_events (event_id, skill_id, outcome, _source_uri, _loaded_at, _load_id) "
            "values ('u1', 's', 'acceptance', 'f', now(), 'l')"
        )
        stored = con.execute("select event_id, timestamp from raw.analyzer_events order by 1").fetchall()
    assert nullable["timestamp"] == "YES" and nullable["event_id"] == "NO"
    assert [(event, ts is None) for event, ts in stored] == [("e1", False), ("u1", True)]
