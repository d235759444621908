"""`feedback-analytics export`: marts and retained views as CSV or Parquet files for other tools.

Any relation of the `marts` schema can be exported by name: the marts, the
`retained_*` views (what the retention policies keep as of the build's
report instant) and the `stored_*` views. Rows are read from the
warehouse's serving file (operations/serving.py: what the last successful
build published), never from the warehouse file itself, so an export
neither waits for nor holds up ingest, purge, build or forget. They are
written as `<out>/<name>.<format>`, first under a temporary name that is
renamed into place, so a reader of the folder never sees half a file.
warehouse/export_format.py says how timestamps, dates and numbers look, and how a CSV text cell that
a spreadsheet would run as a formula is written as text (unless `raw`).

`--tenant T` (a tenant key or display name) exports what a reader of that tenant alone may read, through
the same scoping step as the dashboard (warehouse/scoped.py): only T's rows of every relation with a tenant,
the metadata relations (build_info, retention_policy_windows without its counts), and nothing of a
relation without tenant rows (session feedback, analyzer events, skills, counts over every tenant): naming
one is refused in one line that names it, before any file is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from warehouse.access import EVERYTHING, Scope
from warehouse.connection import connect_serving
from warehouse.errors import UserError
from warehouse.export_format import CSV_TIMESTAMP, FORMATS, neutralise_sql
from warehouse.location import Warehouse
from warehouse.private_files import install, make_folder, staging_folder
from warehouse.scoped import relations, scoped
from warehouse.sql import quote, sql_literal

SCHEMA = "marts"
TIMESTAMP_TYPES = ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S")
TEXT_TYPES = ("VARCHAR",)


@dataclass(frozen=True)
class Exported:
    name: str
    path: Path
    rows: int


def exportable(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The names `export` accepts: every table and view of the serving file's marts schema."""
    rows = con.execute(
        "select table_name from information_schema.tables where table_catalog = current_database() "
        "and table_schema = ? order by table_name",
        [SCHEMA],
    ).fetchall()
    return [name for (name,) in rows]


def _columns(con: duckdb.DuckDBPyConnection, name: str, fmt: str, raw: bool = False) -> str:
    """The select list: timestamps as UTC ISO text (CSV) or UTC timestamps with time zone (Parquet); in CSV
    (unless `raw`), text that a spreadsheet would run as a formula marked as text."""
    described = con.execute(
        "select column_name, data_type from information_schema.columns where table_catalog = current_database() "
        "and table_schema = ? and table_name = ? order by ordinal_position",
        [SCHEMA, name],
    ).fetchall()
    expressions = []
    for column, data_type in described:
        quoted = quote(column)
        if data_type in TEXT_TYPES and fmt == "csv" and not raw:
            expressions.append(f"{neutralise_sql(quoted)} as {quoted}")
        elif data_type not in TIMESTAMP_TYPES:
            expressions.append(quoted)
        elif fmt == "csv":  # the session is in UTC (warehouse.connection): a zoned value prints its UTC clock
            expressions.append(f"strftime(cast({quoted} as timestamp), {sql_literal(CSV_TIMESTAMP)}) as {quoted}")
        else:
            expressions.append(f"cast(cast({quoted} as timestamp) as timestamptz) as {quoted}")
    return ", ".join(expressions)


def _write(con: duckdb.DuckDBPyConnection, name: str, fmt: str, out: Path, raw: bool = False) -> Exported:
    final = out / f"{name}.{fmt}"
    options = "format csv, header true" if fmt == "csv" else "format parquet, compression zstd"
    with staging_folder(final, f".{final.name}.exporting-") as temporary:  # unpredictable, created exclusively
        (rows,) = con.execute(
            f"copy (select {_columns(con, name, fmt, raw)} from {SCHEMA}.{quote(name)}) "
            f"to {sql_literal(str(temporary))} ({options})"
        ).fetchall()[0]
        install(temporary, final)
    return Exported(name, final, rows)


# the marts that name every tenant (key, display name), as the dashboard's tenant filter lists them
TENANT_LISTS = ("conversation_feedback_summary", "eval_matrix", "feedback_signals_daily")


def tenants(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Tenant key -> display name, of every tenant the marts hold."""
    present = set(exportable(con))
    selects = [f"select tenant, tenant_name from {SCHEMA}.{name}" for name in TENANT_LISTS if name in present]
    if not selects:
        return {}
    rows = con.execute(f"select distinct * from ({' union '.join(selects)}) where tenant is not null").fetchall()
    return {key: name or key for key, name in sorted(rows, key=lambda row: (str(row[1] or row[0]).casefold(), row[0]))}


def _tenant_key(con: duckdb.DuckDBPyConnection, tenant: str) -> str:
    """--tenant as a key or a display name (any case); an unknown one gets the list of valid ones."""
    known = tenants(con)
    for key, name in known.items():
        if tenant.casefold() in (key.casefold(), name.casefold()):
            return key
    raise UserError(f"no tenant {tenant!r} in the marts; the tenants are: {', '.join(known) or 'none'}", exit_code=2)


def _refuse_tenantless(con: duckdb.DuckDBPyConnection, catalog: str, names: Sequence[str], tenant: str) -> None:
    """A scoped export of a relation without tenant rows would be empty or a count over every tenant: refuse."""
    kinds = {relation.name: relation for relation in relations(con, catalog) if relation.schema == SCHEMA}
    refused = [name for name in names if kinds[name].kind == "hidden"]
    if refused:
        raise UserError(
            f"--tenant {tenant}: {', '.join(refused)} holds no tenant's rows (a source without a tenant, or counts "
            "over every tenant); only an export of every tenant has it: leave it out",
            exit_code=2,
        )


def export(
    warehouse: Warehouse,
    names: Sequence[str],
    fmt: str,
    out: Path,
    *,
    raw: bool = False,
    tenant: str | None = None,
    scope: Scope = EVERYTHING,
) -> list[Exported]:
    """Write each named relation to `out` in `fmt`, as `scope` narrowed to `tenant` may read it (see the
    module's note); unknown names and tenants, and relations without tenant rows under a scope, fail before any
    file.

    `raw`: CSV text cells exactly as stored, none marked as text (for programs, not spreadsheets)."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}", exit_code=2)
    if raw and fmt != "csv":
        raise UserError("--raw-csv is for --format csv: Parquet always holds the values as stored", exit_code=2)
    con = connect_serving(warehouse, attached=True)
    try:
        catalog = con.execute("select current_database()").fetchone()[0]
        if tenant is not None:
            with scoped(con, catalog, scope):  # a tenant outside the caller's scope is unknown to it
                key = _tenant_key(con, tenant)
            scope = scope.narrowed(key)
        valid = exportable(con)
        if not valid:
            raise UserError(f"the serving file {warehouse.serving} holds no marts: run `feedback-analytics build`")
        unknown = [name for name in names if name not in valid]
        if unknown:
            raise UserError(
                f"no mart or view named {', '.join(unknown)}; the names are: {', '.join(valid)}", exit_code=2
            )
        if not scope.is_all:
            _refuse_tenantless(con, catalog, names, tenant or ", ".join(sorted(scope.tenants or ())))
        if out.exists() and not out.is_dir():
            raise UserError(f"--out {out} is a file: give a folder", exit_code=2)
        try:
            make_folder(out)
            with scoped(con, catalog, scope):
                return [_write(con, name, fmt, out, raw) for name in dict.fromkeys(names)]
        except (OSError, duckdb.IOException) as exc:
            raise UserError(f"cannot write to {out}: {exc}") from None
    finally:
        con.close()
