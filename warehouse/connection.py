"""Opening the warehouse: for writing, read-only, or attached read-only to an existing DuckDB.

DuckDB lets one process write a file and no other process read it meanwhile.
Every way in goes through one loop (`wait_out_lock`) that retries while
another process holds the file: commands wait up to FEEDBACK_LOCK_WAIT_SECONDS
(default 120) and say once what they wait for; the dashboard waits briefly
and tells the reader the warehouse is being written.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import duckdb

from warehouse.errors import UserError, WarehouseLocked
from warehouse.location import Warehouse, refuse_what_is_no_warehouse
from warehouse.private_files import folder_mode, made_private, make_folder
from warehouse.raw_tables import ensure_raw_schema, missing_raw_tables
from warehouse.sql import quote, sql_literal

# DuckDB spills to disk beyond this, so a big load keeps a flat memory profile
DEFAULT_MEMORY_LIMIT = "1GB"
# dbt's during `build` and the nightly (profiles.yml says the same): the build's window and join steps over
# history-long tables spill less with more, and stay under an 8 GB budget with 6GB (docs/operations.md)
BUILD_MEMORY_LIMIT = "6GB"
DEFAULT_LOCK_WAIT_SECONDS = 120
# what FEEDBACK_MEMORY_LIMIT may be: a size (DuckDB's units) or a share of the machine's memory
_MEMORY_SIZE = re.compile(r"(?P<number>\d{1,9}(?:\.\d{1,6})?)\s?(?P<unit>[KMGT]i?B|B|%)", re.IGNORECASE)
_UNIT_BYTES = {"b": 1, **{f"{p}b": 1000 ** (i + 1) for i, p in enumerate("kmgt")}}
_UNIT_BYTES |= {f"{p}ib": 1024 ** (i + 1) for i, p in enumerate("kmgt")}
LEAST_MEMORY_BYTES = 64 * 1024**2  # below this DuckDB cannot even open the warehouse

T = TypeVar("T")


def lock_wait_seconds() -> float:
    """FEEDBACK_LOCK_WAIT_SECONDS: a number of seconds, 0 or more (default 120)."""
    text = os.environ.get("FEEDBACK_LOCK_WAIT_SECONDS", str(DEFAULT_LOCK_WAIT_SECONDS))
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise UserError(
            f"FEEDBACK_LOCK_WAIT_SECONDS={text[:40]!r} is not a number of seconds: set it to e.g. 120, or unset it"
        )
    return seconds


def memory_limit(default: str = DEFAULT_MEMORY_LIMIT) -> str:
    """FEEDBACK_MEMORY_LIMIT (unset: `default`, 1GB; the build's is BUILD_MEMORY_LIMIT), checked before it
    reaches SQL: a size such as 1GB, 1.5 GiB or 512MiB (at least 64 MiB), or a share of the machine's memory
    such as 50%."""
    text = os.environ.get("FEEDBACK_MEMORY_LIMIT", default)
    match = _MEMORY_SIZE.fullmatch(text.strip())
    if match:
        number, unit = float(match["number"]), match["unit"].lower()
        if (0 < number <= 100) if unit == "%" else number * _UNIT_BYTES[unit] >= LEAST_MEMORY_BYTES:
            return f"{match['number']}{match['unit']}"
    raise UserError(
        f"FEEDBACK_MEMORY_LIMIT={text[:40]!r} is not a memory limit: set it to a size such as 1GB or 512MiB "
        "(at least 64MiB) or a share such as 50%, or unset it (default 1GB)"
    )


def wait_out_lock(open_: Callable[[], T], path: Path, *, wait_seconds: float, announce: bool = True) -> T:
    """`open_()`, retried while another process holds the file's lock, for at most `wait_seconds`.

    Any other I/O error, and a lock held past the wait, become one-line errors
    (UserError, WarehouseLocked). With `announce`, the first wait is said once on
    stderr: what holds the file (its pid when DuckDB names it) and how long we wait."""
    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    said = False
    while True:
        try:
            return open_()
        except duckdb.IOException as exc:
            first = str(exc).splitlines()[0]
            if "lock" not in first.lower():
                raise UserError(f"cannot open warehouse {path}: {first}") from None
            if announce and not said:
                holder = re.search(r"\(PID (\d+)\)", first)
                print(
                    f"waiting for warehouse {path}: another process"
                    + (f" (pid {holder[1]})" if holder else "")
                    + f" is using it; waiting up to {wait_seconds:g} s (FEEDBACK_LOCK_WAIT_SECONDS)",
                    file=sys.stderr,
                    flush=True,
                )
                said = True
            if time.monotonic() >= deadline:
                raise WarehouseLocked(
                    f"cannot open warehouse {path}: {first} (another process is using it; wait for it to finish)"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


REPLACED_RETRIES = 5  # a publish takes seconds: a rename during each of this many opens in a row is not a race


def opened_unreplaced(path: Path, open_: Callable[[], T], close: Callable[[T], None]) -> T:
    """`open_()` (a read-only DuckDB connect or attach of `path`), done again when a rename replaced the file
    while it ran. DuckDB opens a database file twice, each time by name: once for its header, once for the
    blocks the header points to. A publish renaming a new serving file in between would pair one file's header
    with the other's blocks ("Could not read enough bytes", or blocks that are not the header's). The file held
    open here keeps its inode number from being reused, so the name showing that same inode after `open_()`
    proves both of DuckDB's opens read this one file. `close(opened)` undoes an open that did not."""
    for _ in range(REPLACED_RETRIES):
        try:  # not blocking: a FIFO planted at the name must not hang the reader here
            held = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return open_()  # missing or unreadable: DuckDB says so, in the caller's words
        try:
            before = os.fstat(held)
            try:
                opened = open_()
            except (duckdb.Error, UserError):
                if _same_file(path, before):
                    raise
                continue  # the error came from a replaced file: open the new one
            if _same_file(path, before):
                return opened
            close(opened)
        finally:
            os.close(held)
    raise UserError(f"cannot open {path}: it was replaced while it opened, {REPLACED_RETRIES} times in a row")


