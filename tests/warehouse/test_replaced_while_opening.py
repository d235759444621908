"""A reader opening the serving file while a publish renames a new one in reads one file, never a mix.

DuckDB opens a database file twice by name (its header, then the blocks the header points to; seen with
strace on DuckDB 2.0). A rename landing between the two opens paired the header of one serving file with
the blocks of the other: the CI run of 2026-11-25 failed with "Could not read enough bytes from file
...serving.duckdb" in tests/dashboards/test_apptest.py::test_pages_read_through_publishes, once the
incremental publish made consecutive serving files differ in size. `opened_unreplaced` (warehouse/
connection.py) opens again when the name no longer shows the file held open before the open. Here the
rename is made to land inside the open, deterministically; the end-to-end race is the apptest's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from warehouse.connection import REPLACED_RETRIES, attach_read_only, connect_unreplaced, opened_unreplaced
from warehouse.errors import UserError


def _database(path: Path, version: int, rows: int) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("create table publish_info as select $version as version", {"version": version})
        con.execute("create table padding as select range as n from range($rows)", {"rows": rows})
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Callable[[], None]]:
    """The serving name holding version 1; `replace()` renames a version 2 of another size over it."""
    final = _database(tmp_path / "w.serving.duckdb", 1, 10)
    count = iter(range(2, 100))

    def replace() -> None:
        version = next(count)
        new = _database(tmp_path / f"new-{version}.duckdb", version, 300_000 * version)
        os.replace(new, final)

    return final, replace


def test_a_rename_during_the_attach_attaches_again_and_reads_the_new_file(files) -> None:
    final, replace = files
    con = duckdb.connect(":memory:")
    calls = []
    real_execute = con.execute

    class Connection:  # the attach statement renames the new file in first, the first time only
        def execute(self, sql: str, *args):
            if sql.startswith("attach"):
                calls.append(sql)
                if len(calls) == 1:
                    replace()
            return real_execute(sql, *args)

    attach_read_only(Connection(), final, "served", wait_seconds=1)  # type: ignore[arg-type]
    assert len(calls) == 2, "the attach that overlapped a rename was not done again"
    assert con.execute("select version from served.publish_info").fetchall() == [(2,)]
    attached = [name for (name,) in con.execute("select database_name from duckdb_databases()").fetchall()]
    assert attached.count("served") == 1


def test_an_error_from_a_replaced_file_is_opened_again(files) -> None:
    final, replace = files
    calls = []

    def open_() -> duckdb.DuckDBPyConnection:
        calls.append(1)
        if len(calls) == 1:
            replace()
            raise duckdb.IOException('Could not read enough bytes from file "w.serving.duckdb"')
        return duckdb.connect(str(final), read_only=True)

    con = opened_unreplaced(final, open_, lambda c: c.close())
    assert len(calls) == 2
    assert con.execute("select version from publish_info").fetchall() == [(2,)]


def test_an_error_from_the_file_itself_is_raised_once(files) -> None:
    final, _ = files
    calls = []

    def open_() -> duckdb.DuckDBPyConnection:
        calls.append(1)
        raise duckdb.IOException("the file's own error")

    with pytest.raises(duckdb.IOException, match="the file's own error"):
        opened_unreplaced(final, open_, lambda c: c.close())
    assert len(calls) == 1


def test_a_file_replaced_during_every_open_is_a_one_line_error(files) -> None:
    final, replace = files
    closed = []

    def open_() -> duckdb.DuckDBPyConnection:
        replace()
        return duckdb.connect(":memory:")

    with pytest.raises(UserError, match=r"replaced while it opened, \d+ times in a row") as raised:
        opened_unreplaced(final, open_, lambda c: closed.append(c.close()))
    assert "\n" not in str(raised.value)
    assert len(closed) == REPLACED_RETRIES, "an open of a replaced file was left open"


def test_no_file_gives_duckdbs_own_error(tmp_path: Path) -> None:
    missing = tmp_path / "none.serving.duckdb"
    with pytest.raises(duckdb.IOException):
        opened_unreplaced(missing, lambda: duckdb.connect(str(missing), read_only=True), lambda c: c.close())


def test_a_fifo_at_the_name_does_not_hang_the_reader(tmp_path: Path) -> None:
    """A FIFO planted at the serving file's name: holding it open must not wait for a writer (DuckDB then says
    what it makes of it)."""
    planted = tmp_path / "w.serving.duckdb"
    os.mkfifo(planted)
    answers: list[str] = []
    opener = threading.Thread(target=lambda: answers.append(opened_unreplaced(planted, lambda: "opened", print)))
    opener.start()
    opener.join(timeout=10)
    if opener.is_alive():  # unblock the thread before failing, or pytest waits for it too
        os.close(os.open(planted, os.O_WRONLY | os.O_NONBLOCK))
        opener.join()
        pytest.fail("holding the FIFO open waited for a writer")
    assert answers == ["opened"]


def test_connect_unreplaced_reads_the_file_behind_the_name(files) -> None:
    final, replace = files
    replace()
    with connect_unreplaced(final) as con:
        assert con.execute("select version from publish_info").fetchall() == [(2,)]
