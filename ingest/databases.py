"""Tables in databases as input: PostgreSQL and SQLite through ADBC, fetched as Arrow.

Only the columns a contract names are selected; of a JSON column such as
session feedback's `value` (the whole record again), only the keys a contract
allows, each extracted by the database itself (`Field.inside`), so nothing
else of it ever leaves the database. uuid and json columns arrive as text. PostgreSQL says each column's
declared type; SQLite does not (a value's type is per row, and the driver would
guess a column's type from its first batch of rows, so a column that begins
with 1,024 NULLs fails the whole read at its first value): every SQLite column
is read as text and cast under the contract, like a JSON-lines file. Errors a
user can cause (server unreachable, table missing) become one-line `UserError`s.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ingest.load import Load, LoadOptions, LoadResult, already_loaded, load_batches
from warehouse.contracts import Contract
from warehouse.dsn import parse_dsn, redact, redact_dsn
from warehouse.errors import UserError
from warehouse.sql import quote, sql_literal

__all__ = ["PostgresTable", "SqliteTable", "load_table", "redact_dsn"]


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


class PostgresTable:
    """One PostgreSQL table, read with adbc_driver_postgresql."""

    engine = "PostgreSQL"

    def __init__(self, dsn: str, table: str) -> None:
        parse_dsn(dsn)  # a DSN libpq would refuse: refused here, in a message that quotes none of it
        self.dsn = dsn
        self.table = table
        self.uri = f"{redact_dsn(dsn)}#{table}"

    def failure(self, exc: BaseException) -> str:
        """The first line of a driver's error, without any secret of the DSN (libpq may echo parts of it)."""
        return redact(_first_line(exc), self.dsn)

    def _connect(self):  # noqa: ANN202 - an ADBC DB-API connection
        import adbc_driver_postgresql.dbapi as pg  # here, not at the top: ~0.2 s that only a PostgreSQL load pays

        try:
            return pg.connect(self.dsn)
        except Exception as exc:  # the driver raises its own hierarchy
            raise UserError(
                f"cannot connect to PostgreSQL at {redact_dsn(self.dsn)}: {self.failure(exc)} "
                "(check the DSN and that the server is running)"
            ) from None

    def columns(self) -> dict[str, str]:
        """Column name -> PostgreSQL data type; raises a UserError if the table is missing."""
        with self._connect() as conn, conn.cursor() as cur:
            try:
                cur.execute(
                    "select column_name, data_type from information_schema.columns "
                    "where table_name = $1 and table_schema = any(current_schemas(false)) order by ordinal_position",
                    parameters=(self.table,),
                )
                rows = cur.fetchall()
            except Exception as exc:
                raise UserError(f"cannot list the columns of {self.table}: {self.failure(exc)}") from None
        if not rows:
            raise UserError(
                f"table {self.table} not found in PostgreSQL database {redact_dsn(self.dsn)}: "
                "check the DSN's database and search_path"
            )
        return {name: dtype for name, dtype in rows}

    def exists(self) -> bool:
        try:
            self.columns()
        except UserError as exc:
            if "not found" in str(exc):
                return False
            raise
        return True

    def column_sql(self, column: str, dtype: str) -> str:
        """A column as read: its declared type, but uuid, json and date/time types as text."""
        expr = quote(column)
        if dtype in ("uuid", "json", "jsonb") or dtype.startswith("timestamp") or dtype == "date":
            expr = f"{expr}::text"
        return expr

    def json_key_sql(self, column: str, dtype: str, key: str) -> str:
        """One key of a JSON column, as text (NULL when absent): `->>` reads that key and nothing else."""
        holder = quote(column) if dtype in ("json", "jsonb") else f"{quote(column)}::jsonb"
        return f"({holder} ->> {sql_literal(key)})"

    def selected(self, wanted: dict[str, str], keys_in: dict[str, str] | None = None) -> dict[str, str]:
        """Output name -> SQL expression, for the wanted columns (output name -> source column) the table has.

        `keys_in` (output name -> JSON column): where the table has no column of that name, the key of that
        name inside the JSON column.
        """
        available = self.columns()
        selected = {
            out_name: self.column_sql(column, available[column])
            for out_name, column in wanted.items()
            if column in available
        }
        for out_name, column in (keys_in or {}).items():
            if out_name not in selected and column in available:
                selected[out_name] = self.json_key_sql(column, available[column], out_name)
        return selected

    def select_sql(self, wanted: dict[str, str], where: str = "", *, keys_in: dict[str, str] | None = None) -> str:
        """SELECT of the wanted columns (output name -> source column) that the table has."""
        items = ", ".join(f"{expr} as {quote(name)}" for name, expr in self.selected(wanted, keys_in).items())
        return f"select {items} from {quote(self.table)} {where}"

    def fetch(self, wanted: dict[str, str], where: str = "", *, keys_in: dict[str, str] | None = None) -> pa.Table:
        """The wanted columns of every row, as one Arrow table."""
        sql = self.select_sql(wanted, where, keys_in=keys_in)
        with self._connect() as conn, conn.cursor() as cur:
            try:
                cur.execute(sql)
                return cur.fetch_arrow_table()
            except Exception as exc:
                raise UserError(f"cannot read {self.table} from {self.engine}: {self.failure(exc)}") from None

    @contextmanager
    def stream(
        self, wanted: dict[str, str], where: str = "", *, keys_in: dict[str, str] | None = None
    ) -> Iterator[pa.RecordBatchReader]:
        """The wanted columns as a stream of Arrow record batches (DuckDB consumes it while it arrives)."""
        sql = self.select_sql(wanted, where, keys_in=keys_in)
        conn = self._connect()
        cur = conn.cursor()
        try:
            try:
                cur.execute(sql)
                reader = cur.fetch_record_batch()
            except Exception as exc:
                raise UserError(f"cannot read {self.table} from {self.engine}: {self.failure(exc)}") from None
            yield reader
        finally:  # a stream left half-read (the load fell back) must not fail the cleanup
            for close in (cur.close, conn.close):
                with suppress(Exception):
                    close()


