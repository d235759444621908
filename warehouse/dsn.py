"""PostgreSQL DSNs read as libpq reads them, so that their passwords can be found and kept out of every message.

libpq takes two forms (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING):

- key=value pairs separated by whitespace, spaces allowed around `=`; a value in single quotes may hold spaces,
  and a backslash takes the next character literally (`password='it\\'s a secret'`), quoted or not;
- a URI, `postgresql://` or `postgres://`, then `[user[:password]@][host[:port][,host[:port]...]][/dbname]`
  and `?key=value&...`; every part percent-decoded, query keys too (`?pass%77ord=x` is a password).

Secrets are the values of `password` and `sslpassword` (wherever they stand) and the password of a URI's
user info. `redact_dsn` writes the DSN as it may be stored and shown: the user info's password dropped
(`postgresql://user@host/db`, as the load manifest always stored it), every other secret value `***`.
`redact` takes any text (a driver's error message, which may echo parts of the DSN) and replaces every
secret in it, as written and as decoded. A DSN libpq itself would reject is refused here first, with a
message that quotes none of it: libpq's own parse errors quote the text they stopped at, which may be the
tail of a password (`missing "=" after "with"`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import quote as percent_encode

from warehouse.errors import UserError

SECRET_KEYS = frozenset({"password", "sslpassword"})
URI_PREFIXES = ("postgresql://", "postgres://")
ENV_PREFIX = "env:"
MASK = "***"
_HINT = "see https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING"
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class Param:
    """One setting of a DSN: its key and value (decoded), where the value is written (`start`..`end` of the
    text), and what to write there instead when redacting."""

    key: str
    value: str
    start: int
    end: int
    replacement: str = MASK

    @property
    def is_secret(self) -> bool:
        return self.key.lower() in SECRET_KEYS


def _malformed(why: str) -> UserError:
    return UserError(f"the PostgreSQL DSN is malformed ({why}); it is not shown, as it may hold a password; {_HINT}")


def _keyword_value(dsn: str, offset: int = 0) -> list[Param]:
    """libpq's conninfo_parse: `key = value` pairs, values quoted with '...' and backslash escapes."""
    params: list[Param] = []
    at, size = 0, len(dsn)
    while at < size:
        if dsn[at].isspace():
            at += 1
            continue
        key_start = at
        while at < size and not dsn[at].isspace() and dsn[at] != "=":
            at += 1
        key = dsn[key_start:at]
        while at < size and dsn[at].isspace():
            at += 1
        if at >= size or dsn[at] != "=":
            raise _malformed(f"a word without '=' at character {key_start + offset + 1}: quote a value with spaces")
        at += 1
        while at < size and dsn[at].isspace():
            at += 1
        start, value = at, []
        if at < size and dsn[at] == "'":
            at += 1
            while True:
                if at >= size:
                    raise _malformed(f"a quote opened at character {start + offset + 1} is never closed")
                if dsn[at] == "\\" and at + 1 < size:
                    value.append(dsn[at + 1])
                    at += 2
                elif dsn[at] == "'":
                    at += 1
                    break
                else:
                    value.append(dsn[at])
                    at += 1
        else:
            while at < size and not dsn[at].isspace():
                if dsn[at] == "\\" and at + 1 < size:
                    at += 1
                value.append(dsn[at])
                at += 1
        params.append(Param(key, "".join(value), start + offset, at + offset))
    return params


def _decode(text: str, what: str) -> str:
    """libpq's conninfo_uri_decode: %XX sequences only, and never %00."""
    if _PERCENT.search(text):
        raise _malformed(f"a '%' in the {what} that is not a %XX escape: write a literal % as %25")
    raw = bytearray()
    at = 0
    while at < len(text):
        if text[at] == "%":
            byte = int(text[at + 1 : at + 3], 16)
            if byte == 0:
                raise _malformed(f"%00 in the {what}")
            raw.append(byte)
            at += 3
        else:
            raw.extend(text[at].encode())
            at += 1
    return raw.decode("utf-8", errors="replace")


