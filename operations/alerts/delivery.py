"""Send notifications: one request per notification and channel, retried, timed, recorded; never raising.

Per request: a time limit (`timeout_seconds`, on every socket operation:
connect, each read and write), retries with exponential backoff on connection
errors, time-outs, 5xx (and 408 and 429, which say "try again") but not on
another 4xx or a TLS certificate error, and a record per attempt. A request
whose retries run out marks its channel as down for the rest of the run: the
channel's later notifications get one attempt each, so a dead receiver costs
one request's worth of retries, not one per notification.

E-mail: one message per notification, not one digest per run. The rules
already keep the count down (state changes only, sustained, false discoveries
controlled), a subject line naming the rule and the subject is what mail
filters and threads key on, and the report and the delivery log stay one
row per notification and channel, on every channel alike.

A delivery failure is a result, not an exception: `deliver` returns the report,
the caller decides the exit status (`report.failed`). No message, record or log
line holds a URL (scheme://host only), a password or a token.
"""

from __future__ import annotations

import datetime as dt
import logging
import smtplib
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from operations.alerts.channels import AlertSettings, EmailChannel, WebhookChannel
from operations.alerts.notification import Notification, clean, email_message, json_body, slack_body

Outcome = Literal["delivered", "retrying", "failed"]
RETRY_STATUS = {408, 429}  # 4xx that mean "later", as 5xx do
ERROR_LIMIT = 300  # characters of an error in the report and the log


@dataclass(frozen=True)
class Attempt:
    number: int  # 1, 2, ...
    started_at: dt.datetime  # UTC
    outcome: Outcome  # retrying: this attempt failed and another follows
    http_status: int | None
    error: str | None  # redacted
    seconds: float


@dataclass(frozen=True)
class Delivery:
    """One notification on one channel: its attempts and how it ended."""

    notification: Notification
    channel: str  # webhook, slack, email
    target: str  # scheme://host
    attempts: tuple[Attempt, ...]

    @property
    def delivered(self) -> bool:
        return bool(self.attempts) and self.attempts[-1].outcome == "delivered"

    @property
    def error(self) -> str | None:
        return None if self.delivered or not self.attempts else self.attempts[-1].error

    @property
    def seconds(self) -> float:
        return sum(attempt.seconds for attempt in self.attempts)


@dataclass(frozen=True)
class DeliveryReport:
    deliveries: tuple[Delivery, ...]

    @property
    def delivered(self) -> int:
        return sum(delivery.delivered for delivery in self.deliveries)

    @property
    def failed(self) -> int:
        return len(self.deliveries) - self.delivered

    def summary(self) -> str:
        """One line for the nightly's summary: counts, and the channels that failed with their last error."""
        line = f"{self.delivered} notification(s) delivered, {self.failed} failed"
        failures = {(d.channel, d.target): d.error for d in self.deliveries if not d.delivered}
        details = [f"{channel} {target}: {error}" for (channel, target), error in failures.items()]
        return line + (f" ({'; '.join(details)})" if details else "")


