"""Real receivers on loopback for the alert delivery tests: an HTTP server and an SMTP server (aiosmtpd).

The HTTP server records every request and answers from a script: "200",
"500", "404", "429", "302" (to /elsewhere), "stall" (wait longer than the client's time limit, then 200);
when the script runs out it repeats its last entry. The SMTP server requires
STARTTLS with a self-signed certificate made here and AUTH, and records each
message with its envelope.
"""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class HttpReceiver:
    url: str
    script: list[str]
    requests: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)  # ends a stall early (teardown)


@contextmanager
def http_receiver(*script: str, stall_seconds: float = 5.0) -> Iterator[HttpReceiver]:
    receiver = HttpReceiver("", list(script) or ["200"])
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                receiver.requests.append(Received(self.path, dict(self.headers.items()), body))
                answer = receiver.script.pop(0) if len(receiver.script) > 1 else receiver.script[0]
            if answer == "stall":
                receiver.release.wait(stall_seconds)
                answer = "200"
            try:
                self.send_response(int(answer))
                self.send_header("Content-Type", "text/plain")
                if answer.startswith("3"):
                    self.send_header("Location", "/elsewhere")
                self.end_headers()
                # like many servers, an error echoes the path: a webhook's path is its token
                self.wfile.write(b"ok" if answer == "200" else f"no_service for {self.path}".encode())
            except OSError:  # the client gave up (its time limit) before the answer
                pass

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)  # quick shutdown
    thread.start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/services/T000/B000/s3cr3t-t0ken"
    try:
        yield receiver
    finally:
        receiver.release.set()
        server.shutdown()
        server.server_close()


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key (PEM files in folder)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@dataclass
class SmtpReceiver:
    port: int
    client_context: ssl.SSLContext  # trusts the server's self-signed certificate, checks the host name
    messages: list[tuple[Envelope, EmailMessage]] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def smtp_receiver(folder: Path, user: str, password: str, *, starttls: bool = True) -> Iterator[SmtpReceiver]:
    """starttls=False: a server offering neither STARTTLS nor AUTH (the client must refuse to send in clear)."""
    cert_file, key_file = self_signed_certificate(folder)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert_file, key_file)
    client_context = ssl.create_default_context(cafile=str(cert_file))
    receiver = SmtpReceiver(free_port(), client_context)

    class Handler:
        async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:  # noqa: N802
            message = email.message_from_bytes(envelope.original_content or b"", policy=email.policy.default)
            receiver.messages.append((envelope, message))  # type: ignore[arg-type]
            return "250 OK"

    def authenticator(server: Any, session: Session, envelope: Envelope, mechanism: str, auth_data: Any) -> AuthResult:
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
            user.encode(),
            password.encode(),
        )
        if ok:
            receiver.logins.append(user)
        return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd answers 535

    controller = Controller(
        Handler(),
        hostname="127.0.0.1",
        port=receiver.port,
        tls_context=server_context if starttls else None,
        require_starttls=starttls,
        auth_required=starttls,
        auth_require_tls=True,
        authenticator=authenticator,
    )
    controller.start()
    try:
        yield receiver
    finally:
        controller.stop()
