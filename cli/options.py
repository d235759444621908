"""Options shared by every command: the warehouse file, quiet output, the as-of instant, the archive folder.

`--db` is declared here once and resolved here once (`warehouse_file`), through
the ground floor's `resolve_db_path`: the option, else `FEEDBACK_DB`, else
`./feedback.duckdb`, a schema-named file refused.
"""

from __future__ import annotations

from pathlib import Path

import click

from warehouse.as_of import AsOfError, ReportInstant, is_date_only, parse_as_of
from warehouse.errors import UserError
from warehouse.location import resolve_db_path

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


def warehouse_file(db: str | None) -> Path:
    """The file `--db` names, for every command: an `ingest --db X analyzer ...` group option counts too."""
    context = click.get_current_context(silent=True)
    while db is None and context is not None and context.parent is not None:
        context = context.parent
        db = context.params.get("db")
    return resolve_db_path(db)


def existing_warehouse(db: str | None, *, missing: str) -> Path:
    """`warehouse_file`, which must exist; `missing` says what the command cannot do without it."""
    path = warehouse_file(db)
    if not path.exists():
        raise UserError(f"warehouse {path} does not exist: {missing}")
    return path


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