# SQLite: a first row of text in every column, so that the driver types every column as text
_SENTINEL = "_typed_as_text"


def _without_sentinel(batch: pa.RecordBatch | pa.Table) -> pa.RecordBatch | pa.Table:
    keep = pc.equal(batch.column(_SENTINEL), 0)
    return batch.filter(keep).drop_columns([_SENTINEL])


class SqliteTable(PostgresTable):
    """One table of a SQLite file (opened read-only), read with adbc_driver_sqlite.

    The driver gives a column the type of its values in the first batch (1,024
    rows), and a column whose first batch is NULL becomes an integer column
    that fails at its first text. So every column is read as text, and the
    query begins with one row of text in every column (the sentinel, dropped
    again here): the driver types every column as text whatever the file
    holds, and the contract casts and checks each value as it does a JSON
    line's (an INTEGER column holding text is quarantined, not fatal).
    """

    engine = "SQLite"

    def __init__(self, path: Path, table: str) -> None:
        self.path = path
        self.dsn = f"file:{path.resolve()}?mode=ro"
        self.table = table
        self.uri = str(path.resolve())

    def _connect(self):  # noqa: ANN202 - an ADBC DB-API connection
        import adbc_driver_sqlite.dbapi as sqlite  # here, not at the top: ~0.2 s that only a SQLite load pays

        try:
            return sqlite.connect(self.dsn)
        except Exception as exc:
            raise UserError(f"cannot open SQLite file {self.path}: {_first_line(exc)}") from None

    def columns(self) -> dict[str, str]:
        with self._connect() as conn, conn.cursor() as cur:
            try:
                cur.execute(f"select name, type from pragma_table_info('{self.table}')")
                rows = cur.fetchall()
            except Exception as exc:
                raise UserError(f"cannot read SQLite file {self.path}: {_first_line(exc)}") from None
        if not rows:
            raise UserError(f"SQLite file {self.path} has no table {self.table}: check the file")
        return {name: (dtype or "").lower() for name, dtype in rows}

    def column_sql(self, column: str, dtype: str) -> str:
        return f"cast({quote(column)} as text)"

    def json_key_sql(self, column: str, dtype: str, key: str) -> str:
        path = sql_literal(f"$.{key}")
        return f"case when json_valid({quote(column)}) then cast(json_extract({quote(column)}, {path}) as text) end"

    def select_sql(self, wanted: dict[str, str], where: str = "", *, keys_in: dict[str, str] | None = None) -> str:
        selected = self.selected(wanted, keys_in)
        # SQLite runs the arms of a UNION ALL in order: the sentinel is the first row of the first batch
        sentinel = "".join(f", '' as {quote(name)}" for name in selected)
        items = "".join(f", {expr}" for expr in selected.values())
        return f"select 1 as {_SENTINEL}{sentinel} union all select 0{items} from {quote(self.table)} {where}"

    def fetch(self, wanted: dict[str, str], where: str = "", *, keys_in: dict[str, str] | None = None) -> pa.Table:
        return _without_sentinel(super().fetch(wanted, where, keys_in=keys_in))

    @contextmanager
    def stream(
        self, wanted: dict[str, str], where: str = "", *, keys_in: dict[str, str] | None = None
    ) -> Iterator[pa.RecordBatchReader]:
        with super().stream(wanted, where, keys_in=keys_in) as reader:
            schema = reader.schema.remove(reader.schema.get_field_index(_SENTINEL))
            yield pa.RecordBatchReader.from_batches(schema, (_without_sentinel(b) for b in reader))


