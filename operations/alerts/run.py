"""`feedback-analytics alerts`: what the alert marts say, delivered once per state change (docs/alerts.md).

The episodes come from `marts.alert_states` in the SERVING file (what the last
successful build published, the same rows the Alerts page shows); what was
already delivered comes from the notification log `raw.alert_notifications` in
the warehouse. Per channel, an episode (rule, subject, firing_since) gets:

- `firing` while it fires and no firing was delivered on that channel;
- `resolved` once it resolved, its firing was delivered on that channel and
  its resolution was not;
- `reminder` while it still fires and the last delivery of it on that channel
  (firing or reminder) is at least `reminder_days` old (0: never).

Every attempt is a log row, all of a run written in one transaction after the
deliveries; a delivery that failed is not a delivered one, so the next run
tries it again. Deciding is bookkeeping, not a formula: the marts decided what
fires; Python only compares what was delivered with what they say.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from operations.alerts.channels import AlertSettings, read_alert_settings
from operations.alerts.delivery import Delivery, DeliveryReport, deliver, delivery_log_rows
from operations.alerts.notification import Kind, Notification
from warehouse.connection import connect, connect_serving
from warehouse.errors import UserError
from warehouse.location import Warehouse
from warehouse.printable import printable

LOG_TABLE = "raw.alert_notifications"
TEXT_LIMIT = 120  # characters of one upstream value on a printed line
BUILD_HINT = "run `feedback-analytics build` (or the nightly) first"

# what a notification needs of an episode: alert_states, and the change interval of its last evaluation
EPISODES_SQL = """
select
    states.rule_id, states.rule_name, states.metric, states.subject, states.severity,
    cast(states.firing_since as date) as firing_since,
    cast(states.resolved_on as date) as resolved_on,
    states.is_firing, states.value, states.baseline_value, states.value_change, states.n, states.baseline_n,
    states.q_value, states.description, evaluations.change_ci_low, evaluations.change_ci_high
from marts.alert_states as states
left join marts.alert_evaluations as evaluations
    on states.rule_id = evaluations.rule_id
    and states.subject = evaluations.subject
    and states.last_evaluated_on = evaluations.evaluated_on
