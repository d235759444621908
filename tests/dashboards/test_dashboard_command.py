"""`feedback-analytics dashboard` on the network: the real command line, real sockets, no browser.

It listens on 127.0.0.1 unless told otherwise (psutil reads the listening socket; a connection to this
machine's non-loopback address is refused), prints the address it really answers on, and only once it
answers; a taken port, a non-loopback address without sign-in and every sign-in misconfiguration stop it
with one line and no traceback, never printing a secret. Its Streamlit child stops with it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from tests.support.dashboard import ROOT
from tests.support.environment import free_port

pytestmark = pytest.mark.slow

START_TIMEOUT_S = 90
SECRET = "do-not-print-this-client-secret-9f2c"
COOKIE_SECRET = "c0ffee" * 8
ACCESS_MAP = "[users]\n'lead@acme.example' = ['acme']\n"


def run_cli(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cli", "dashboard", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@contextmanager
def dashboard(*args: str, log: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """The command running (not in a session of its own: the test signals the command, not its group);
    yields the process and the address it printed."""
    with log.open("w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "cli", "dashboard", *args],
            cwd=ROOT,
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and process.poll() is None:
            printed = [line for line in log.read_text().splitlines() if line.startswith("dashboard on ")]
            if printed:
                yield process, printed[0].split()[2]
                break
            time.sleep(0.3)
        else:
            pytest.fail(f"the dashboard printed no address (exit {process.poll()}):\n{log.read_text()[-3000:]}")
    finally:
        children = psutil.Process(process.pid).children(recursive=True) if process.poll() is None else []
        process.terminate()
        process.wait(30)
        gone, alive = psutil.wait_procs(children, timeout=30)
        for leftover in alive:
            leftover.kill()
        assert not alive, f"Streamlit outlived the command: {alive}"


def listening(process: subprocess.Popen, port: int) -> set[str]:
    """The local addresses the command's process tree listens on at `port`."""
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    return {
        connection.laddr.ip
        for member in tree
        for connection in member.net_connections(kind="inet")
        if connection.status == psutil.CONN_LISTEN and connection.laddr.port == port
    }


def connects(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.settimeout(3)
        try:
            probe.connect((host, port))
        except OSError:
            return False
        return True


def outside_addresses() -> list[str]:
    """This machine's addresses that are not loopback (and not link-local, which need a scope)."""
    addresses = []
    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            inet = entry.family in (socket.AF_INET, socket.AF_INET6) and "%" not in entry.address
            if inet and not entry.address.startswith(("127.", "::1", "fe80")):
                addresses.append(entry.address)
    return addresses


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode != 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    return lines[0]


def test_listens_on_loopback_by_default_and_prints_the_address_it_answers_on(tmp_path: Path) -> None:
    port = free_port()
    with dashboard("--port", str(port), "--db", str(tmp_path / "w.duckdb"), log=tmp_path / "log") as (process, url):
        assert url == f"http://127.0.0.1:{port}"
        assert listening(process, port) == {"127.0.0.1"}
        assert connects("127.0.0.1", port)
        for address in outside_addresses():
            assert not connects(address, port), f"the dashboard answers on {address}"


def test_a_loopback_address_it_is_given_is_the_one_it_prints(tmp_path: Path) -> None:
    port = free_port()
    args = ("--address", "127.0.0.3", "--port", str(port), "--db", str(tmp_path / "w.duckdb"))
    with dashboard(*args, log=tmp_path / "log") as (process, url):
        assert url == f"http://127.0.0.3:{port}"
        assert listening(process, port) == {"127.0.0.3"}
        assert not connects("127.0.0.1", port)


def test_a_taken_port_stops_it_with_one_line_and_no_address(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("--port", str(port), "--db", str(tmp_path / "w.duckdb"))
    assert "dashboard on" not in result.stdout + result.stderr
    line = one_line_error(result)
    assert f"port {port}" in line and "--port" in line


def test_the_command_stopped_by_sigkill_takes_streamlit_with_it(tmp_path: Path) -> None:
    port = free_port()
    with dashboard("--port", str(port), "--db", str(tmp_path / "w.duckdb"), log=tmp_path / "log") as (process, _url):
        children = psutil.Process(process.pid).children(recursive=True)
        assert children
        process.kill()
        process.wait(10)
        gone, alive = psutil.wait_procs(children, timeout=30)
        assert not alive
        assert not connects("127.0.0.1", port)


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "192.0.2.10", "dashboard.example"])
def test_a_non_loopback_address_needs_sign_in(tmp_path: Path, address: str) -> None:
    port = free_port()
    line = one_line_error(run_cli("--address", address, "--port", str(port), "--db", str(tmp_path / "w.duckdb")))
    assert f"--address {address}" in line
    for hint in ("--auth oidc", "--auth proxy", "--trusted-proxy", "--access-map", "docs/security.md"):
        assert hint in line
    assert not connects("127.0.0.1", port)


