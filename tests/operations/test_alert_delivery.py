"""Alert delivery (issue 29) against real receivers on loopback: no mocks.

An HTTP server answering 200, 500 then 200, always 500, 404 and stalling;
an aiosmtpd server requiring STARTTLS (a self-signed certificate made by the
test) and AUTH. What must hold: one JSON POST per notification naming the rule
and the subject; retries on 5xx and time-outs only, within a time bound; a
failure is counted in the report, never raised; hostile text cannot inject
markup or headers; config mistakes are one-line errors; no URL, token or
password appears in the report, the log rows, a log line or an error.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import time
from pathlib import Path

import pytest

from operations.alerts import (
    AlertSettings,
    Notification,
    WebhookChannel,
    deliver,
    delivery_log_rows,
    read_alert_settings,
)
from tests.support.alert_receivers import free_port, http_receiver, smtp_receiver
from warehouse.errors import UserError

TOKEN = "s3cr3t-t0ken"  # in the receivers' URL path, as in a Slack webhook URL
PASSWORD = "pa55-w0rd-XYZ"
AS_OF = dt.datetime(2026, 11, 15, 23, 59, 59, tzinfo=dt.UTC)
FAST = {"timeout_seconds": 0.5, "retries": 2, "backoff_seconds": 0.05}
LOG = logging.getLogger("tests.alert_delivery")
LOG_COLUMNS = [
    "delivered_at",
    "channel",
    "rule_id",
    "subject",
    "kind",
    "attempt",
    "outcome",
    "http_status",
    "error",
    "seconds",
]


def note(subject: str = "skill-refactor", **changes: object) -> Notification:
    fields: dict[str, object] = {
        "rule_id": "skill_correction_rate_worse",
        "rule_name": "A skill's correction rate got worse",
        "subject": subject,
        "kind": "firing",
        "severity": "high",
        "metric": "correction_rate",
        "value": 0.31,
        "interval": (0.25, 0.37),
        "n": 412,
        "q_value": 0.004,
        "firing_since": dt.datetime(2026, 11, 13, tzinfo=dt.UTC),
        "as_of": AS_OF,
        "summary": "correction rate 31% (was 19%), significant after Benjamini-Hochberg",
    }
    return Notification(**{**fields, **changes})  # type: ignore[arg-type]


def webhook(url: str, name: str = "webhook", **settings: float) -> AlertSettings:
    channel = WebhookChannel(name, "ALERTS_URL", url)
    where = {"webhook": channel} if name == "webhook" else {"slack": channel}
    return AlertSettings(**where, **{**FAST, **settings})  # type: ignore[arg-type]


def assert_no_secret(report: object, caplog: pytest.LogCaptureFixture, *secrets: str) -> None:
    texts = [repr(report), repr(delivery_log_rows(report)), caplog.text, report.summary()]  # type: ignore[attr-defined]
    for secret in secrets:
        assert all(secret not in text for text in texts), secret


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loopback receivers are reached directly, whatever proxy the machine sets."""
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


def test_one_json_post_per_notification_naming_the_rule_and_the_subject(caplog: pytest.LogCaptureFixture) -> None:
    with http_receiver("200") as receiver:
        report = deliver([note("skill-a"), note("skill-b", kind="resolved")], webhook(receiver.url), log=LOG)
    assert (report.delivered, report.failed) == (2, 0)
    assert len(receiver.requests) == 2
    first = receiver.requests[0]
    assert first.headers["Content-Type"].startswith("application/json")
    body = json.loads(first.body)
    assert body["rule_id"] == "skill_correction_rate_worse"
    assert body["rule_name"] == "A skill's correction rate got worse"
    assert body["subject"] == "skill-a"
    assert body["interval"] == {"low": 0.25, "high": 0.37}
    assert (body["value"], body["n"], body["q_value"]) == (0.31, 412, 0.004)
    assert (body["firing_since"], body["as_of"]) == ("2026-11-13T00:00:00Z", "2026-11-15T23:59:59Z")
    assert json.loads(receiver.requests[1].body)["kind"] == "resolved"
    rows = delivery_log_rows(report)
    assert [(r["channel"], r["subject"], r["attempt"], r["outcome"], r["http_status"]) for r in rows] == [
        ("webhook", "skill-a", 1, "delivered", 200),
        ("webhook", "skill-b", 1, "delivered", 200),
    ]
    assert list(rows[0]) == LOG_COLUMNS
    assert report.deliveries[0].target == "http://127.0.0.1"  # scheme://host: no port, path or token
    assert_no_secret(report, caplog, TOKEN)


