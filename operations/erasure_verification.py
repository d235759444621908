"""Step 4 of `forget` (operations/erasure.py): rows still carrying the erased id, found independently.

Every text, JSON, list and blob column of every table, and every archive
file, is decoded again in Python (the json module, `re`, pyarrow) rather than
with the SQL that erased.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from operations.erasure import ARCHIVED_TABLE, FREE_TEXT_COLUMNS, ID_CHARACTERS_PY, NUMBER_PATTERN, USER_COLUMNS
from warehouse.connection import connect, connect_unreplaced, limit_memory
from warehouse.location import Warehouse
from warehouse.raw_tables import DATA_TABLES
from warehouse.sql import quote


class _Finder:
    """Does a value carry one of the ids? Python's json module and `re`, not DuckDB."""

    def __init__(self, user_ids: list[str]) -> None:
        self.user_ids = set(user_ids)
        self.numbers = {Decimal(user_id) for user_id in user_ids if NUMBER_PATTERN.fullmatch(user_id)}
        alternation = "|".join(re.escape(user_id) for user_id in sorted(user_ids, key=len, reverse=True))
        self.word = re.compile(rf"(?<![{ID_CHARACTERS_PY}])(?:{alternation})(?![{ID_CHARACTERS_PY}])")
        self.values = pa.array(sorted(user_ids), pa.large_string())
        self.substring = "|".join(  # a prefilter for pyarrow's RE2: the ids as substrings, spelled with escapes
            "".join(ch if ch.isascii() and ch.isalnum() else f"\\x{{{ord(ch):x}}}" for ch in user_id)
            for user_id in user_ids
        )
        self.literal = re.compile(r'"((?:[^"\\]|\\.)*)(?:"|$)')

    def _number_is_id(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            return False
        if str(value) in self.user_ids:
            return True
        try:
            return Decimal(value) in self.numbers
        except (InvalidOperation, ValueError):
            return False

    def in_json(self, document: Any) -> bool:
        stack = [document]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if any(self.word.search(key) for key in item):
                    return True
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, str):
                if self.word.search(item):
                    return True
            elif self._number_is_id(item):
                return True
        return False

    def in_line(self, text: str) -> bool:
        """A line or document: decoded as JSON when it parses, else its text and decoded string literals."""
        try:
            return self.in_json(json.loads(text, parse_float=Decimal))
        except ValueError:
            pass
        if self.word.search(text):
            return True
        for match in self.literal.finditer(text):
            try:
                if self.word.search(json.loads(f'"{match[1]}"')):
                    return True
            except ValueError:
                continue
        return False

    def in_free_text(self, text: str) -> bool:
        return bool(self.word.search(text))


def _text(array: pa.Array) -> pa.Array:
    return array.cast(pa.large_string()) if pa.types.is_dictionary(array.type) else array


def _rows_carrying(finder: _Finder, array: pa.Array, rule: str) -> int:
    """How many values of one column carry the id under `rule` (value, free_text, document, bytes, list)."""
    if rule == "value":
        return int(pc.sum(pc.is_in(_text(array), value_set=finder.values)).as_py() or 0)
    if rule == "list":
        flat = pc.list_flatten(array)
        hits = pc.filter(
            pc.list_parent_indices(array), pc.fill_null(pc.is_in(_text(flat), value_set=finder.values), False)
        )
        return len(pc.unique(hits))
    if rule == "free_text":
        candidates = pc.filter(array, pc.fill_null(pc.match_substring_regex(_text(array), finder.substring), False))
        return sum(finder.in_free_text(value) for value in candidates.to_pylist())
    if rule == "document":
        return sum(value is not None and finder.in_line(value) for value in array.to_pylist())
    if rule == "bytes":
        return sum(
            value is not None and finder.in_line(value.decode("utf-8", "replace")) for value in array.to_pylist()
        )
    raise ValueError(rule)


def _rule(schema: str, table: str, column: str, data_type: str) -> str | None:
    if data_type == "BLOB":
        return "bytes"
    if data_type == "JSON" or (schema, table, column) == ("raw", "quarantine", "raw_text"):
        return "document"
    if data_type == "VARCHAR[]":
        return "list"
    if data_type == "VARCHAR":
        return "free_text" if schema == "raw" and column in FREE_TEXT_COLUMNS.get(table, ()) else "value"
    return None


def _archive_rule(column: str, arrow_type: pa.DataType) -> str | None:
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "free_text" if column in FREE_TEXT_COLUMNS[ARCHIVED_TABLE] else "value"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        value_type = arrow_type.value_type
        return "list" if pa.types.is_string(value_type) or pa.types.is_large_string(value_type) else None
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return "bytes"
    return None


