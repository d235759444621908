"""The `raw` schema: one table per source contract, plus the bookkeeping tables.

A data table's columns are its contract's fields (warehouse/contracts.py), in
the contract's order, with the SQL type of the field's kind, `not null` where
the contract requires a value or supplies a default, and the lineage columns
every load adds. The bookkeeping tables (quarantine, load manifest, purge and
erasure logs, nightly runs) are declared here as columns too. `ensure_raw_schema` creates
what is missing, adds the columns a warehouse from an earlier version lacks and
drops the `not null` of a column this version declares nullable (analyzer
events' `timestamp`, nullable since undated events land).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from warehouse.contracts import CONTRACTS, Contract, Field
from warehouse.sql import quote


@dataclass(frozen=True)
class Column:
    name: str
    sql_type: str
    not_null: bool = False

    @property
    def ddl(self) -> str:
        return f"{quote(self.name)} {self.sql_type}" + (" not null" if self.not_null else "")


_KIND_TYPES = {
    "string": "varchar",
    "int": "bigint",
    "float": "double",
    "timestamp": "timestamp",
    "date": "date",
    "string_list": "varchar[]",
    "json": "json",
}

# every load stamps its rows: which file or table, when, and which load (raw.load_manifest)
LINEAGE = (
    Column("_source_uri", "varchar", True),
    Column("_loaded_at", "timestamp", True),
    Column("_load_id", "varchar", True),
)


def _field_column(field: Field) -> Column:
    return Column(
        field.name,
        field.storage_type or _KIND_TYPES[field.kind],
        not_null=(field.required and not field.empty_is_null) or field.default_sql is not None,
    )


# what a later load learns about a row already landed: the platform's index row is gone (a newer user reaction
# replaced it, or a clear removed it) from the load `_removed_by_load`, which started at `_removed_at`
REMOVAL = (
    Column("_removed_at", "timestamp"),
    Column("_removed_by_load", "varchar"),
)
LATER_LINEAGE: dict[str, tuple[Column, ...]] = {"reaction_index": REMOVAL}


def contract_columns(contract: Contract) -> tuple[Column, ...]:
    """The raw table of a contract: its fields, then the lineage columns."""
    return (*(_field_column(field) for field in contract.fields), *LINEAGE, *LATER_LINEAGE.get(contract.table, ()))


# the tables the sources land in, natural key noted in each contract
DATA_TABLES: dict[str, tuple[Column, ...]] = {contract.table: contract_columns(contract) for contract in CONTRACTS}

BOOKKEEPING_TABLES: dict[str, tuple[Column, ...]] = {
    # every row or line that failed validation, with why
    "quarantine": (
        Column("load_id", "varchar", True),
        Column("source", "varchar", True),
        Column("target_table", "varchar", True),
        Column("source_uri", "varchar", True),
        Column("line_number", "bigint"),
        Column("record_key", "varchar"),
        Column("raw_text", "varchar"),
        Column("raw_bytes", "blob"),
        Column("reason", "varchar", True),
        Column("quarantined_at", "timestamp", True),
    ),
    # one row per file or table read
    "load_manifest": (
        Column("load_id", "varchar", True),
        Column("source", "varchar", True),
        Column("target_table", "varchar", True),
        Column("uri", "varchar", True),
        Column("checksum", "varchar"),
        Column("size_bytes", "bigint"),
        Column("rows_read", "bigint", True),
        Column("rows_loaded", "bigint", True),
        Column("rows_quarantined", "bigint", True),
        Column("rows_duplicate", "bigint", True),
        Column("started_at", "timestamp", True),
        Column("finished_at", "timestamp", True),
        # JSON-lines files: the bytes read, so that the next load of a grown file reads only what was appended
        Column("start_offset", "bigint"),
        Column("end_offset", "bigint"),
        Column("end_line", "bigint"),
        Column("prefix_fingerprint", "varchar"),
        # records read that are not this source's (a blob tree's messages and turn logs beside the reactions):
        # rows read = loaded + quarantined + duplicate + skipped
        Column("rows_skipped", "bigint"),
        # index rows landed earlier that this load found gone from the source (raw.reaction_index._removed_at)
        Column("rows_removed", "bigint"),
        # reaction_index loads: the instant the check of the index stands for (rows found gone were gone by then;
        # a reaction only the blobs hold, given before it, was not in the index then)
        Column("observed_at", "timestamp"),
    ),
    # one row per retention policy applied
    "purge_log": (
        Column("purge_id", "varchar", True),
        Column("policy", "varchar", True),
        Column("table_name", "varchar", True),
        Column("cutoff", "timestamp"),
        Column("rows_archived", "bigint", True),
        Column("rows_deleted", "bigint", True),
        Column("applied_at", "timestamp", True),
        Column("is_dry_run", "boolean", True),
        Column("archive_uri", "varchar"),
        Column("rows_deleted_from_archive", "bigint"),
    ),
    # one row per erasure request; the user id only as an unsalted SHA-256, never in clear
    "erasure_log": (
        Column("erasure_id", "varchar", True),
        Column("user_id_sha256", "varchar", True),
        Column("requested_at", "timestamp", True),
        Column("rows_deleted", "bigint", True),
        Column("rows_pseudonymised", "bigint", True),
        Column("detail", "json"),
        Column("is_dry_run", "boolean", True),
    ),
    # one row per `feedback-analytics nightly` run that took the lock (operations/nightly_runs.py): 'running' from
    # its start, the failed steps so far after each step, 'ok' or 'failed' at its end; a killed run stays 'running'
    "nightly_runs": (
        Column("run_id", "varchar", True),
        Column("started_at", "timestamp", True),
        Column("finished_at", "timestamp"),
        Column("as_of", "timestamp", True),
        Column("status", "varchar", True),
        Column("failed_steps", "varchar", True),
    ),
}

RAW_TABLES: dict[str, tuple[Column, ...]] = {**DATA_TABLES, **BOOKKEEPING_TABLES}

# tables a warehouse of an earlier version may lack without being refused (read-only commands, the lake export,
# the dbt build read them as empty): only a nightly, or an ingest or purge of this version, creates them
OPTIONAL_TABLES = frozenset({"nightly_runs"})


def create_table_sql(table: str) -> str:
    columns = ",\n    ".join(column.ddl for column in RAW_TABLES[table])
    return f"create table if not exists raw.{table} (\n    {columns}\n)"


def missing_raw_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The raw tables this version needs that the connected warehouse lacks, in declaration order (the optional
    ones are not needed)."""
    found = {
        row[0]
        for row in con.execute("select table_name from information_schema.tables where table_schema = 'raw'").fetchall()
    }
    return [table for table in RAW_TABLES if table not in found and table not in OPTIONAL_TABLES]


def empty_table_sql(table: str) -> str:
    """A select of no rows with the columns and types of the raw table `table` (an optional table that is absent)."""
    columns = ", ".join(f"cast(null as {column.sql_type}) as {quote(column.name)}" for column in RAW_TABLES[table])
    return f"select {columns} where false"


def ensure_raw_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the raw schema; a warehouse from an earlier version gets the tables and columns added since, and
    loses the `not null` of the columns declared nullable since."""
    con.execute("create schema if not exists raw")
    for table, columns in RAW_TABLES.items():
        con.execute(create_table_sql(table))
        existing = {
            row[0]: row[1] == "YES"
            for row in con.execute(
                "select column_name, is_nullable from information_schema.columns "
                "where table_schema = 'raw' and table_name = ?",
                [table],
            ).fetchall()
        }
        for column in columns:
            if column.name not in existing:  # added later: nullable, whatever the declaration, for the old rows
                con.execute(f"alter table raw.{table} add column {quote(column.name)} {column.sql_type}")
            elif not column.not_null and not existing[column.name]:  # relaxed later: the old rows all fit
                con.execute(f"alter table raw.{table} alter column {quote(column.name)} drop not null")
