"""Suites that need something outside Python (a PostgreSQL server, chromium): skipped locally, failed under CI.

`unavailable(suite, reason)` skips the calling test with a tag naming the
suite; conftest's terminal summary lists every skipped suite at the end of the
run with the command that enables it. Under CI (the `CI` variable set to any
true value: 1, true, yes, on) it fails instead: there a skip would hide a
broken image.
"""

from __future__ import annotations

import os
import socket
from typing import NoReturn

import pytest

ENABLE = {
    "postgres": "make system-packages (apt-get install -y postgresql), or PG_BIN=<folder holding initdb>",
    "browser": "make system-packages (apt-get install -y chromium)",
    "spark": "make system-packages (apt-get install -y openjdk-17-jre-headless) and make venv (pyspark)",
    "fonts": "make system-packages (apt-get install -y fonts-noto-cjk fonts-noto-color-emoji)",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def tag(suite: str) -> str:
    return f"[{suite} suite unavailable]"


def unavailable(suite: str, reason: str) -> NoReturn:
    if in_ci():
        pytest.fail(f"{reason} (CI is set: the CI image must provide it; {ENABLE[suite]})")
    pytest.skip(f"{tag(suite)} {reason}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (a server may still lose it to another process)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
