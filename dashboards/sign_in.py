"""Who is asking: the identity of the current Streamlit session, and the gate before navigation.

`feedback-analytics dashboard` passes its sign-in settings in the environment (as it passes FEEDBACK_DB):

- `FEEDBACK_AUTH`: `none` (the default: the person at the machine, on loopback), `oidc` (Streamlit's
  st.login, configured in the `[auth]` section of its secrets) or `proxy` (an authenticating proxy's header);
- `FEEDBACK_TRUSTED_PROXIES`: comma-separated addresses (or networks) whose identity header is believed;
- `FEEDBACK_IDENTITY_HEADER`, `FEEDBACK_GROUPS_HEADER`: the proxy's headers (X-Forwarded-Email, X-Forwarded-Groups);
- `FEEDBACK_ACCESS_MAP`: the access map file (warehouse/access.py), required unless the auth is `none`.

`gate()` returns the session's identity and scope, or draws a page that says what is missing and stops the
script run: nothing below it (navigation, sidebar, pages) runs for a session it refuses. Every refusal fails
closed: a missing setting, an unreadable map or an unknown peer reads as "not signed in".
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from dashboards import text
from warehouse.access import EVERYTHING, AccessMap, Identity, Scope, load_access_map
from warehouse.errors import UserError

AUTH_MODES = ("none", "oidc", "proxy")
MAX_HEADER_CHARS = 320  # an e-mail address is at most 254; anything longer is not one
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Settings:
    auth: str
    trusted_proxies: tuple[IpNetwork, ...]
    identity_header: str
    groups_header: str
    access_map: str | None

    @classmethod
    def from_environment(cls) -> Settings:
        proxies = []
        for item in filter(None, (item.strip() for item in os.environ.get("FEEDBACK_TRUSTED_PROXIES", "").split(","))):
            try:
                proxies.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                continue  # the command line validated them; a stray value trusts nothing
        return cls(
            auth=os.environ.get("FEEDBACK_AUTH", "none").strip().lower(),
            trusted_proxies=tuple(proxies),
            identity_header=os.environ.get("FEEDBACK_IDENTITY_HEADER", "X-Forwarded-Email"),
            groups_header=os.environ.get("FEEDBACK_GROUPS_HEADER", "X-Forwarded-Groups"),
            access_map=os.environ.get("FEEDBACK_ACCESS_MAP") or None,
        )


IN_PROCESS = "in-process"  # a script run with no network client (Streamlit's AppTest): no one to check


def peer_address() -> str | None:
    """The TCP peer of this session's websocket: the proxy's address behind a proxy, never a header's claim.

    `st.context.ip_address` hides loopback peers (None) and is documented as spoofable, so read the
    session client's remote address; `feedback-analytics dashboard` also empties FORWARDED_ALLOW_IPS, so
    uvicorn never replaces it with an X-Forwarded-For value. A client whose address is unknown: None.
    """
    context = get_script_run_ctx()
    if context is None or not runtime.exists() or type(runtime.get_instance()) is not runtime.Runtime:
        return IN_PROCESS  # AppTest stands a MagicMock in for the runtime: no server, no socket
    client = runtime.get_instance().get_client(context.session_id)
    remote_ip = getattr(getattr(client, "client_context", None), "remote_ip", None)
    return remote_ip if isinstance(remote_ip, str) else None


def _address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address((text or "").split("%")[0])
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.2 on a dual-stack socket
    return mapped or address


def is_loopback(text: str | None) -> bool:
    address = _address(text)
    return address is not None and address.is_loopback


def is_trusted(peer: str | None, proxies: tuple[IpNetwork, ...]) -> bool:
    address = _address(peer)
    return address is not None and any(address in network for network in proxies)


def _clean(value: str | None) -> str | None:
    """A header or claim value fit to be a name: non-empty, printable, of a sane length; else None."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if value and len(value) <= MAX_HEADER_CHARS and value.isprintable() else None


def _header(name: str) -> str | None:
    values = st.context.headers.get_all(name)
    return values[0] if len(values) == 1 else None  # two copies of the header: ambiguous, believe neither


def _groups(values: object) -> tuple[str, ...]:
    items = values.split(",") if isinstance(values, str) else values if isinstance(values, list) else []
    return tuple(group for group in (_clean(item) for item in items[:100]) if group)