def in_scope_places(json_columns: Iterable[tuple[str, str]]) -> list[str]:
    """The places the erasure acts on, always printed by the verification."""
    places = [f"raw.{table}.{column}" for table, columns in USER_COLUMNS.items() for column, _ in columns]
    places += [f"raw.{table}.{column}" for table, column in json_columns]
    places += [f"raw.{table}.{column}" for table, columns in FREE_TEXT_COLUMNS.items() for column in columns]
    return [*places, "raw.quarantine.raw_text", "raw.quarantine.raw_bytes"]


def _batches(con: duckdb.DuckDBPyConnection, sql: str) -> Iterator[pa.RecordBatch]:
    reader = con.sql(sql).to_arrow_reader(100_000)
    yield from reader


def _scan_tables(con: duckdb.DuckDBPyConnection, finder: _Finder, counts: dict[str, int], prefix: str = "") -> list:
    """Count the rows carrying the id in every table of `con`'s database, by `prefix` + `schema.table.column`;
    returns the columns (schema, table, column, type)."""
    columns = con.execute(
        """
        select c.schema_name, c.table_name, c.column_name, c.data_type
        from duckdb_columns() as c
        join duckdb_tables() as t
            on t.database_name = c.database_name and t.schema_name = c.schema_name and t.table_name = c.table_name
        where c.database_name = current_database()
        order by c.schema_name, c.table_name, c.column_index
        """
    ).fetchall()
    tables: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for schema, table, column, data_type in columns:
        rule = _rule(schema, table, column, data_type)
        if rule:
            tables.setdefault((schema, table), []).append((column, rule))
    for (schema, table), wanted in tables.items():
        select = ", ".join(
            f"cast({quote(c)} as varchar) as {quote(c)}" if rule == "document" else quote(c) for c, rule in wanted
        )
        for batch in _batches(con, f"select {select} from {quote(schema)}.{quote(table)}"):
            for index, (column, rule) in enumerate(wanted):
                place = f"{prefix}{schema}.{table}.{column}"
                counts[place] = counts.get(place, 0) + _rows_carrying(finder, batch.column(index), rule)
    return columns


def verify(warehouse: Warehouse, user_ids: list[str], archives: Iterable[Path]) -> dict[str, int]:
    """Step 4: rows still carrying one of the ids, by place. In-scope places always appear; `raw.other_columns`,
    `models.all_columns` (the dbt-built tables), `serving.all_columns` (the serving file the dashboard reads)
    and `archive.other_columns` sum the rest, whose places appear on their own when they are not zero."""
    finder = _Finder(user_ids)
    counts: dict[str, int] = {}
    con = connect(warehouse.path, read_only=True)
    try:
        columns = _scan_tables(con, finder, counts)
    finally:
        con.close()
    json_columns = [(t, c) for s, t, c, d in columns if s == "raw" and d == "JSON" and t in DATA_TABLES]
    serving = warehouse.serving
    if serving.exists():
        with connect_unreplaced(serving) as published:
            limit_memory(published, warehouse.path)
            _scan_tables(published, finder, counts, prefix="serving.")
    for path in archives:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=100_000):  # pyarrow's reader, not DuckDB's
            for column, array in zip(batch.schema.names, batch.columns, strict=True):
                rule = _archive_rule(column, array.type)
                if rule:
                    place = f"archive.{column}"
                    counts[place] = counts.get(place, 0) + _rows_carrying(finder, array, rule)
    return _summarised(counts, in_scope_places(json_columns))


def _summarised(counts: dict[str, int], in_scope: list[str]) -> dict[str, int]:
    shown = {place: counts.get(place, 0) for place in in_scope}
    archive_scope = [f"archive.{column}" for column in FREE_TEXT_COLUMNS[ARCHIVED_TABLE]]
    shown.update({place: counts.get(place, 0) for place in archive_scope})
    others = {"raw.other_columns": 0, "models.all_columns": 0, "serving.all_columns": 0, "archive.other_columns": 0}
    extra = {}
    for place, count in counts.items():
        if place in shown:
            continue
        bucket = (
            "serving.all_columns"
            if place.startswith("serving.")
            else "archive.other_columns"
            if place.startswith("archive.")
            else "raw.other_columns"
            if place.startswith("raw.")
            else "models.all_columns"
        )
        others[bucket] += count
        if count:
            extra[place] = count
    return {**shown, **others, **extra}