def write_secrets(folder: Path, auth: dict[str, str] | None, mode: int = 0o600) -> Path:
    path = folder / "secrets.toml"
    lines = ["[auth]", *(f'{key} = "{value}"' for key, value in auth.items())] if auth is not None else ["[other]"]
    path.write_text("\n".join(lines) + "\n")
    path.chmod(mode)
    return path


GOOD_AUTH = {
    "redirect_uri": "http://127.0.0.1:{port}/oauth2callback",
    "cookie_secret": COOKIE_SECRET,
    "client_id": "feedback-analytics",
    "client_secret": SECRET,
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}


@pytest.mark.parametrize(
    ("auth", "mode", "message"),
    [
        (None, 0o600, "no [auth] section"),
        ({k: v for k, v in GOOD_AUTH.items() if k != "client_secret"}, 0o600, "lacks client_secret"),
        ({k: v for k, v in GOOD_AUTH.items() if k != "cookie_secret"}, 0o600, "lacks cookie_secret"),
        ({**GOOD_AUTH, "cookie_secret": "short"}, 0o600, "shorter than 32 characters"),
        ({**GOOD_AUTH, "redirect_uri": "http://127.0.0.1:8501/"}, 0o600, "must end with /oauth2callback"),
        (GOOD_AUTH, 0o644, "can be read by other users: chmod 600"),
    ],
    ids=["no-auth", "no-client-secret", "no-cookie-secret", "weak-cookie-secret", "redirect", "world-readable"],
)
def test_oidc_needs_a_whole_private_auth_section(tmp_path: Path, auth, mode: int, message: str) -> None:
    secrets = write_secrets(tmp_path, auth, mode)
    (tmp_path / "access.toml").write_text(ACCESS_MAP)
    result = run_cli(
        "--auth", "oidc", "--secrets", str(secrets), "--access-map", str(tmp_path / "access.toml"),
        "--port", str(free_port()), "--db", str(tmp_path / "w.duckdb"),
    )  # fmt: skip
    line = one_line_error(result)
    assert message in line
    assert SECRET not in result.stdout + result.stderr and COOKIE_SECRET not in result.stdout + result.stderr


def test_oidc_reads_the_working_folders_secrets_when_none_is_given(tmp_path: Path) -> None:
    (tmp_path / ".streamlit").mkdir()
    write_secrets(tmp_path / ".streamlit", None)
    result = subprocess.run(
        [sys.executable, "-m", "cli", "dashboard", "--auth", "oidc", "--access-map", "a.toml", "--db", "w.duckdb"],
        cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert f"no [auth] section in {(tmp_path / '.streamlit' / 'secrets.toml').resolve()}" in one_line_error(result)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--auth", "proxy", "--access-map", "{map}"), "--auth proxy needs --trusted-proxy ADDR"),
        (("--auth", "proxy", "--trusted-proxy", "127.0.0.2"), "--auth proxy needs --access-map FILE"),
        (("--auth", "proxy", "--trusted-proxy", "proxy.example", "--access-map", "{map}"), "not an IP address"),
        (("--auth", "proxy", "--trusted-proxy", "0.0.0.0/0", "--access-map", "{map}"), "a network this wide"),
        (("--auth", "proxy", "--trusted-proxy", "127.0.0.2", "--access-map", "{bad}"), "[users] 'x@y.example'"),
        (
            ("--auth", "proxy", "--trusted-proxy", "127.0.0.2", "--access-map", "{map}", "--identity-header", "X: 1"),
            "is not an HTTP header name",
        ),
    ],
    ids=["no-trusted-proxy", "no-access-map", "proxy-name", "proxy-everyone", "bad-map", "bad-header"],
)
def test_proxy_sign_in_misconfigured_is_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    (tmp_path / "access.toml").write_text(ACCESS_MAP)
    (tmp_path / "bad.toml").write_text("[users]\n'x@y.example' = 'acme'\n")
    filled = [arg.format(map=tmp_path / "access.toml", bad=tmp_path / "bad.toml") for arg in args]
    port = free_port()
    line = one_line_error(run_cli(*filled, "--port", str(port), "--db", str(tmp_path / "w.duckdb")))
    assert message in line
    assert not connects("127.0.0.1", port)
