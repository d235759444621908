"""The `feedback-analytics` command group, and how errors leave it: one line, an exit code.

Exit codes: 0 success (a run that quarantined rows too: it says how many and
where to look), 1 failure, 2 usage error, 75 (EX_TEMPFAIL) a nightly run
skipped because another one holds its lock.
"""

from __future__ import annotations

import sys

import click

from cli.alerts_commands import alerts
from cli.app_commands import dashboard, demo_data
from cli.ingest_commands import ingest, quarantine
from cli.operations_commands import build, forget, nightly, publish_command, purge
from cli.share_commands import export, report, serving_path_command
from warehouse.errors import UserError
from warehouse.printable import printable
from warehouse.private_files import keep_private


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="feedback-analytics")
def cli() -> None:
    """Feedback Analytics: land AI-agent feedback in DuckDB, model it with dbt, read it in Streamlit."""


for command in (
    demo_data,
    ingest,
    quarantine,
    build,
    publish_command,
    purge,
    forget,
    nightly,
    alerts,
    dashboard,
    export,
    report,
    serving_path_command,
):
    cli.add_command(command)


def main() -> None:
    try:
        keep_private()  # what DuckDB, dbt and chromium create for us is the owner's only (warehouse/private_files.py)
        code = cli.main(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except UserError as exc:
        click.echo(f"error: {printable(exc)}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted: the load in progress was rolled back", err=True)
        sys.exit(130)
    sys.exit(0)
