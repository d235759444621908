"""Where notifications go: the `[alerts]` table of the config file, secrets from the environment.

    [alerts]
    webhook_url_env = "ALERTS_WEBHOOK_URL"              # a generic JSON webhook
    slack_webhook_url_env = "ALERTS_SLACK_WEBHOOK_URL"  # a Slack-compatible incoming webhook
    smtp_url_env = "ALERTS_SMTP_URL"                    # smtp://user:password@host:587 (STARTTLS), or smtps://
    email_from = "feedback-analytics@example.com"
    email_to = ["ml-team@example.com"]
    timeout_seconds = 10   # per request
    retries = 3            # after the first attempt, on connection errors, time-outs and 5xx
    backoff_seconds = 1    # before the first retry, doubling
    reminder_days = 3      # remind of an alert firing this long (0: never)

The file names environment VARIABLES, after the pattern of `postgres_dsn_env`
(ingest/config.py): a URL, host or password written in the file is refused,
and never echoed. Nothing here prints a URL: `redact` keeps scheme://host.
"""

from __future__ import annotations

import base64
import os
import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from warehouse.config_file import read_config_file
from warehouse.errors import UserError

ENV_KEYS = ("webhook_url_env", "slack_webhook_url_env", "smtp_url_env")
KEYS = (*ENV_KEYS, "email_from", "email_to", "timeout_seconds", "retries", "backoff_seconds", "reminder_days")
URL_LOOKING = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://|^\s*[^@\s]+:[^@\s]*@")  # scheme:// or user:password@
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ADDRESS = re.compile(r"^[^@\s<>,;\"]+@[^@\s<>,;\"]+$")  # one bare address: no display name, no list


def redact(url: str) -> str:
    """scheme://host: what a message may say about a URL (no user, password, port, path or query)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
    except ValueError:
        return "<unparseable URL>"
    return f"{parts.scheme or '?'}://{host}"


@dataclass(frozen=True)
class WebhookChannel:
    """An HTTP(S) endpoint that takes one JSON POST per notification."""

    name: str  # "webhook" or "slack"
    env_var: str
    url: str = field(repr=False)

    @property
    def target(self) -> str:
        return redact(self.url)

    @property
    def secrets(self) -> tuple[str, ...]:
        """Pieces of the URL no message may contain (a Slack URL's path is its token)."""
        parts = urlsplit(self.url)
        pieces = [self.url, parts.password or "", parts.username or "", parts.query]
        pieces += [parts.path] if len(parts.path) > 1 else []
        return tuple(piece for piece in pieces if piece)


@dataclass(frozen=True)
class EmailChannel:
    """An SMTP server (STARTTLS required on smtp://, TLS from the start on smtps://) and the addresses."""

    env_var: str
    scheme: str  # "smtp" or "smtps"
    host: str
    port: int
    username: str | None = field(repr=False)
    password: str | None = field(repr=False)
    sender: str
    recipients: tuple[str, ...]
    name: str = "email"

    @property
    def target(self) -> str:
        return f"{self.scheme}://{self.host}"

    @property
    def secrets(self) -> tuple[str, ...]:
        pieces = [self.password or "", self.username or ""]
        if self.username and self.password:  # what AUTH PLAIN and LOGIN put on the wire
            pieces.append(base64.b64encode(f"\0{self.username}\0{self.password}".encode()).decode())
            pieces.append(base64.b64encode(self.password.encode()).decode())
        return tuple(piece for piece in pieces if piece)


@dataclass(frozen=True)
class AlertSettings:
    """The `[alerts]` table, resolved: the channels and how hard to try each request."""

    webhook: WebhookChannel | None = None
    slack: WebhookChannel | None = None
    email: EmailChannel | None = None
    timeout_seconds: float = 10.0
    retries: int = 3
    backoff_seconds: float = 1.0
    reminder_days: float = 3.0
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False, compare=False)  # None: the system's CAs

    @property
    def channels(self) -> tuple[WebhookChannel | EmailChannel, ...]:
        return tuple(channel for channel in (self.webhook, self.slack, self.email) if channel is not None)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(secret for channel in self.channels for secret in channel.secrets)