def _uri(dsn: str) -> list[Param]:
    """libpq's conninfo_uri_parse_options: user info, hosts, database and query parameters."""
    prefix = next(p for p in URI_PREFIXES if dsn.startswith(p))
    at = len(prefix)
    params: list[Param] = []
    authority_end = at
    while authority_end < len(dsn) and dsn[authority_end] not in "@/":  # as libpq looks: not stopping at '?'
        authority_end += 1
    if authority_end < len(dsn) and dsn[authority_end] == "@":  # user info up to the first '@' before any '/'
        user_info = dsn[at:authority_end]
        user, colon, password = user_info.partition(":")
        params.append(Param("user", _decode(user, "user name"), at, at + len(user)))
        if colon:  # dropped from the redacted form: `user@host`
            start = at + len(user) + 1
            params.append(Param("password", _decode(password, "password"), start, authority_end, ""))
        at = authority_end + 1
    host_end = at
    while host_end < len(dsn) and dsn[host_end] not in "/?":
        host_end += 1
    hosts = dsn[at:host_end]
    for host in hosts.split(",") if hosts else ():
        name, _, port = host.rpartition("]:") if host.startswith("[") else host.rpartition(":")
        if "@" in host or (port and not port.isdigit() and name):
            raise _malformed("a host or port that is not one: percent-encode '@', '/' and ':' in a password")
    at = host_end
    query_start = dsn.find("?", at)
    if query_start < 0:
        return params
    at = query_start + 1
    for pair in dsn[at:].split("&"):
        key, equals, value = pair.partition("=")
        if pair and (not equals or "=" in value):
            raise _malformed("a query parameter that is not one key=value")
        start = at + len(key) + 1
        if pair:
            params.append(Param(_decode(key, "query"), _decode(value, "query"), start, start + len(value)))
        at += len(pair) + 1
    return params


def parse_dsn(dsn: str) -> list[Param]:
    """Every setting of the DSN as libpq reads it; a DSN libpq would refuse raises a UserError quoting none of it.

    A `dbname` may itself be a DSN (libpq expands it in some calls): its settings are read too.
    """
    params = _uri(dsn) if dsn.startswith(URI_PREFIXES) else _keyword_value(dsn)
    nested = []
    for param in params:
        if param.key == "dbname" and (param.value.startswith(URI_PREFIXES) or "=" in param.value):
            nested += [p for p in parse_dsn(param.value) if p.is_secret]
    return params + [Param(p.key, p.value, -1, -1) for p in nested]


def _forms(param: Param, dsn: str) -> set[str]:
    """A secret as decoded, as written in the DSN and percent-encoded: the forms a message may echo."""
    forms = {param.value, percent_encode(param.value, safe="")}
    if param.start >= 0:
        forms.add(dsn[param.start : param.end])
    return {form for form in forms if form}


def dsn_secrets(dsn: str) -> list[str]:
    """The secrets of the DSN in every form a message may echo, longest first (a malformed DSN: all of it)."""
    try:
        params = parse_dsn(dsn)
    except UserError:
        return [dsn] if dsn else []
    found: set[str] = set()
    for param in params:
        if param.is_secret:
            found |= _forms(param, dsn)
    return sorted(found, key=len, reverse=True)


def redact_dsn(dsn: str) -> str:
    """The DSN as it may be stored and shown: its secrets replaced (see the module's note)."""
    try:
        params = parse_dsn(dsn)
    except UserError:
        return "(a malformed DSN)"
    redacted = dsn
    for param in sorted((p for p in params if p.is_secret and p.start >= 0), key=lambda p: p.start, reverse=True):
        start = param.start - 1 if param.replacement == "" else param.start  # a URI's `:password` goes whole
        redacted = redacted[:start] + param.replacement + redacted[param.end :]
    for param in params:
        if param.is_secret and param.start < 0:  # a DSN nested in dbname
            for form in sorted(_forms(param, dsn), key=len, reverse=True):
                redacted = redacted.replace(form, MASK)
    return redacted


def redact(text: str, dsn: str) -> str:
    """`text` (a message, a log line) with every secret of `dsn` in it replaced by `***`."""
    if dsn and dsn in text:
        text = text.replace(dsn, redact_dsn(dsn))
    for secret in dsn_secrets(dsn):
        text = text.replace(secret, MASK)
    return text


def dsn_from(value: str, what: str = "--postgres") -> str:
    """A DSN as given on the command line: itself, or `env:NAME`, the environment variable NAME holding it
    (a command line is readable by every local user, in /proc/PID/cmdline and `ps`)."""
    if not value.startswith(ENV_PREFIX):
        return value
    return dsn_from_environment(value[len(ENV_PREFIX) :], what)


def dsn_from_environment(name: str, what: str) -> str:
    """The DSN the environment variable `name` holds; a name unset or empty is a one-line error."""
    if not name:
        raise UserError(f"{what}: give the environment variable's name after env:, e.g. env:SESSION_FEEDBACK_PG_DSN")
    dsn = os.environ.get(name)
    if not dsn:
        raise UserError(f"{what}: environment variable {name} is not set: export it with the DSN")
    return dsn
