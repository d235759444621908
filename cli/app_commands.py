"""`feedback-analytics demo-data` and `dashboard`: the demo data set, and the Streamlit app on the warehouse."""

from __future__ import annotations

import ctypes
import ipaddress
import os
import re
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import click

from cli.options import db_option, parse_cli_as_of, quiet_option, warehouse_of
from warehouse.access import load_access_map
from warehouse.errors import UserError

PROJECT_DIR = Path(__file__).resolve().parents[1]


@click.command("demo-data")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed: same seed, same bytes.")
@click.option("--scale", type=float, default=1.0, show_default=True, help="Volume multiplier (100 = ~10M signals).")
@click.option("--as-of", "as_of", default=None, help="Last day of the history (default: today, UTC).")
@click.option(
    "--days",
    type=click.IntRange(1, 200),
    default=200,
    show_default=True,
    help="Write only the last N days of the history, at its daily volume: a night's new data (use another --seed).",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    type=click.Choice(["analyzer", "session_feedback", "reactions", "workspace"]),
    help="Write only this source (repeatable), the same bytes as among all; sources.toml names only these.",
)
@quiet_option
def demo_data(
    out_dir: Path, seed: int, scale: float, as_of: str | None, days: int, sources: tuple[str, ...], quiet: bool
) -> None:
    """Write a realistic, deterministic demo data set in every upstream format, plus OUT_DIR/sources.toml."""
    # imported here, from its module: a `demo/` folder in the working directory (say, demo-data written
    # there) would shadow the package for `python -m cli` and break every other command
    from demo.dataset import SOURCES, generate

    if scale <= 0:
        raise click.BadParameter("must be greater than 0", param_hint="--scale")
    day = parse_cli_as_of(as_of, refuse_future=False).day
    say = (lambda _msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    counts = generate(out_dir, seed=seed, scale=scale, as_of=day, days=days, progress=say, sources=sources or SOURCES)
    total = sum(counts.values())
    click.echo(f"wrote {total:,} records to {out_dir} (as of {day}); load them with:")
    click.echo(f"  feedback-analytics ingest --config {out_dir / 'sources.toml'}")


LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
SECRETS_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")
MIN_COOKIE_SECRET_CHARS = 32
HEADER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")
START_TIMEOUT_S = 120.0
SIGN_IN_HELP = (
    "add sign-in: --auth oidc (st.login, an [auth] section in .streamlit/secrets.toml) or --auth proxy "
    "--trusted-proxy ADDR (an authenticating proxy's identity header), with --access-map FILE; see docs/security.md"
)


def is_loopback_address(address: str) -> bool:
    """127.0.0.0/8, ::1 or a loopback host name: reachable from this machine only."""
    if address.strip().lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False  # any other host name: whatever it resolves to, treat it as reachable from outside


def secrets_files(secrets: Path | None) -> list[Path]:
    """The secrets files the dashboard's Streamlit reads, in its order (later wins): --secrets, else
    ~/.streamlit/secrets.toml and ./.streamlit/secrets.toml (those that exist)."""
    if secrets is not None:
        if not secrets.is_file():
            raise UserError(f"secrets file {secrets} does not exist: give the secrets.toml holding [auth]")
        return [secrets.resolve()]
    candidates = [Path.home() / ".streamlit" / "secrets.toml", Path.cwd() / ".streamlit" / "secrets.toml"]
    return [path.resolve() for path in candidates if path.is_file()]


def check_oidc_secrets(files: list[Path]) -> None:
    """The [auth] section st.login needs is there, whole, with a strong cookie secret, in files only their
    owner can read; never prints a value."""
    if not files:
        raise UserError(
            "--auth oidc: no secrets file: write .streamlit/secrets.toml (or give --secrets PATH) with an [auth] "
            f"section ({', '.join(SECRETS_KEYS)}); see docs/security.md"
        )
    auth: dict[str, object] = {}
    for file in files:
        try:
            document = tomllib.loads(file.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"secrets file {file} cannot be read as TOML: {type(exc).__name__}") from None
        section = document.get("auth")
        if section is None:
            continue
        if not isinstance(section, dict):
            raise UserError(f"secrets file {file}: auth must be a table ([auth])")
        if file.stat().st_mode & 0o077:
            raise UserError(f"secrets file {file} can be read by other users: chmod 600 {file}")
        auth.update(section)
    where = " or ".join(str(file) for file in files)
    if not auth:
        raise UserError(f"--auth oidc: no [auth] section in {where}: add one ({', '.join(SECRETS_KEYS)})")
    provider = auth.get("default") if isinstance(auth.get("default"), dict) else auth
    missing = [
        key for key in SECRETS_KEYS if not _text(auth.get(key) if key in SECRETS_KEYS[:2] else provider.get(key))
    ]
    if missing:
        raise UserError(f"--auth oidc: the [auth] section in {where} lacks {', '.join(missing)}: add them")
    if not str(auth["redirect_uri"]).endswith("/oauth2callback"):
        raise UserError(f"--auth oidc: redirect_uri in {where} must end with /oauth2callback (the dashboard's address)")
    if len(str(auth["cookie_secret"])) < MIN_COOKIE_SECRET_CHARS:
        raise UserError(
            f"--auth oidc: cookie_secret in {where} is shorter than {MIN_COOKIE_SECRET_CHARS} characters: "
            'generate one with python -c "import secrets; print(secrets.token_hex(32))"'
        )


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def check_trusted_proxies(values: tuple[str, ...]) -> list[str]:
    networks = []
    for value in values:
        try:
            network = ipaddress.ip_network(value.strip(), strict=False)
        except ValueError:
            raise UserError(
                f"--trusted-proxy {value!r} is not an IP address or network: give the proxy's address", exit_code=2
            ) from None
        if network.prefixlen < (24 if network.version == 4 else 64):
            raise UserError(
                f"--trusted-proxy {value}: a network this wide is not one proxy; give its address", exit_code=2
            )
        networks.append(str(network))
    return networks


def check_header(option: str, name: str) -> str:
    if not HEADER_NAME.fullmatch(name):
        raise UserError(f"{option} {name!r} is not an HTTP header name (letters, digits and -)", exit_code=2)
    return name


def check_port_free(address: str, port: int) -> None:
    """The asked port is the one (Streamlit gets it as --server.port, so it never moves to another): taken,
    the command stops here with one line rather than print an address nothing answers on."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address.strip("[]"), port))
        except OSError as exc:
            raise UserError(f"cannot listen on {address} port {port}: {exc.strerror}; choose another --port") from None


def url(address: str, port: int) -> str:
    host = address.strip("[]")
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def probe_host(address: str) -> str:
    """Where to ask the started server whether it answers: a wildcard address answers on loopback."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "[::]": "::1"}.get(address, address)  # noqa: S104


@click.command("dashboard")
@click.option(
    "--address",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but loopback needs --auth oidc or --auth proxy (docs/security.md).",
)
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True, help="Port to listen on.")
@click.option(
    "--auth",
    type=click.Choice(["none", "oidc", "proxy"]),
    default="none",
    show_default=True,
    help="Sign-in: none (loopback only), oidc (st.login, [auth] in the secrets file), proxy (a trusted "
    "authenticating proxy's identity header).",
)
@click.option("--trusted-proxy", "trusted_proxies", multiple=True, help="--auth proxy: the proxy's address (repeat).")
@click.option("--identity-header", default="X-Forwarded-Email", show_default=True, help="--auth proxy: the user.")
@click.option("--groups-header", default="X-Forwarded-Groups", show_default=True, help="--auth proxy: the groups.")
@click.option(
    "--access-map",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="TOML file: which tenants each user or group may read (required with --auth oidc or proxy).",
)
@click.option(
    "--secrets",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="--auth oidc: the secrets.toml with [auth] (default: ~/.streamlit/ and ./.streamlit/secrets.toml).",
)
@db_option
def dashboard(
    address: str,
    port: int,
    auth: str,
    trusted_proxies: tuple[str, ...],
    identity_header: str,
    groups_header: str,
    access_map: Path | None,
    secrets: Path | None,
    db: str | None,
) -> int:
    """Start the Streamlit dashboard on the same DuckDB file (read-only, short-lived connections).

    It listens on 127.0.0.1 unless --address says otherwise, and prints its address once it answers there.
    """
    path = warehouse_of(db).path.resolve()
    if auth == "none" and not is_loopback_address(address):
        raise UserError(
            f"--address {address} is reachable from other machines and the dashboard has no sign-in: {SIGN_IN_HELP}",
            exit_code=2,
        )
    files: list[Path] = []
    if auth == "oidc":
        files = secrets_files(secrets)
        check_oidc_secrets(files)
    if auth == "proxy" and not trusted_proxies:
        raise UserError(
            "--auth proxy needs --trusted-proxy ADDR: the address the proxy connects from (docs/security.md)",
            exit_code=2,
        )
    if auth != "none":
        if access_map is None:
            raise UserError(
                f"--auth {auth} needs --access-map FILE: which tenants each user may read (docs/security.md)",
                exit_code=2,
            )
        load_access_map(access_map)  # every mistake in it, now, as one line
    env = {
        **os.environ,
        "FEEDBACK_DB": str(path),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_DIR), os.environ.get("PYTHONPATH")])),
        "FEEDBACK_AUTH": auth,
        "FEEDBACK_TRUSTED_PROXIES": ",".join(check_trusted_proxies(trusted_proxies)),
        "FEEDBACK_IDENTITY_HEADER": check_header("--identity-header", identity_header),
        "FEEDBACK_GROUPS_HEADER": check_header("--groups-header", groups_header),
        "FEEDBACK_ACCESS_MAP": str(access_map.resolve()) if access_map else "",
        # uvicorn believes X-Forwarded-For from 127.0.0.1 by default: the peer the sign-in checks must be real
        "FORWARDED_ALLOW_IPS": "",
    }
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(PROJECT_DIR / "dashboards" / "app.py"),
        "--server.address",
        address.strip("[]"),
        "--server.port",  # given, so Streamlit never moves to the next free port
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--logger.hideWelcomeMessage",  # its wildcard-address message looks up this machine's public address
        "true",
        "--client.toolbarMode",
        "viewer",
    ]
    for file in files:
        command += ["--secrets.files", str(file)]
    check_port_free(address, port)
    return supervise(command, env, url(address, port), f"{url(probe_host(address), port)}/_stcore/health", path, auth)


def supervise(command: list[str], env: dict[str, str], address: str, health: str, db: Path, auth: str) -> int:
    """Run Streamlit as a child, say where it answers once it does, pass on the signals this process gets,
    and exit with its status. The child dies with this process (PR_SET_PDEATHSIG): a scheduler's SIGKILL
    leaves no orphan listening on the port."""
    child = subprocess.Popen(command, env=env, preexec_fn=_die_with_parent)  # noqa: PLW1509 (single-threaded here)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda number, _frame: child.send_signal(number))
    deadline = time.monotonic() + START_TIMEOUT_S
    while child.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(health, timeout=2) as response:  # noqa: S310 (our own http URL)
                if response.status == 200:
                    click.echo(
                        f"dashboard on {address} (sign-in: {auth}; warehouse {db}); stop it with Ctrl-C", err=True
                    )
                    break
        except OSError:
            time.sleep(0.25)
    else:
        if child.poll() is None:
            child.terminate()
        code = child.wait()
        raise UserError(f"the dashboard did not start on {address} (Streamlit exited {code}; its output is above)")
    code = child.wait()
    return 128 - code if code < 0 else code


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
