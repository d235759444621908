"""Where the warehouse file is, and whether a path can be one.

`Warehouse.at` is the one resolution of the file: `--db PATH`, else the
`FEEDBACK_DB` environment variable, else `./feedback.duckdb`. The command line
(and the dashboard's entry point) calls it once and passes the `Warehouse`
down; below that everything takes a `Path`. The serving file's name is derived
here (`serving_path`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from warehouse.errors import UserError

DEFAULT_DB = "feedback.duckdb"

# DuckDB names a database after its file (raw.duckdb -> "raw"); a name that is also one of the warehouse's
# schemas (or one of DuckDB's own catalogs) makes every `raw.<table>` ambiguous.
# `serving` is the schema of the serving file's status row, `published_from` and `publishing_to` the names a publish
# attaches the warehouse and the new serving file under (operations/serving.py).
RESERVED_DB_NAMES = frozenset(
    {"raw", "main", "staging", "intermediate", "marts", "seeds", "memory", "system", "temp"}
    | {"serving", "published_from", "publishing_to"}
)

# A DuckDB database file carries these bytes at offset 8 (DuckDB's storage header).
DUCKDB_MAGIC = b"DUCK"


def refuse_schema_name(path: Path) -> Path:
    """`path`, unless its name clashes with a schema or catalog (DuckDB names the database after the file)."""
    name = path.name.split(".")[0].lower()
    if name in RESERVED_DB_NAMES:
        raise UserError(
            f"warehouse file name {path.name!r} clashes with the schema or catalog {name!r}: "
            "DuckDB names the database after the file; choose another name, e.g. feedback.duckdb"
        )
    return path


def refuse_what_is_no_warehouse(path: Path) -> None:
    """A folder, or an existing file that is not a DuckDB database (a CSV, an export given to --db by mistake)."""
    if path.is_dir():
        raise UserError(f"--db {path} is a folder: give the warehouse file, e.g. {path / DEFAULT_DB}")
    if path.is_file() and path.stat().st_size > 0:
        with path.open("rb") as handle:
            header = handle.read(12)
        if header[8:12] != DUCKDB_MAGIC:
            raise UserError(
                f"--db {path} is not a DuckDB warehouse (no DuckDB header): give the warehouse file, "
                "or a new file name to create one"
            )


SERVING_SUFFIX = ".serving.duckdb"


def serving_path(path: Path) -> Path:
    """The serving file of the warehouse file `path`: `<stem>.serving.duckdb` beside it (operations/serving.py
    publishes it, the dashboard reads it and nothing else). The one place its name is derived."""
    stem = path.name[: -len(".duckdb")] if path.name.endswith(".duckdb") else path.name
    return path.with_name(stem + SERVING_SUFFIX)


@dataclass(frozen=True)
class Warehouse:
    """One warehouse, resolved once at the command line (or by the dashboard's entry point) and passed down typed:
    the file ingest, purge, build and forget write, and its serving file, which readers open and nothing else."""

    path: Path
    serving: Path

    @classmethod
    def at(cls, db: str | os.PathLike[str] | None = None) -> Warehouse:
        """The one resolution: `--db`, else `FEEDBACK_DB`, else `./feedback.duckdb` (as given, for messages)."""
        path = refuse_schema_name(Path(db or os.environ.get("FEEDBACK_DB") or DEFAULT_DB))
        return cls(path, serving_path(path))

    @property
    def dbt_path(self) -> str:
        """The warehouse file as dbt's profiles.yml reads it (`FEEDBACK_DB`): text only where dbt needs text."""
        return str(self.path.resolve())