def test_a_500_is_retried_after_the_backoff_and_then_delivered() -> None:
    with http_receiver("500", "200") as receiver:
        start = time.monotonic()
        report = deliver([note()], webhook(receiver.url), log=LOG)
        elapsed = time.monotonic() - start
    (delivery,) = report.deliveries
    assert delivery.delivered and report.failed == 0
    assert [(a.number, a.outcome, a.http_status) for a in delivery.attempts] == [
        (1, "retrying", 500),
        (2, "delivered", 200),
    ]
    assert len(receiver.requests) == 2 and receiver.requests[0].body == receiver.requests[1].body
    assert elapsed >= FAST["backoff_seconds"]


def test_retries_exhausted_is_a_counted_failure_not_an_exception(caplog: pytest.LogCaptureFixture) -> None:
    with http_receiver("500") as receiver:  # always 500, and the error page echoes the path (the token)
        report = deliver([note("skill-a"), note("skill-b")], webhook(receiver.url), log=LOG)
    assert (report.delivered, report.failed) == (0, 2)
    first, second = report.deliveries
    assert [a.outcome for a in first.attempts] == ["retrying", "retrying", "failed"]  # retries = 2
    assert len(second.attempts) == 1  # the channel is down for the rest of the run: one attempt
    assert len(receiver.requests) == 4
    assert first.error is not None and first.error.startswith("HTTP 500")
    assert "***" in first.error  # the echoed token was scrubbed
    assert "failed" in report.summary() and "http://127.0.0.1" in report.summary()
    assert_no_secret(report, caplog, TOKEN, receiver.url)


def test_a_4xx_is_not_retried() -> None:
    with http_receiver("404", "500") as receiver:  # then 500: the second notification is still retried in full
        report = deliver([note("skill-a"), note("skill-b")], webhook(receiver.url), log=LOG)
    first, second = report.deliveries
    assert [(a.outcome, a.http_status) for a in first.attempts] == [("failed", 404)]
    assert len(second.attempts) == 3 and len(receiver.requests) == 4 and report.failed == 2


def test_429_means_later_and_is_retried() -> None:
    with http_receiver("429", "200") as receiver:
        report = deliver([note()], webhook(receiver.url), log=LOG)
    assert [(a.outcome, a.http_status) for a in report.deliveries[0].attempts] == [
        ("retrying", 429),
        ("delivered", 200),
    ]


def test_a_redirect_is_not_followed() -> None:
    with http_receiver("302", "200") as receiver:
        report = deliver([note()], webhook(receiver.url), log=LOG)
    assert [(a.outcome, a.http_status) for a in report.deliveries[0].attempts] == [("failed", 302)]
    assert [request.path for request in receiver.requests] == ["/services/T000/B000/s3cr3t-t0ken"]  # nothing else


def test_a_stalled_receiver_is_cut_off_by_the_time_limit() -> None:
    timeout, retries, backoff = 0.3, 1, 0.05
    with http_receiver("stall", stall_seconds=10) as receiver:
        start = time.monotonic()
        report = deliver(
            [note()], webhook(receiver.url, timeout_seconds=timeout, retries=retries, backoff_seconds=backoff), log=LOG
        )
        elapsed = time.monotonic() - start
    (delivery,) = report.deliveries
    assert [a.outcome for a in delivery.attempts] == ["retrying", "failed"]  # a time-out is retried
    assert "no answer within 0.3 s" in (delivery.error or "")
    assert timeout * 2 <= elapsed < timeout * (retries + 1) + backoff + 1.0
    assert all(a.seconds < timeout + 0.5 for a in delivery.attempts)


def test_a_receiver_that_is_not_there_is_retried_and_fails_quickly() -> None:
    report = deliver([note()], webhook(f"http://127.0.0.1:{free_port()}/hook/{TOKEN}"), log=LOG)
    (delivery,) = report.deliveries
    assert [a.outcome for a in delivery.attempts] == ["retrying", "retrying", "failed"]
    assert "cannot connect" in (delivery.error or "") and TOKEN not in repr(report)


HOSTILE = "<!channel> & <https://evil.example|click here>\x00\x1b[31m\u202eevil\r\nBcc: victim@evil.example"