def arrow_column_types(schema: pa.Schema) -> dict[str, str]:
    """Arrow column -> the DuckDB type family the validation needs to know (text or not)."""
    return {
        f.name: "VARCHAR" if pa.types.is_string(f.type) or pa.types.is_large_string(f.type) else str(f.type)
        for f in schema
    }


def with_lineage(table: pa.Table, uri: str, line_column: str | None) -> pa.Table:
    """Add `_line` (the row's position key) and `_uri` for the typed load."""
    if line_column and line_column in table.column_names:
        line = table.column(line_column).cast(pa.int64())
    else:
        line = pa.array(range(1, table.num_rows + 1), pa.int64())
    table = table.append_column("_line", line)
    return table.append_column("_uri", pa.repeat(uri, table.num_rows).cast(pa.string()))


def load_table(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    source: PostgresTable,
    options: LoadOptions,
    *,
    line_column: str | None = None,
    checksum: str | None = None,
) -> LoadResult:
    """Land one database table: streamed in one pass when clean, else fetched whole and checked row by row.

    A `checksum` (of a database file) lets an unchanged file be skipped.
    """
    if checksum and options.skip_unchanged and already_loaded(con, contract.table, checksum):
        return LoadResult(contract.source, contract.table, source.uri, skipped=True)
    wanted = {f.name: f.name for f in contract.fields}
    keys_in = {f.name: f.inside for f in contract.fields if f.inside}
    load = Load(con, contract, source.uri, options, checksum=checksum)
    with source.stream(wanted, keys_in=keys_in) as reader:
        names = reader.schema.names
        line = f"try_cast({quote(line_column)} as bigint)" if line_column in names else "null::bigint"
        relation = f"(select *, {line} as _line, {sql_literal(source.uri)} as _uri from _stream)"
        con.register("_stream", reader)
        try:
            with load.transaction() as outcome:
                outcome.keep = load.stream_clean_typed(relation, arrow_column_types(reader.schema))
        finally:
            con.unregister("_stream")
    if outcome.keep:
        return load.result
    table = with_lineage(source.fetch(wanted, keys_in=keys_in), source.uri, line_column)
    return load_batches(con, contract, source.uri, [table], options, typed=True, checksum=checksum)
