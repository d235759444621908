"""The PostgreSQL test server fixtures work end to end through the ADBC driver
the ingest readers use: a table written over the DSN reads back as Arrow."""

from __future__ import annotations

import datetime as dt

import adbc_driver_postgresql.dbapi as pg_dbapi


def test_round_trip_through_adbc(pg_database: str) -> None:
    with pg_dbapi.connect(pg_database) as conn, conn.cursor() as cur:
        cur.execute(
            """
            create table session_feedback (
                insertion_order bigserial primary key,
                id text not null,
                label text not null check (label in ('positive', 'negative', 'skip')),
                recorded_at timestamptz not null,
                value jsonb
            )
            """
        )
        cur.execute(
            """
            insert into session_feedback (id, label, recorded_at, value) values
                ('a', 'positive', '2026-05-01T12:00:00.123456Z', '{"label": "positive"}'),
                ('b', 'skip', '2026-05-02T08:30:00Z', null)
            """
        )
        conn.commit()

        cur.execute("select insertion_order, id, label, recorded_at from session_feedback order by insertion_order")
        table = cur.fetch_arrow_table()

    assert table.column_names == ["insertion_order", "id", "label", "recorded_at"]
    assert table.num_rows == 2
    rows = table.to_pydict()
    assert rows["insertion_order"] == [1, 2]
    assert rows["id"] == ["a", "b"]
    assert rows["label"] == ["positive", "skip"]
    assert rows["recorded_at"] == [
        dt.datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=dt.UTC),
        dt.datetime(2026, 5, 2, 8, 30, tzinfo=dt.UTC),
    ]


def test_each_test_gets_a_fresh_empty_database(pg_dsn: str, pg_database: str) -> None:
    assert pg_database != pg_dsn
    assert pg_dsn.endswith("/feedback_test")
    with pg_dbapi.connect(pg_database) as conn, conn.cursor() as cur:
        cur.execute(
            "select count(*) from information_schema.tables "
            "where table_schema not in ('pg_catalog', 'information_schema')"
        )
        assert cur.fetchone() == (0,)