order by states.severity, states.rule_id, states.subject, states.firing_since
"""


@dataclass(frozen=True)
class Episode:
    """One row of alert_states (one episode of one alert) with what its messages say."""

    rule_id: str
    rule_name: str
    metric: str
    subject: str
    severity: str
    firing_since: dt.date
    resolved_on: dt.date | None
    is_firing: bool
    value: float | None
    baseline_value: float | None
    value_change: float | None
    n: int | None
    baseline_n: int | None
    q_value: float | None
    description: str | None
    change_ci_low: float | None
    change_ci_high: float | None

    @property
    def key(self) -> tuple[str, str, dt.date]:
        return (self.rule_id, self.subject, self.firing_since)


@dataclass(frozen=True)
class AlertsRun:
    """What one run found and did: the episodes, the notifications per channel, the delivery report."""

    as_of: dt.datetime
    episodes: tuple[Episode, ...]
    planned: dict[str, tuple[Notification, ...]]
    report: DeliveryReport | None  # None: a dry run, or no channel

    @property
    def firing(self) -> tuple[Episode, ...]:
        return tuple(episode for episode in self.episodes if episode.is_firing)

    def summary(self) -> str:
        """One line: sent and failed, per channel (targets are scheme://host; errors are redacted)."""
        if self.report is None:
            return f"{len(self.firing)} alert(s) firing; nothing sent"
        per_channel: dict[str, list[int]] = {}
        for delivery in self.report.deliveries:
            counts = per_channel.setdefault(f"{delivery.channel} {delivery.target}", [0, 0])
            counts[0 if delivery.delivered else 1] += 1
        channels = "; ".join(f"{name}: {sent} sent, {failed} failed" for name, (sent, failed) in per_channel.items())
        line = f"sent {self.report.delivered}, failed {self.report.failed}" + (f" ({channels})" if channels else "")
        return f"{len(self.firing)} alert(s) firing; {line}"


def text(value: object) -> str:
    """An upstream value on a printed line: control characters escaped, one line, at most TEXT_LIMIT characters."""
    shown = printable("" if value is None else value)
    return shown if len(shown) <= TEXT_LIMIT else shown[: TEXT_LIMIT - 1] + "…"


def _number(value: float | None) -> str:
    return "n/a" if value is None else format(value, ".4g")


def firing_line(episode: Episode) -> str:
    """The dry run's line of one firing alert: state, severity, rule, subject, since when, the evidence."""
    evidence = f"value {_number(episode.value)}"
    if episode.baseline_value is not None:
        evidence += f" vs {_number(episode.baseline_value)}"
    if episode.n is not None:
        evidence += f" (n {episode.n}" + (f" vs {episode.baseline_n})" if episode.baseline_n is not None else ")")
    if episode.q_value is not None:
        evidence += f", q {_number(episode.q_value)}"
    return (
        f"firing  {text(episode.severity)}  {text(episode.rule_id)}  {text(episode.subject)}  "
        f"since {episode.firing_since.isoformat()}  {evidence}"
    )


def delivery_line(delivery: Delivery) -> str:
    """One line per notification and channel: sent or FAILED, the kind, where, the rule and subject, the error."""
    note = delivery.notification
    line = (
        f"{'sent  ' if delivery.delivered else 'FAILED'}  {note.kind:<8}  {delivery.channel} {delivery.target}  "
        f"{text(note.rule_id)}  {text(note.subject)}  since {note.firing_since.date().isoformat()}"
    )
    return line + (f"  ({text(delivery.error)})" if delivery.error else "")


def read_episodes(warehouse: Warehouse) -> tuple[dt.datetime, list[Episode]]:
    """The as-of instant and every episode of the serving file's alert_states."""
    con = connect_serving(warehouse)
    try:
        found = {
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables where table_schema = 'marts'"
            ).fetchall()
        }
        missing = sorted({"alert_states", "alert_evaluations", "build_info"} - found)
        if missing:
            raise UserError(
                f"the serving file {warehouse.serving} has no marts.{missing[0]} (built by an older version or "
                f"not yet built): {BUILD_HINT}"
            )
        (as_of,) = con.execute("select max(as_of_at) from marts.build_info").fetchone() or (None,)
        cursor = con.execute(EPISODES_SQL)
        names = [column[0] for column in cursor.description]
        episodes = [Episode(**dict(zip(names, row, strict=True))) for row in cursor.fetchall()]
    except duckdb.Error as exc:
        raise UserError(f"cannot read the alert marts of {warehouse.serving}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    if as_of is None:
        raise UserError(f"the serving file {warehouse.serving} names no build: {BUILD_HINT}")
    return _utc(as_of), episodes


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def read_delivered(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str, str, dt.date, str], dt.datetime]:
    """(channel, rule_id, subject, firing_since, kind) -> the last successful delivery of that kind."""
    rows = con.execute(
        f"""
        select channel, rule_id, subject, firing_since, kind, max(delivered_at)
        from {LOG_TABLE}
        where outcome = 'delivered'
        group by all
        """
    ).fetchall()
    return {(channel, rule, subject, since, kind): _utc(at) for channel, rule, subject, since, kind, at in rows}


def plan(
    episodes: Iterable[Episode],
    delivered: dict[tuple[str, str, str, dt.date, str], dt.datetime],
    channels: Iterable[str],
    *,
    now: dt.datetime,
    reminder_days: float,
    as_of: dt.datetime,
) -> dict[str, tuple[Notification, ...]]:
    """Per channel, the notifications this run owes (see the module's note)."""
    episodes = list(episodes)
    planned: dict[str, tuple[Notification, ...]] = {}
    for channel in channels:
        notes: list[Notification] = []
        for episode in episodes:
            fired = delivered.get((channel, *episode.key, "firing"))
            if episode.is_firing and fired is None:
                notes.append(notification(episode, "firing", as_of))
            elif episode.resolved_on is not None and fired is not None:
                if (channel, *episode.key, "resolved") not in delivered:
                    notes.append(notification(episode, "resolved", as_of))
            elif episode.is_firing and fired is not None and reminder_days > 0:
                last = max(fired, delivered.get((channel, *episode.key, "reminder"), fired))
                if now - last >= dt.timedelta(days=reminder_days):
                    notes.append(notification(episode, "reminder", as_of))
        planned[channel] = tuple(notes)
    return planned


