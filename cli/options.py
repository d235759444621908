"""Options shared by every command: the warehouse file, quiet output, the as-of instant, the archive folder.

`--db` is declared here once and resolved here once (`warehouse_of`) into a
`warehouse.location.Warehouse` (the file and its serving file), through the
ground floor's one resolution `Warehouse.at`: the option, else `FEEDBACK_DB`,
else `./feedback.duckdb`, a schema-named file refused. Commands pass that value
(or its paths) down; nothing below resolves the file again. `--as-of` is parsed
here once into a UTC `ReportInstant`, which travels typed down to dbt.
"""

from __future__ import annotations

from pathlib import Path

import click

from warehouse.as_of import AsOfError, ReportInstant, is_date_only, parse_as_of
from warehouse.errors import UserError
from warehouse.location import Warehouse

db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="DuckDB warehouse file (default: $FEEDBACK_DB, else ./feedback.duckdb).",
)
quiet_option = click.option("--quiet", "-q", is_flag=True, help="Print only the totals; no progress.")
archive_option = click.option(
    "--archive-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where archived analyzer events go (default: $FEEDBACK_ARCHIVE_DIR, "
    "else <db name>-archive/analyzer_events/ beside the warehouse file).",
)
target_option = click.option(
    "--target",
    default=None,
    help="A profiles.yml target other than DuckDB: `spark` (a Spark Thrift Server: FEEDBACK_SPARK_HOST/PORT/USER) "
    "or `spark_local` (Spark in-process). Writes the Parquet lake, builds there, copies the marts into the "
    "warehouse file (docs/scale-out.md).",
)


def warehouse_of(db: str | None) -> Warehouse:
    """The warehouse `--db` names, for every command: an `ingest --db X analyzer ...` group option counts too."""
    context = click.get_current_context(silent=True)
    while db is None and context is not None and context.parent is not None:
        context = context.parent
        db = context.params.get("db")
    return Warehouse.at(db)


def existing_warehouse(db: str | None, *, missing: str) -> Warehouse:
    """`warehouse_of`, whose file must exist; `missing` says what the command cannot do without it."""
    warehouse = warehouse_of(db)
    if not warehouse.path.exists():
        raise UserError(f"warehouse {warehouse.path} does not exist: {missing}")
    return warehouse


def parse_cli_as_of(value: str | None, *, refuse_future: bool = True) -> ReportInstant:
    """`--as-of` as one UTC instant (warehouse/as_of.py): a date is the end of that day, None is now.

    A future instant is refused (build, purge, nightly): a mistyped year would purge every row, or write a
    future `computed_as_of` into the history rollups. A date counts as future only from the next UTC day on."""
    try:
        instant = parse_as_of(value)
    except AsOfError as exc:
        raise click.BadParameter(str(exc), param_hint="--as-of") from None
    now = parse_as_of(None)
    if refuse_future and value is not None and (instant.day > now.day if is_date_only(value) else instant > now):
        raise UserError(
            f"--as-of {value} is later than now ({now.instant:%Y-%m-%d %H:%M:%S} UTC): "
            "give a past or present date or time",
            exit_code=2,
        )
    return instant