def proxy_identity(settings: Settings) -> Identity | None:
    if not is_trusted(peer_address(), settings.trusted_proxies):
        return None
    user = _clean(_header(settings.identity_header))
    if user is None:
        return None
    return Identity(user, _groups(_header(settings.groups_header) or ""), via="proxy")


def oidc_identity() -> Identity | None:
    if not st.user.is_logged_in:
        return None
    email = _clean(st.user.get("email")) if st.user.get("email_verified") is not False else None
    user = email or _clean(st.user.get("sub"))
    if user is None:
        return None
    return Identity(user, _groups(st.user.get("groups")), via="oidc")


def _only(draw: Callable[[], None], url_paths: list[str]) -> NoReturn:
    """Draw this page in place of every page of the app, and stop the run.

    Declaring it with st.navigation keeps Streamlit from listing any other page in a sidebar, so a refused
    visitor learns nothing, not even the pages' names; registering it under every page address answers a
    deep link with it too, rather than with "Page not found"."""
    pages = [st.Page(draw, title="Feedback Analytics", url_path="sign-in", default=True)]
    pages += [
        st.Page(draw, title="Feedback Analytics", url_path=path) for path in url_paths if path not in ("", "sign-in")
    ]
    st.navigation(pages, position="hidden").run()
    st.stop()


def _message(title: str, message: str) -> Callable[[], None]:
    def draw() -> None:
        st.title(title)
        st.write(message)

    return draw


def _sign_in_page() -> None:
    st.title("Feedback Analytics")
    st.write("Sign in to see the dashboard.")
    if st.button("Sign in", type="primary"):
        st.login()


def _no_access_page(settings: Settings, identity: Identity) -> Callable[[], None]:
    def draw() -> None:
        st.title("No access")
        st.text(f"You are signed in as {text.visible(identity.user)}, but no tenant is open to you.")  # never markup
        st.write("Ask whoever runs this dashboard to add you, or one of your groups, to its access map.")
        if settings.auth == "oidc" and st.button("Sign out"):
            st.logout()

    return draw


@st.cache_resource(show_spinner=False)
def _access_map(path: str, modified: float) -> AccessMap:  # keyed by mtime: an edited map applies to new runs
    return load_access_map(Path(path))


def gate(url_paths: list[str]) -> tuple[Identity, Scope]:
    """The session's identity and scope; otherwise a page saying what is missing (shown at every one of
    the app's `url_paths`), and the run stops."""
    settings = Settings.from_environment()
    decided = decide(settings)
    if callable(decided):
        _only(decided, url_paths)
    return decided


def decide(settings: Settings) -> tuple[Identity, Scope] | Callable[[], None]:
    """The identity and its scope, or the page a refused session sees instead."""
    if settings.auth == "none":
        peer = peer_address()
        if peer != IN_PROCESS and not is_loopback(peer):  # `streamlit run` on 0.0.0.0, or a proxy without sign-in
            return _message("Sign-in required", "This dashboard has no sign-in and answers on this machine only.")
        return Identity(None, via="local"), EVERYTHING
    if settings.auth not in AUTH_MODES or not settings.access_map:
        return _message("Sign-in required", "The dashboard's sign-in is not configured: ask whoever runs it.")
    if settings.auth == "oidc":
        identity = oidc_identity()
        if identity is None:
            return _sign_in_page
    else:
        identity = proxy_identity(settings)
        if identity is None:
            return _message("Sign-in required", "Open the dashboard through your organisation's sign-in address.")
    try:
        path = Path(settings.access_map)
        scope = _access_map(str(path), path.stat().st_mtime).scope_for(identity)
    except (OSError, UserError):
        return _message("No access", "The dashboard's access map cannot be read: ask whoever runs the dashboard.")
    if scope.tenants is not None and not scope.tenants:
        return _no_access_page(settings, identity)
    return identity, scope


def sidebar(identity: Identity) -> None:
    """The signed-in user (as text: a name from a header or a token is never markup) and a sign-out button."""
    if identity.via == "local":
        return
    with st.sidebar:
        st.text(f"Signed in as {text.visible(identity.user)}")
        if identity.via == "oidc" and st.button("Sign out", key="sign_out"):
            st.logout()