def notification(episode: Episode, kind: Kind, as_of: dt.datetime) -> Notification:
    """The notification of one episode, every field from the marts (Python formats numbers, computes none)."""
    parts = [episode.description or episode.rule_name]
    if kind == "resolved" and episode.resolved_on is not None:
        parts.append(f"Resolved on {episode.resolved_on.isoformat()}.")
    evidence = f"Recent {_number(episode.value)}"
    if episode.baseline_value is not None:
        evidence += f" against {_number(episode.baseline_value)} before"
    if episode.n is not None:
        evidence += f" (n {episode.n}" + (f" and {episode.baseline_n})" if episode.baseline_n is not None else ")")
    if episode.value_change is not None:
        evidence += f", change {episode.value_change:+.4g}"
        if episode.change_ci_low is not None and episode.change_ci_high is not None:
            evidence += f" (interval {_number(episode.change_ci_low)} to {_number(episode.change_ci_high)})"
    parts.append(evidence + ".")
    return Notification(
        rule_id=episode.rule_id,
        rule_name=episode.rule_name,
        subject=episode.subject,
        kind=kind,
        severity=episode.severity,
        metric=episode.metric,
        value=episode.value,
        interval=None,  # the marts' interval is of the change, named in the summary
        n=episode.n,
        q_value=episode.q_value,
        firing_since=dt.datetime.combine(episode.firing_since, dt.time(), tzinfo=dt.UTC),
        as_of=as_of,
        summary=" ".join(parts),
    )


def log_rows(report: DeliveryReport, run_id: str, as_of: dt.datetime) -> list[dict[str, Any]]:
    """The log rows of a run: `delivery_log_rows` of each delivery, with its ids, episode and target."""
    rows = []
    for delivery in report.deliveries:
        delivery_id = str(uuid.uuid4())
        for row in delivery_log_rows(DeliveryReport((delivery,))):
            rows.append(
                {
                    **row,
                    "delivered_at": _naive(row["delivered_at"]),  # type: ignore[arg-type]
                    "delivery_id": delivery_id,
                    "run_id": run_id,
                    "target": delivery.target,
                    "firing_since": delivery.notification.firing_since.date(),
                    "as_of_at": _naive(as_of),
                }
            )
    return rows


def _naive(moment: dt.datetime) -> dt.datetime:
    """UTC without a zone, as the warehouse stores timestamps."""
    return moment.astimezone(dt.UTC).replace(tzinfo=None)


def write_log(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    """Every attempt of the run, in one transaction."""
    if not rows:
        return
    columns = list(rows[0])
    statement = f"insert into {LOG_TABLE} ({', '.join(columns)}) values ({', '.join('?' for _ in columns)})"
    con.execute("begin transaction")
    try:
        con.executemany(statement, [[row[column] for column in columns] for row in rows])
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise


def run_alerts(
    warehouse: Warehouse,
    settings: AlertSettings,
    *,
    dry_run: bool,
    log: logging.Logger,
    now: dt.datetime | None = None,
) -> AlertsRun:
    """Read the marts and the log, deliver what is owed (unless a dry run), log every attempt."""
    as_of, episodes = read_episodes(warehouse)
    names = [channel.name for channel in settings.channels]
    now = now or dt.datetime.now(dt.UTC)
    if dry_run or not names:
        con = connect(warehouse.path, read_only=True)  # a dry run writes nothing, not even the log table
        try:
            delivered = read_delivered(con)
        finally:
            con.close()
        planned = plan(episodes, delivered, names, now=now, reminder_days=settings.reminder_days, as_of=as_of)
        return AlertsRun(as_of, tuple(episodes), planned, None)
    con = connect(warehouse.path)  # creates raw.alert_notifications on a warehouse of an older version
    try:
        delivered = read_delivered(con)
        planned = plan(episodes, delivered, names, now=now, reminder_days=settings.reminder_days, as_of=as_of)
        deliveries = []
        for channel in settings.channels:  # one channel at a time: a channel's retries never delay another's log
            only = dataclasses.replace(
                settings, **{other.name: None for other in settings.channels if other is not channel}
            )
            deliveries.extend(deliver(planned[channel.name], only, log=log).deliveries)
        report = DeliveryReport(tuple(deliveries))
        write_log(con, log_rows(report, str(uuid.uuid4()), as_of))
    finally:
        con.close()
    return AlertsRun(as_of, tuple(episodes), planned, report)


def nightly_alerts_step(warehouse: Warehouse, config_file: Path | None, logger: logging.Logger) -> str:
    """The nightly's `alerts` step: its summary line; a UserError when a delivery failed (the run exits 1).

    No channel configured is no failure here: a nightly without an [alerts] table keeps exiting 0."""
    settings = read_alert_settings(config_file)
    if not settings.channels:
        firing = len(run_alerts(warehouse, settings, dry_run=True, log=logger).firing)
        return f"{firing} alert(s) firing; no channel configured ([alerts] in --config): nothing sent"
    done = run_alerts(warehouse, settings, dry_run=False, log=logger)
    report = done.report
    for delivery in report.deliveries if report is not None else ():
        logger.info("alerts: %s", delivery_line(delivery), extra={"detail": True})
    if report is not None and report.failed:
        raise UserError(done.summary() + " (tried again by the next run)")
    return done.summary()
