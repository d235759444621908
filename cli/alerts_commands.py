"""`feedback-analytics alerts`: deliver the alert marts' state changes (operations/alerts/run.py, docs/alerts.md).

Exit codes: 0 everything owed was delivered (or nothing was owed, or a dry
run), 1 a delivery failed (the next run tries it again) or the warehouse has
no alert marts yet, 2 a usage error: a bad [alerts] table, an environment
variable it names is unset, or no channel configured at all (an alerts run
that can reach nobody is a setup mistake, not a success cron should hide).
A dry run lists what fires whatever the channels: a config a real run would
refuse is one warning line on stderr after the list, and the exit stays 0.
"""

from __future__ import annotations

import logging
from pathlib import Path

import click

from cli.options import db_option, existing_warehouse
from operations.alerts import AlertSettings, read_alert_settings
from operations.alerts.run import AlertsRun, delivery_line, firing_line, run_alerts
from warehouse.errors import UserError

NO_CHANNEL = (
    "no alert channel configured: name one in the [alerts] table of --config "
    "(webhook_url_env, slack_webhook_url_env, or smtp_url_env with email_from and email_to; docs/operations.md)"
)


@click.command("alerts")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The config file whose [alerts] table names the channels (their URLs in environment variables).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print one line per firing alert and how many notifications are owed; send and write nothing.",
)
@db_option
def alerts(config_file: Path | None, dry_run: bool, db: str | None) -> None:
    """Notify the [alerts] channels of the alerts that started firing, resolved, or still fire (a reminder).

    Reads the alert marts the last build published and the delivery log (raw.alert_notifications); sends only
    what was not delivered yet. Exit codes: 0 all delivered (or nothing to send), 1 a delivery failed (retried by
    the next run) or no alert marts yet, 2 a bad or missing [alerts] configuration."""
    warehouse = existing_warehouse(db, missing="run `feedback-analytics ingest ...` and `build` first")
    unusable = None
    try:
        settings = read_alert_settings(config_file)
    except UserError as exc:
        if not dry_run:
            raise UserError(str(exc), exit_code=2) from None
        # a dry run shows what fires even where the channels are not set up (an environment variable unset on
        # this machine): it sends nothing anyway; the line after the alerts says what a real run would stop at
        settings, unusable = AlertSettings(), str(exc)
    if not settings.channels and not dry_run:
        raise UserError(NO_CHANNEL + ": nothing sent", exit_code=2)
    log = logging.getLogger("feedback_analytics.alerts")
    done = run_alerts(warehouse, settings, dry_run=dry_run, log=log)
    if dry_run:
        for episode in done.firing:
            click.echo(firing_line(episode))
        click.echo(dry_run_summary(done), err=True)  # stdout: exactly one line per firing alert
        if unusable is not None:
            click.echo(f"warning: a real run would stop here (exit 2): {unusable}", err=True)
        return
    for line in delivered_lines(done):
        click.echo(line)
    report = done.report
    if report is not None and report.failed:
        raise UserError(f"alerts: {done.summary()}: the failed ones are tried again by the next run")
    click.echo(done.summary())


def dry_run_summary(done: AlertsRun) -> str:
    owed = {channel: len(notes) for channel, notes in done.planned.items()}
    if not owed:
        return f"dry run: {len(done.firing)} alert(s) firing; no channel configured, so nothing would be sent"
    counts = ", ".join(f"{channel} {count}" for channel, count in owed.items())
    return f"dry run: {len(done.firing)} alert(s) firing; would send {counts} notification(s); nothing sent"


def delivered_lines(done: AlertsRun) -> list[str]:
    """One line per notification and channel, sent or failed."""
    if done.report is None:
        return []
    return [delivery_line(delivery) for delivery in done.report.deliveries]