def connect_unreplaced(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only DuckDB connection to the database file `path`, which a publish may rename a new file over."""
    return opened_unreplaced(path, lambda: duckdb.connect(str(path), read_only=True), lambda con: con.close())


def _same_file(path: Path, before: os.stat_result) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (before.st_dev, before.st_ino)


def _refuse_missing(path: Path, first: str) -> None:
    """One line for a warehouse file that is not there: `first` says what makes one."""
    if not path.exists():
        raise UserError(
            f"warehouse {path} does not exist: run {first} (or `make demo`) first, or point --db / FEEDBACK_DB at it"
        )


def spill_folder(warehouse: Path) -> Path:
    """`<warehouse>.tmp/` (DuckDB's own default place), created if missing and kept the owner's only (0700,
    warehouse/private_files.py): where DuckDB spills what exceeds FEEDBACK_MEMORY_LIMIT, rows of feedback."""
    folder = warehouse.with_name(warehouse.name + ".tmp")
    if folder.is_symlink():
        raise UserError(f"{folder} is a symlink: refusing to spill through it; remove it (the folder is made anew)")
    make_folder(folder)
    if folder.stat().st_uid == os.getuid():
        os.chmod(folder, folder.stat().st_mode & folder_mode() & 0o777)
    return folder


def limit_memory(con: duckdb.DuckDBPyConnection, warehouse: Path | None) -> None:
    """FEEDBACK_MEMORY_LIMIT on `con`, spilling beyond it into `warehouse`'s private spill folder (None, or a
    folder this user cannot create: DuckDB's default)."""
    con.execute(f"set memory_limit = {sql_literal(memory_limit())}")
    if warehouse is None:
        return
    try:
        folder = str(spill_folder(warehouse))
    except OSError:
        return  # a read-only place: reading needs no spill folder of ours
    # a file's own default is this folder already; DuckDB refuses to switch a folder once used (one instance per
    # file and process)
    if con.execute("select current_setting('temp_directory')").fetchone() != (folder,):
        con.execute(f"set temp_directory = {sql_literal(folder)}")


def _configure(con: duckdb.DuckDBPyConnection, warehouse: Path) -> None:
    """What every connection of ours sets: UTC (raw timestamps are naive UTC), the memory limit and where to
    spill beyond it."""
    con.execute("set TimeZone = 'UTC'")
    limit_memory(con, warehouse)


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse file `path` (creating it and the raw schema unless read-only)."""
    if read_only:
        _refuse_missing(path, "`feedback-analytics ingest ...`")
    if not read_only and path.parent and not path.parent.exists():
        raise UserError(f"folder {path.parent} for the warehouse does not exist: create it first")
    refuse_what_is_no_warehouse(path)
    new = not read_only and not path.exists()
    con = wait_out_lock(lambda: duckdb.connect(str(path), read_only=read_only), path, wait_seconds=lock_wait_seconds())
    _configure(con, path)
    if not read_only:
        ensure_raw_schema(con)
        if new:  # the owner's only, also when a library caller never set the umask (warehouse/private_files.py)
            made_private(path)
        return con
    missing = missing_raw_tables(con)
    if missing:  # read-only commands (dry runs, listings) cannot create them: say so in one line
        con.close()
        raise UserError(
            f"warehouse {path} has no raw.{missing[0]}: load data into it with `feedback-analytics ingest ...` "
            "first (a file from an older version gets the new tables from any ingest or purge)"
        )
    return con


def connect_serving(warehouse: Warehouse, *, attached: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the serving file of `warehouse` read-only (what the last successful build published;
    operations/serving.py), in UTC: for readers of marts, which never open the warehouse file itself. A
    publish renames a new file over it; this connection keeps reading the one it opened. `attached`: an
    in-memory DuckDB with the file attached read-only as its default database (`serving_file`), so the reader
    can add a catalog of its own beside it (warehouse/scoped.py)."""
    _refuse_missing(warehouse.path, "`feedback-analytics ingest ...` and `build`")
    refuse_what_is_no_warehouse(warehouse.path)
    serving = warehouse.serving
    if not serving.is_file():
        raise UserError(
            f"no serving file {serving}: the warehouse was never built (or only by an older version); "
            "run `feedback-analytics build` first"
        )
    try:
        con = opened_unreplaced(serving, lambda: _open_serving(serving, attached), lambda con: con.close())
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        raise UserError(f"cannot read the serving file {serving}: {first}") from None
    _configure(con, warehouse.path)
    return con


def _open_serving(serving: Path, attached: bool) -> duckdb.DuckDBPyConnection:
    if not attached:
        return duckdb.connect(str(serving), read_only=True)
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"attach {sql_literal(str(serving))} as serving_file (read_only)")
        con.execute("use serving_file")
    except duckdb.Error:
        con.close()
        raise
    return con


def attach_read_only(con: duckdb.DuckDBPyConnection, path: Path, alias: str, *, wait_seconds: float) -> None:
    """Attach the warehouse file read-only to `con` as `alias` (no announcement: the caller reports a wait),
    again if a publish renamed a new file in while it opened (`opened_unreplaced`)."""
    opened_unreplaced(
        path,
        lambda: wait_out_lock(
            lambda: con.execute(f"attach {sql_literal(str(path))} as {quote(alias)} (read_only)"),
            path,
            wait_seconds=wait_seconds,
            announce=False,
        ),
        lambda _: con.execute(f"detach {quote(alias)}"),
    )


def wait_until_writable(path: Path) -> None:
    """Return once this process could open the warehouse file `path` for writing (e.g. before handing it to dbt)."""
    if path.exists():
        wait_out_lock(lambda: duckdb.connect(str(path)), path, wait_seconds=lock_wait_seconds()).close()
