"""Comparing the marts of two warehouse files, built by two engines (tests/operations/test_spark_build.py).

Every relation of the `marts` schema is compared: the same columns, the same
types (a DuckDB JSON column arrives from Spark as text, whose text is
compared), and the same rows in any order, doubles equal within 1e-9. Only
the columns that name or date the build run itself are left out.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb

# the identity of the runs themselves, different on every run whatever the engine: the build's, and the
# purge's that each nightly runs (its rows are compared in every other column)
RUN_COLUMNS = {
    ("build_info", "invocation_id"),
    ("build_info", "built_at"),
    ("retention_purge_log", "purge_id"),
    ("retention_purge_log", "applied_at"),
}
TOLERANCE = 1e-9


def marts(db: Path) -> dict[str, list[tuple[str, str]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "select table_name, column_name, data_type from information_schema.columns "
            "where table_schema = 'marts' order by table_name, ordinal_position"
        ).fetchall()
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        found.setdefault(table, []).append((column, data_type))
    return found


def _rows(db: Path, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
    selected = ", ".join(f'"{column}"' for column in columns)
    with duckdb.connect(str(db), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        rows = con.execute(f'select {selected} from marts."{table}"').fetchall()
    return sorted(rows, key=_sort_key)


def _sort_key(row: tuple[Any, ...]) -> str:
    return repr(tuple(round(value, 6) if isinstance(value, float) else value for value in row))


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, float) or isinstance(right, float):
        if left is None or right is None:
            return left is right
        return math.isclose(float(left), float(right), rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    return left == right


def differences(expected_db: Path, actual_db: Path) -> dict[str, list[str]]:
    """Per mart, what differs between the two files (empty: identical)."""
    expected, actual = marts(expected_db), marts(actual_db)
    found: dict[str, list[str]] = {}
    for table in sorted(set(expected) | set(actual)):
        if table not in actual or table not in expected:
            found[table] = [f"only in {expected_db.name if table in expected else actual_db.name}"]
            continue
        problems = []
        want, got = dict(expected[table]), dict(actual[table])
        if set(want) != set(got):
            problems.append(f"columns {sorted(want)} != {sorted(got)}")
        for column in want.keys() & got.keys():
            if want[column] != got[column] and not (want[column] == "JSON" and got[column] == "VARCHAR"):
                problems.append(f"{column}: type {want[column]} != {got[column]}")
        columns = [column for column, _ in expected[table] if column in got and (table, column) not in RUN_COLUMNS]
        left, right = _rows(expected_db, table, columns), _rows(actual_db, table, columns)
        if len(left) != len(right):
            problems.append(f"{len(left)} rows != {len(right)} rows")
        else:
            for one, other in zip(left, right, strict=True):
                unequal = [c for c, a, b in zip(columns, one, other, strict=True) if not _equal(a, b)]
                if unequal:
                    problems.append(f"row differs in {unequal}: {one} != {other}")
                    break
        if problems:
            found[table] = problems
    return found


def row_counts(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {table: con.execute(f'select count(*) from marts."{table}"').fetchall()[0][0] for table in marts(db)}


def held_rows_not_in(con: duckdb.DuckDBPyConnection, one: str, other: str, table: str) -> int:
    """Rows of the incremental table `table` in the attached file `one` that `other` lacks, every column but
    the bookkeeping of the build that added the row (held_at, held_as_of), duplicates counted."""
    bookkeeping = ", ".join(
        name
        for (name,) in con.execute(
            "select column_name from duckdb_columns() where database_name = ? and schema_name = 'intermediate' "
            "and table_name = ? and column_name in ('held_at', 'held_as_of')",
            [one, table],
        ).fetchall()
    )
    columns = f"* exclude ({bookkeeping})" if bookkeeping else "*"
    (extra,) = con.execute(
        f"select count(*) from (select {columns} from {one}.intermediate.{table} "
        f"except all select {columns} from {other}.intermediate.{table})"
    ).fetchall()[0]
    return extra