def test_slack_text_escapes_markup_and_drops_control_characters() -> None:
    with http_receiver("200") as receiver:
        deliver([note(HOSTILE, summary=HOSTILE)], webhook(receiver.url, name="slack"), log=LOG)
    (request,) = receiver.requests
    assert set(json.loads(request.body)) == {"text"}
    text = json.loads(request.body)["text"]
    assert "&lt;!channel&gt; &amp; &lt;https://evil.example|click here&gt;" in text
    assert "<!" not in text and "<http" not in text
    assert not any(char in text for char in "\x00\x1b\u202e\r")
    assert text.count("\n") == 3  # our four lines; the hostile CR/LF became spaces


def test_json_body_of_hostile_huge_and_non_finite_values() -> None:
    huge = "x" * 2_000_000
    with http_receiver("200") as receiver:
        deliver(
            [note(HOSTILE + huge, value=float("nan"), q_value=float("inf"), interval=None, n=None)],
            webhook(receiver.url),
            log=LOG,
        )
    (request,) = receiver.requests
    assert len(request.body) < 10_000  # truncated, not 2 MB
    body = json.loads(request.body)  # valid JSON: NaN and infinity became null
    assert (body["value"], body["q_value"], body["interval"], body["n"]) == (None, None, None, None)
    assert body["subject"].startswith("<!channel> & <https://evil.example|click here>")  # JSON carries it as text
    assert not any(char in body["subject"] for char in "\x00\x1b\u202e\r\n")


def write_config(tmp_path: Path, alerts: str) -> Path:
    config = tmp_path / "sources.toml"
    config.write_text('[[analyzer]]\npath = "analyzer/feedback-store"\n\n[alerts]\n' + alerts, encoding="utf-8")
    return config


def email_settings(tmp_path: Path, port: int, password: str, context: object) -> AlertSettings:
    config = write_config(
        tmp_path,
        'smtp_url_env = "ALERTS_SMTP_URL"\nemail_from = "alerts@example.com"\n'
        'email_to = ["ml-team@example.com", "lead@example.com"]\n'
        "timeout_seconds = 2\nretries = 2\nbackoff_seconds = 0.05\n",
    )
    environ = {"ALERTS_SMTP_URL": f"smtp://alerts:{password}@127.0.0.1:{port}"}
    return read_alert_settings(config, environ=environ, ssl_context=context)  # type: ignore[arg-type]