class _Failure(Exception):
    """A failed attempt, already redacted: whether to retry and the HTTP status, if any."""

    def __init__(self, message: str, *, retry: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.retry, self.status = retry, status


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A webhook that redirects fails (no retry): a POST must not wander to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def deliver(notifications: Iterable[Notification], settings: AlertSettings, *, log: logging.Logger) -> DeliveryReport:
    """Every notification to every configured channel. Never raises for a delivery failure."""
    deliveries: list[Delivery] = []
    down: set[str] = set()  # channels whose retries ran out this run: one attempt per notification from then on
    for note in notifications:
        for channel in settings.channels:
            send = _sender(channel, note, settings)
            tries = 1 if channel.name in down else settings.retries + 1
            delivery = _try(note, channel, send, tries, settings, log)
            deliveries.append(delivery)
            if delivery.delivered:
                down.discard(channel.name)
            elif len(delivery.attempts) == tries:  # retries ran out (a 4xx stops earlier and says nothing of the rest)
                down.add(channel.name)
    return DeliveryReport(tuple(deliveries))


def delivery_log_rows(report: DeliveryReport) -> list[dict[str, object]]:
    """One row per attempt, for the delivery log table (error redacted; subject as the warehouse holds it)."""
    return [
        {
            "delivered_at": attempt.started_at,
            "channel": delivery.channel,
            "rule_id": delivery.notification.rule_id,
            "subject": delivery.notification.subject,
            "kind": delivery.notification.kind,
            "attempt": attempt.number,
            "outcome": attempt.outcome,
            "http_status": attempt.http_status,
            "error": attempt.error,
            "seconds": round(attempt.seconds, 6),
        }
        for delivery in report.deliveries
        for attempt in delivery.attempts
    ]


def _try(
    note: Notification,
    channel: WebhookChannel | EmailChannel,
    send: Callable[[], int | None],
    tries: int,
    settings: AlertSettings,
    log: logging.Logger,
) -> Delivery:
    attempts: list[Attempt] = []
    what = f"{note.kind} {clean(note.rule_id, 80)} / {clean(note.subject, 80)} to {channel.name} {channel.target}"
    for number in range(1, tries + 1):
        started_at, start = dt.datetime.now(dt.UTC), time.monotonic()
        try:
            status = send()
        except _Failure as failure:
            error = _scrub(str(failure), settings.secrets)
            again = failure.retry and number < tries
            attempts.append(
                Attempt(number, started_at, "retrying" if again else "failed", failure.status, error, _since(start))
            )
            log.warning("alert %s: attempt %d failed: %s", what, number, error)
            if not again:
                break
            time.sleep(settings.backoff_seconds * 2 ** (number - 1))
        except Exception as exc:  # a bug or a surprise must not undo the caller's data steps either
            error = _scrub(f"unexpected {type(exc).__name__}: {exc}", settings.secrets)
            attempts.append(Attempt(number, started_at, "failed", None, error, _since(start)))
            log.error("alert %s: attempt %d failed: %s", what, number, error)
            break
        else:
            attempts.append(Attempt(number, started_at, "delivered", status, None, _since(start)))
            log.info("alert %s: delivered (attempt %d)", what, number)
            break
    return Delivery(note, channel.name, channel.target, tuple(attempts))


def _since(start: float) -> float:
    return time.monotonic() - start


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    """The error as one short line with every secret replaced by ***."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return clean(text, ERROR_LIMIT)


def _sender(channel: WebhookChannel | EmailChannel, note: Notification, settings: AlertSettings) -> Callable[[], Any]:
    """What one attempt does (rendering included, so that a rendering error is a failed attempt too)."""
    if isinstance(channel, EmailChannel):
        return lambda: _send_email(channel, email_message(note, channel.sender, channel.recipients), settings)
    render = json_body if channel.name == "webhook" else slack_body
    return lambda: _post(channel, render(note), settings)


def _post(channel: WebhookChannel, body: bytes, settings: AlertSettings) -> int:
    """One POST; the status on 2xx, else a _Failure saying whether to retry."""
    request = urllib.request.Request(
        channel.url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json; charset=utf-8", "User-Agent": "feedback-analytics-alerts"},
    )
    handlers: list[urllib.request.BaseHandler] = [_NoRedirects()]
    if channel.url.lower().startswith("https:"):
        handlers.append(urllib.request.HTTPSHandler(context=settings.ssl_context or ssl.create_default_context()))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=settings.timeout_seconds) as response:
            response.read(65536)
            return response.status
    except urllib.error.HTTPError as exc:
        try:  # the receiver's reason (Slack says "invalid_token"), if it comes at once
            reply = clean(exc.read(200).decode("utf-8", "replace"), 200) if exc.fp is not None else ""
        except OSError:
            reply = ""
        finally:
            exc.close()
        retry = exc.code >= 500 or exc.code in RETRY_STATUS
        raise _Failure(f"HTTP {exc.code}" + (f": {reply}" if reply else ""), retry=retry, status=exc.code) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise _Failure(f"TLS certificate not trusted: {reason.verify_message}", retry=False) from None
        raise _Failure(f"cannot connect: {reason}", retry=True) from None
    except TimeoutError:
        raise _Failure(f"no answer within {settings.timeout_seconds:g} s", retry=True) from None
    except ValueError as exc:  # a URL urllib cannot send (a space, a control character)
        raise _Failure(f"invalid URL: {type(exc).__name__}", retry=False) from None
    except OSError as exc:  # the connection dropped while reading (reset, remote closed)
        raise _Failure(f"connection lost: {type(exc).__name__}: {exc}", retry=True) from None


def _send_email(channel: EmailChannel, message: Any, settings: AlertSettings) -> None:
    """One message over SMTP with STARTTLS (required) or implicit TLS; a _Failure saying whether to retry."""
    context = settings.ssl_context or ssl.create_default_context()
    timeout = settings.timeout_seconds
    try:
        if channel.scheme == "smtps":
            server: smtplib.SMTP = smtplib.SMTP_SSL(channel.host, channel.port, timeout=timeout, context=context)
        else:
            server = smtplib.SMTP(channel.host, channel.port, timeout=timeout)
        with server:
            if channel.scheme == "smtp":
                server.ehlo()
                if not server.has_extn("starttls"):
                    raise _Failure("the server does not offer STARTTLS: refusing to send in clear", retry=False)
                server.starttls(context=context)
                server.ehlo()
            if channel.username is not None and channel.password is not None:
                server.login(channel.username, channel.password)
            server.send_message(message)
    except _Failure:
        raise
    except smtplib.SMTPRecipientsRefused as exc:
        codes = sorted({code for code, _ in exc.recipients.values()})
        raise _Failure(f"recipients refused (SMTP {codes})", retry=all(400 <= code < 500 for code in codes)) from None
    except smtplib.SMTPResponseException as exc:  # 4xx: try again later; 5xx: permanent (bad login, refused)
        reply = exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes) else exc.smtp_error
        raise _Failure(f"SMTP {exc.smtp_code}: {reply}", retry=400 <= exc.smtp_code < 500) from None
    except ssl.SSLCertVerificationError as exc:
        raise _Failure(f"TLS certificate not trusted: {exc.verify_message}", retry=False) from None
    except (smtplib.SMTPServerDisconnected, TimeoutError) as exc:
        raise _Failure(f"no answer within {timeout:g} s or disconnected: {type(exc).__name__}", retry=True) from None
    except smtplib.SMTPException as exc:  # not supported, no AUTH mechanism in common, sender refused
        raise _Failure(f"SMTP: {type(exc).__name__}: {exc}", retry=False) from None
    except OSError as exc:  # refused, unreachable, reset, a TLS handshake cut short
        raise _Failure(f"cannot connect: {type(exc).__name__}: {exc}", retry=True) from None
