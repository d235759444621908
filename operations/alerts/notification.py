"""One notification about one alert, and how it reads on each channel.

Every text field may be hostile upstream text (a skill id, a rule name
written by an analyst, a summary quoting data): markup, control characters,
right-to-left overrides, megabytes. Each channel renders it safely:

- the JSON webhook: `json.dumps` escapes everything (safe by construction);
  fields are only cleaned of control characters and truncated;
- Slack: `&`, `<` and `>` escaped as Slack asks (so no `<!channel>`, no
  `<https://evil|link>`), control characters removed;
- e-mail: the subject line loses CR/LF and every other control character (no
  header injection) and is truncated; the body is plain text.

Python formats the numbers here; it computes none (the rules' marts do).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from typing import Literal

Kind = Literal["firing", "resolved", "reminder"]
KINDS: tuple[Kind, ...] = ("firing", "resolved", "reminder")

FIELD_LIMIT = 500  # characters of one text field on any channel
SUMMARY_LIMIT = 2000
SUBJECT_LINE_LIMIT = 200  # an e-mail's Subject (RFC 5322 advises lines under 78, folding handles the rest)
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")  # can reorder what a reader sees


@dataclass(frozen=True)
class Notification:
    """A state change of one alert (or a reminder that it still fires), for one subject."""

    rule_id: str
    rule_name: str
    subject: str  # what the rule is about: a skill id, a tenant, a source, "all"
    kind: Kind
    severity: str
    metric: str
    value: float | None
    interval: tuple[float, float] | None  # (low, high), or None for rules without statistics
    n: int | None
    q_value: float | None
    firing_since: dt.datetime
    as_of: dt.datetime
    summary: str  # one line of text

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Notification.kind must be one of {', '.join(KINDS)}, got {self.kind!r}")


def clean(text: object, limit: int = FIELD_LIMIT) -> str:
    """One line: control characters and direction overrides removed, whitespace runs made one space, truncated."""
    text = str(text)[: limit * 4]  # megabytes of upstream text: only the start can show
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates cannot be sent
    text = BIDI_CONTROLS.sub("", text)
    text = "".join(" " if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char for char in text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def utc_text(moment: dt.datetime) -> str:
    """ISO 8601 UTC with a Z (a naive datetime is taken as UTC, as the warehouse stores them)."""
    moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
    return moment.isoformat().replace("+00:00", "Z")


def _finite(number: float | None) -> float | None:
    """A number JSON can carry (NaN and infinities are not JSON): None otherwise."""
    return float(number) if number is not None and math.isfinite(number) else None


def _number(number: float | None) -> str:
    finite = _finite(number)
    return "n/a" if finite is None else format(finite, ".4g")


def json_body(note: Notification) -> bytes:
    """The generic webhook's body: every field, text cleaned and truncated, then JSON-encoded."""
    low, high = note.interval if note.interval is not None else (None, None)
    body = {
        "rule_id": clean(note.rule_id),
        "rule_name": clean(note.rule_name),
        "subject": clean(note.subject),
        "kind": note.kind,
        "severity": clean(note.severity),
        "metric": clean(note.metric),
        "value": _finite(note.value),
        "interval": None if note.interval is None else {"low": _finite(low), "high": _finite(high)},
        "n": note.n,
        "q_value": _finite(note.q_value),
        "firing_since": utc_text(note.firing_since),
        "as_of": utc_text(note.as_of),
        "summary": clean(note.summary, SUMMARY_LIMIT),
    }
    return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")


def slack_escape(text: object, limit: int = FIELD_LIMIT) -> str:
    """Slack's three escapes (https://api.slack.com/reference/surfaces/formatting#escaping), after `clean`."""
    return clean(text, limit).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _evidence(note: Notification) -> str:
    evidence = f"{clean(note.metric)} = {_number(note.value)}"
    if note.interval is not None:
        evidence += f" (interval {_number(note.interval[0])} to {_number(note.interval[1])})"
    if note.n is not None:
        evidence += f", n = {note.n}"
    if note.q_value is not None:
        evidence += f", q = {_number(note.q_value)}"
    return evidence


def _headline(note: Notification) -> str:
    return f"[{clean(note.severity, 40)}] {note.kind.upper()}: {clean(note.rule_name)} / {clean(note.subject)}"


SLACK_MARK = {"firing": ":rotating_light:", "resolved": ":white_check_mark:", "reminder": ":hourglass:"}


def slack_body(note: Notification) -> bytes:
    """A Slack-compatible incoming webhook's body: {"text": ...}, every piece of upstream text escaped."""
    lines = [
        f"{SLACK_MARK[note.kind]} *{note.kind.upper()}* [{slack_escape(note.severity, 40)}] "
        f"{slack_escape(note.rule_name)} ({slack_escape(note.rule_id)}): {slack_escape(note.subject)}",
        slack_escape(note.summary, SUMMARY_LIMIT),
        slack_escape(_evidence(note), SUMMARY_LIMIT),
        f"firing since {utc_text(note.firing_since)}, as of {utc_text(note.as_of)}",
    ]
    return json.dumps({"text": "\n".join(lines)}, ensure_ascii=False).encode("utf-8")


def subject_line(note: Notification) -> str:
    """The e-mail's Subject: one line (no CR/LF can reach the header), at most SUBJECT_LINE_LIMIT characters."""
    return clean(_headline(note), SUBJECT_LINE_LIMIT)


def email_message(note: Notification, sender: str, recipients: tuple[str, ...]) -> EmailMessage:
    """One plain-text e-mail for one notification."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message["Subject"] = subject_line(note)
    message["Date"] = format_datetime(dt.datetime.now(dt.UTC))
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "localhost")  # never getfqdn(): DNS
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to the alerts
    message.set_content(
        "\n".join(
            [
                clean(note.summary, SUMMARY_LIMIT),
                "",
                f"rule: {clean(note.rule_name)} ({clean(note.rule_id)})",
                f"subject: {clean(note.subject)}",
                f"state: {note.kind}, severity {clean(note.severity, 40)}",
                f"evidence: {_evidence(note)}",
                f"firing since: {utc_text(note.firing_since)}",
                f"as of: {utc_text(note.as_of)}",
                "",
                "Sent by feedback-analytics alerts.",
            ]
        )
        + "\n"
    )
    return message