def test_email_over_starttls_with_auth_and_no_header_injection(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with smtp_receiver(tmp_path, "alerts", PASSWORD) as server:
        settings = email_settings(tmp_path, server.port, PASSWORD, server.client_context)
        report = deliver([note(HOSTILE), note("skill-b", kind="reminder")], settings, log=LOG)
    assert (report.delivered, report.failed) == (2, 0), report.summary()
    assert server.logins == ["alerts", "alerts"]
    (envelope, message), (_, reminder) = server.messages
    assert envelope.mail_from == "alerts@example.com"
    assert envelope.rcpt_tos == ["ml-team@example.com", "lead@example.com"]  # no Bcc smuggled in
    assert message["From"] == "alerts@example.com"
    assert message["To"] == "ml-team@example.com, lead@example.com"
    assert message["Bcc"] is None and "victim" not in str(message.keys())
    subject = message["Subject"]
    assert subject.startswith("[high] FIRING: A skill's correction rate got worse / <!channel>")
    assert "Bcc: victim@evil.example" in subject  # the hostile text stays in the subject, on one line
    assert len(subject) <= 200 and "\r" not in subject and "\n" not in subject
    assert message.get_content_type() == "text/plain"
    text = message.get_content()
    assert "correction_rate = 0.31 (interval 0.25 to 0.37), n = 412, q = 0.004" in text
    assert "firing since: 2026-11-13T00:00:00Z" in text
    assert reminder["Subject"].startswith("[high] REMINDER:")
    assert repr(settings).count(PASSWORD) == 0
    assert_no_secret(report, caplog, PASSWORD)


def test_a_wrong_smtp_password_fails_once_without_showing_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    wrong = "wr0ng-" + PASSWORD
    with smtp_receiver(tmp_path, "alerts", PASSWORD) as server:
        report = deliver([note()], email_settings(tmp_path, server.port, wrong, server.client_context), log=LOG)
    (delivery,) = report.deliveries
    assert [a.outcome for a in delivery.attempts] == ["failed"]  # 535 is permanent: no retry
    assert "SMTP 535" in (delivery.error or "") and server.messages == []
    assert_no_secret(report, caplog, wrong, PASSWORD)


def test_an_untrusted_smtp_certificate_is_refused(tmp_path: Path) -> None:
    with smtp_receiver(tmp_path, "alerts", PASSWORD) as server:
        report = deliver([note()], email_settings(tmp_path, server.port, PASSWORD, None), log=LOG)  # system CAs
    (delivery,) = report.deliveries
    assert [a.outcome for a in delivery.attempts] == ["failed"]
    assert "certificate" in (delivery.error or "") and server.messages == []


def test_a_server_without_starttls_gets_nothing_in_clear(tmp_path: Path) -> None:
    with smtp_receiver(tmp_path, "alerts", PASSWORD, starttls=False) as server:
        report = deliver([note()], email_settings(tmp_path, server.port, PASSWORD, server.client_context), log=LOG)
    (delivery,) = report.deliveries
    assert [a.outcome for a in delivery.attempts] == ["failed"]  # no retry: the server will not change its mind
    assert "does not offer STARTTLS" in (delivery.error or "") and server.messages == [] and server.logins == []


def test_the_alerts_table_is_read_with_its_defaults(tmp_path: Path) -> None:
    config = write_config(tmp_path, 'webhook_url_env = "HOOK"\nslack_webhook_url_env = "SLACK"\nreminder_days = 5\n')
    url = f"https://hooks.example.com/services/{TOKEN}"
    settings = read_alert_settings(config, environ={"HOOK": url, "SLACK": url})
    assert (
        settings.webhook is not None
        and settings.webhook.url == url
        and settings.webhook.target == "https://hooks.example.com"
    )
    assert [channel.name for channel in settings.channels] == ["webhook", "slack"]
    assert (settings.timeout_seconds, settings.retries, settings.backoff_seconds) == (10, 3, 1)
    assert settings.reminder_days == 5 and settings.email is None
    assert TOKEN not in repr(settings)
    assert read_alert_settings(None).channels == ()
    smtps = write_config(
        tmp_path, 'smtp_url_env = "SMTP"\nemail_from = "a@example.com"\nemail_to = ["b@example.com"]\n'
    )
    email = read_alert_settings(smtps, environ={"SMTP": "smtps://mail.example.com"}).email
    assert email is not None and (email.scheme, email.port, email.username) == ("smtps", 465, None)


HOOK = {"HOOK": "https://h.example.com/x"}
MISTAKES = {
    "url-in-file": (f'webhook_url = "https://hooks.example.com/{TOKEN}"', {}, "looks like a URL"),
    "url-as-env-name": (f'webhook_url_env = "https://hooks.example.com/{TOKEN}"', {}, "looks like a URL"),
    "credentials-in-file": (f'smtp_url_env = "alerts:{PASSWORD}@mail.example.com"', {}, "looks like a URL"),
    "unset-env": ('webhook_url_env = "ALERTS_HOOK"', {}, "variable ALERTS_HOOK (named by webhook_url_env) is not set"),
    "unknown-key": ('webhook_url_env = "HOOK"\nwebhok_retries = 2', HOOK, "unknown key(s) 'webhok_retries'"),
    "bad-scheme": ('webhook_url_env = "HOOK"', {"HOOK": f"ftp://h.example.com/{TOKEN}"}, "http:// or https:// URL"),
    "email-half": ('smtp_url_env = "SMTP"', {"SMTP": f"smtp://u:{PASSWORD}@h"}, "add email_from, email_to"),
    "retries": ("retries = -1", {}, "retries must be at least 0"),
    "timeout": ("timeout_seconds = true", {}, "timeout_seconds must be a number"),
}


@pytest.mark.parametrize(("alerts", "environ", "expected"), MISTAKES.values(), ids=MISTAKES.keys())
def test_config_mistakes_are_one_line_errors_without_the_secret(
    tmp_path: Path, alerts: str, environ: dict[str, str], expected: str
) -> None:
    with pytest.raises(UserError) as caught:
        read_alert_settings(write_config(tmp_path, alerts + "\n"), environ=environ)
    message = str(caught.value)
    assert expected in message and "\n" not in message
    assert TOKEN not in message and PASSWORD not in message


def test_notifications_are_frozen_and_know_their_kinds() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        note().subject = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="kind"):
        note(kind="escalated")
