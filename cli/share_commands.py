"""`feedback-analytics export` and `report`: the numbers, handed to other tools and to people."""

from __future__ import annotations

import logging
from pathlib import Path

import click
import duckdb

from cli.options import db_option, existing_warehouse, parse_cli_as_of, quiet_option, warehouse_of
from operations.export import export as export_relations
from operations.serving import unpublished_note
from warehouse.errors import UserError
from warehouse.export_format import FORMATS


@click.command("export")
@click.argument("names", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True, help="File format of every export.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for the files (<name>.csv or <name>.parquet; created if missing, same names replaced).",
)
@click.option(
    "--raw-csv",
    "raw",
    is_flag=True,
    help="CSV text cells exactly as stored: no leading ' before =, +, -, @, tab or CR (for programs, not people).",
)
@click.option(
    "--tenant",
    default=None,
    help="Only this tenant's rows (its name or key); relations without a tenant are refused. Default: everything.",
)
@db_option
@quiet_option
def export(
    names: tuple[str, ...], fmt: str, out: Path, raw: bool, tenant: str | None, db: str | None, quiet: bool
) -> None:
    """Write marts and retained views (NAMES, e.g. skill_correction_rates retained_session_feedback) as files.

    Timestamps are UTC to the microsecond (ISO 8601 with a Z in CSV, time zone UTC in Parquet).
    In CSV, a text cell a spreadsheet would run as a formula (first character =, +, -, @, tab or CR;
    plain numbers excepted) gets a leading ', unless --raw-csv. An unknown name lists the valid ones; so does
    an unknown --tenant.
    """
    warehouse = warehouse_of(db)
    written = export_relations(warehouse, names, fmt, out, raw=raw, tenant=tenant)
    for item in written if not quiet else ():
        click.echo(f"{item.name}: {item.rows:,} rows to {item.path}")
    click.echo(f"exported {len(written)} relations ({sum(i.rows for i in written):,} rows) to {out}")
    _say_unpublished(warehouse.path)


@click.command("serving-path")
@db_option
def serving_path_command(db: str | None) -> None:
    """Print the warehouse's serving file (what the last successful build published), for tools that read the
    marts themselves: `export FEEDBACK_SERVING_DB=$(feedback-analytics serving-path)` points MetricFlow's `mf`
    at it (profiles.yml's `serving` target; docs/metrics.md)."""
    click.echo(str(warehouse_of(db).serving.resolve()))


@click.command("report")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The HTML file to write (replaced if it exists); --pdf writes FILE.pdf beside it.",
)
@click.option("--as-of", "as_of", default=None, help="The report's day (default: the last build's as-of day).")
@click.option(
    "--period",
    "period_days",
    type=click.IntRange(min=1),
    default=None,
    help="Days of the rates' period (compared with as many days before): one of the lengths the marts hold. "
    "Default: the dashboard's, 30 days.",
)
@click.option(
    "--tenant",
    default=None,
    help="One tenant (its name or key): only its rows; sources without a tenant are left out. Default: all tenants.",
)
@click.option("--pdf", is_flag=True, help="Also print the report to PDF with chromium.")
@db_option
def report(
    out: Path, as_of: str | None, period_days: int | None, tenant: str | None, pdf: bool, db: str | None
) -> None:
    """Write one self-contained HTML report (opens from disk, no network) of the marts: headline rates with
    intervals, weekly trends, skills that got worse, hotspots, the eval matrix, retention. It opens with what
    needs attention: significant worsenings, regressions against the pinned baseline, sources that stopped."""
    warehouse = existing_warehouse(db, missing="run `feedback-analytics ingest ...` and `build` first")
    path = warehouse.path
    if not out.parent.is_dir():
        raise click.BadParameter(f"folder {out.parent} does not exist", param_hint="--out")
    day = parse_cli_as_of(as_of, refuse_future=False).day if as_of else None
    # st.cache_data warns for every cached query outside a server, from its import on (its in-memory cache
    # is right for one report)
    caching = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    caching.addFilter(lambda record: "No runtime found" not in record.getMessage())
    from dashboards.data import WarehouseUnavailable
    from dashboards.filters import DEFAULT_PERIOD
    from dashboards.report import build_report, print_pdf, write  # imports Streamlit and Plotly: only here

    try:
        made = build_report(warehouse, as_of=day, period_days=period_days or DEFAULT_PERIOD, tenant=tenant)
    except WarehouseUnavailable as exc:  # a serving file held by a foreign writer, or one that lacks a mart
        raise UserError(f"cannot read the serving file of {path}: {exc}") from None
    except duckdb.Error as exc:  # published by an older version: a mart or a column of this one is missing
        first = str(exc).strip().splitlines()[0]
        raise UserError(
            f"the serving file of {path} lacks what this version reports ({first}): run `feedback-analytics build`"
        ) from None
    try:
        write(out, made.html)
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    click.echo(f"wrote {out} ({len(made.html) / 1e6:.1f} MB, {made.charts} charts, data as of {made.as_of})")
    _say_unpublished(path)
    if pdf:
        print_pdf(out, out.with_suffix(".pdf"))
        click.echo(f"wrote {out.with_suffix('.pdf')}")


def _say_unpublished(db: Path) -> None:
    """On stderr, when the warehouse holds a newer build than the serving file that was read."""
    message = unpublished_note(db)
    if message:
        click.echo(f"warning: {message}", err=True)
