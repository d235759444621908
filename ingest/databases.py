"""Tables in databases as input: PostgreSQL and SQLite through ADBC, fetched as Arrow.

Only the columns a contract names are selected (never a free-text `value`
blob); uuid and json columns arrive as text. Errors a user can cause (server
unreachable, table missing) become one-line `UserError`s.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

from ingest.errors import UserError

_PASSWORD_IN_URL = re.compile(r"(://[^:/@]+):[^@]*@")
_PASSWORD_KV = re.compile(r"password\s*=\s*\S+", re.IGNORECASE)


def redact_dsn(dsn: str) -> str:
    """The DSN as it may be stored and shown: without a password."""
    return _PASSWORD_KV.sub("password=***", _PASSWORD_IN_URL.sub(r"\1@", dsn))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class PostgresTable:
    """One PostgreSQL table, read with adbc_driver_postgresql."""

    def __init__(self, dsn: str, table: str) -> None:
        self.dsn = dsn
        self.table = table
        self.uri = f"{redact_dsn(dsn)}#{table}"

    def _connect(self):  # noqa: ANN202 - an ADBC DB-API connection
        import adbc_driver_postgresql.dbapi as pg

        try:
            return pg.connect(self.dsn)
        except Exception as exc:  # the driver raises its own hierarchy
            raise UserError(
                f"cannot connect to PostgreSQL at {redact_dsn(self.dsn)}: {_first_line(exc)} "
                "(check the DSN and that the server is running)"
            ) from None

    def columns(self) -> dict[str, str]:
        """Column name -> PostgreSQL data type; raises a UserError if the table is missing."""
        with self._connect() as conn, conn.cursor() as cur:
            cur.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_name = $1 and table_schema = any(current_schemas(false)) order by ordinal_position",
                parameters=(self.table,),
            )
            rows = cur.fetchall()
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

    def fetch(self, wanted: dict[str, str], where: str = "") -> pa.Table:
        """Fetch the wanted columns (output name -> source column) that the table has."""
        available = self.columns()
        selects = []
        for out_name, column in wanted.items():
            if column not in available:
                continue
            dtype = available[column]
            expr = _quote_ident(column)
            if dtype in ("uuid", "json", "jsonb") or dtype.startswith("timestamp") or dtype == "date":
                expr = f"{expr}::text"
            selects.append(f"{expr} as {_quote_ident(out_name)}")
        sql = f"select {', '.join(selects)} from {_quote_ident(self.table)} {where}"
        with self._connect() as conn, conn.cursor() as cur:
            try:
                cur.execute(sql)
                return cur.fetch_arrow_table()
            except Exception as exc:
                raise UserError(f"cannot read {self.table} from PostgreSQL: {_first_line(exc)}") from None


def read_sqlite_table(path: Path, table: str, wanted: list[str]) -> pa.Table:
    """The wanted columns of a table in a SQLite file (read-only)."""
    import adbc_driver_sqlite.dbapi as sqlite

    uri = f"file:{path.resolve()}?mode=ro"
    try:
        conn = sqlite.connect(uri)
    except Exception as exc:
        raise UserError(f"cannot open SQLite file {path}: {_first_line(exc)}") from None
    with conn, conn.cursor() as cur:
        cur.execute(f"select name from pragma_table_info('{table}')")
        available = [row[0] for row in cur.fetchall()]
        if not available:
            raise UserError(f"SQLite file {path} has no table {table}: is it a session feedback store?")
        columns = [c for c in wanted if c in available]
        cur.execute(f"select {', '.join(_quote_ident(c) for c in columns)} from {_quote_ident(table)}")
        return cur.fetch_arrow_table()


def with_lineage(table: pa.Table, uri: str, line_column: str | None) -> pa.Table:
    """Add `_line` (the row's position key) and `_uri` for the typed load."""
    if line_column and line_column in table.column_names:
        line = table.column(line_column).cast(pa.int64())
    else:
        line = pa.array(range(1, table.num_rows + 1), pa.int64())
    table = table.append_column("_line", line)
    return table.append_column("_uri", pa.repeat(uri, table.num_rows).cast(pa.string()))