def read_alert_settings(
    file: Path | None, *, environ: Mapping[str, str] | None = None, ssl_context: ssl.SSLContext | None = None
) -> AlertSettings:
    """The `[alerts]` table of a config file; no file or no table: no channel, the defaults."""
    environ = os.environ if environ is None else environ
    table = read_config_file(file).get("alerts", {}) if file is not None else {}
    where = f"config file {file}, [alerts]"
    if not isinstance(table, dict):
        raise UserError(f"config file {file}: write [alerts] as a table (webhook_url_env = ..., email_to = [...])")
    for key, value in table.items():  # before anything else: a URL in the file is never echoed, not even as a key
        if any(isinstance(item, str) and URL_LOOKING.search(item) for item in _strings(value)):
            raise UserError(
                f"{where}: {_key(key)} holds what looks like a URL or credentials; put it in an environment "
                "variable and name that variable with webhook_url_env, slack_webhook_url_env or smtp_url_env"
            )
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(map(_key, unknown))}; use {', '.join(KEYS)}")
    urls = {key: _env_value(where, key, table[key], environ) for key in ENV_KEYS if key in table}
    return AlertSettings(
        webhook=_webhook(where, "webhook", table, urls),
        slack=_webhook(where, "slack", table, urls),
        email=_email(where, table, urls),
        timeout_seconds=_number(where, table, "timeout_seconds", 10.0, least=0.001),
        retries=int(_number(where, table, "retries", 3, least=0, whole=True)),
        backoff_seconds=_number(where, table, "backoff_seconds", 1.0, least=0.0),
        reminder_days=_number(where, table, "reminder_days", 3.0, least=0.0),
        ssl_context=ssl_context,
    )


def _strings(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else [value]


def _key(key: str) -> str:
    """A key as a message may show it: one line, short (the key itself could be hostile)."""
    key = "".join(char for char in str(key) if char.isprintable())
    return repr(key if len(key) <= 40 else key[:39] + "…")


def _env_value(where: str, key: str, var: object, environ: Mapping[str, str]) -> tuple[str, str]:
    if not isinstance(var, str) or not ENV_NAME.match(var):
        raise UserError(f'{where}: {key} names an environment variable, e.g. {key} = "ALERTS_URL"')
    value = environ.get(var, "").strip()
    if not value:
        raise UserError(f"{where}: environment variable {var} (named by {key}) is not set: export it with the URL")
    return var, value


def _webhook(where: str, name: str, table: dict, urls: dict[str, tuple[str, str]]) -> WebhookChannel | None:
    key = "webhook_url_env" if name == "webhook" else "slack_webhook_url_env"
    if key not in urls:
        return None
    var, url = urls[key]
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError:
        host = None
    if parts.scheme not in ("http", "https") or not host:
        raise UserError(f"{where}: environment variable {var} (named by {key}) must hold an http:// or https:// URL")
    return WebhookChannel(name, var, url)


def _email(where: str, table: dict, urls: dict[str, tuple[str, str]]) -> EmailChannel | None:
    named = [key for key in ("smtp_url_env", "email_from", "email_to") if key in table]
    if not named:
        return None
    if len(named) < 3:
        missing = sorted({"smtp_url_env", "email_from", "email_to"} - set(named))
        raise UserError(f"{where}: e-mail needs smtp_url_env, email_from and email_to; add {', '.join(missing)}")
    var, url = urls["smtp_url_env"]
    problem = (
        f"{where}: environment variable {var} (named by smtp_url_env) must hold smtp://[user:password@]host[:port]"
    )
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise UserError(problem) from None
    if parts.scheme not in ("smtp", "smtps") or not host or parts.path not in ("", "/") or parts.query:
        raise UserError(problem + " (or smtps://)")
    if (parts.username is None) != (parts.password is None):
        raise UserError(problem + ": give both user and password, or neither")
    sender = table["email_from"]
    if not isinstance(sender, str) or not ADDRESS.match(sender):
        raise UserError(f'{where}: email_from must be one address, e.g. email_from = "alerts@example.com"')
    recipients = table["email_to"]
    if (
        not isinstance(recipients, list)
        or not recipients
        or not all(isinstance(address, str) and ADDRESS.match(address) for address in recipients)
    ):
        raise UserError(f'{where}: email_to must be a list of addresses, e.g. email_to = ["team@example.com"]')
    username = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    default_port = 465 if parts.scheme == "smtps" else 587
    return EmailChannel(var, parts.scheme, host, port or default_port, username, password, sender, tuple(recipients))


def _number(where: str, table: dict, key: str, default: float, *, least: float, whole: bool = False) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)):
        kind = "a whole number" if whole else "a number"
        raise UserError(f"{where}: {key} must be {kind}, got {type(value).__name__}")
    if value < least:
        raise UserError(f"{where}: {key} must be at least {least:g}, got {value:g}")
    return float(value)
