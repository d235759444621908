"""A small OpenID Connect provider for the sign-in tests (no tests here): PyPI's oidc-provider-mock.

It runs in the test process on a thread, on 127.0.0.1 and a free port, with its discovery document at
`<url>/.well-known/openid-configuration`; any client id and secret is accepted. `set_user` gives a subject
its claims (e-mail, groups) through the mock's own HTTP API; the authorize page then signs that subject in
when the browser types it and presses Authorize.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import werkzeug.serving


@dataclass(frozen=True)
class OidcProvider:
    url: str

    @property
    def metadata_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"

    def set_user(self, sub: str, **claims: object) -> None:
        request = urllib.request.Request(
            f"{self.url}/users/{sub}",
            data=json.dumps(claims).encode(),
            method="PUT",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (the test's own provider)
            assert response.status == 204, response.status


@contextmanager
def oidc_provider() -> Iterator[OidcProvider]:
    from oidc_provider_mock import app

    server = werkzeug.serving.make_server("127.0.0.1", 0, app(require_nonce=True), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield OidcProvider(f"http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
