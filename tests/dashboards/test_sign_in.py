"""Sign-in in a real browser: `feedback-analytics dashboard --auth oidc|proxy` on the demo warehouse, chromium.

OIDC: a real OpenID provider (oidc-provider-mock) on loopback; Streamlit's own st.login code does the flow
(authorize redirect, code exchange, signed cookie). A signed-out visitor sees one sign-in button and nothing
else; a user the access map names comes back signed in, sees the Overview and their name in the sidebar,
and signs out; a user it does not name sees the no-access page.

Proxy: a reverse proxy (tests/support/reverse_proxy.py) connects from 127.0.0.2, the one trusted address,
and sets X-Forwarded-Email; through it the user sees their pages. Straight to Streamlit, the same header and
an X-Forwarded-For naming the proxy (uvicorn believes that header from 127.0.0.1 by default) get the
sign-in-required page.

Screenshots of the sign-in, sign-in-required and no-access pages at 1280 and 390 px go to tests/artifacts/.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.dashboard import (
    APP,
    ARTIFACTS,
    PAGES,
    DashboardServer,
    DemoWarehouse,
    chromium,
    start_streamlit,
)
from tests.support.oidc_provider import OidcProvider, oidc_provider
from tests.support.reverse_proxy import reverse_proxy

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOAD_TIMEOUT_MS = 60_000
LEAD = "lead@acme.example"
ACCESS_MAP = f"""
[users]
"{LEAD}" = ["acme"]

[groups]
globex-analysts = ["globex"]
"""
WIDTHS = (1280, 390)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def access_map(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sign-in") / "access.toml"
    path.write_text(ACCESS_MAP)
    return path


def serve(demo: DemoWarehouse, log: Path, *options: str) -> DashboardServer:
    try:
        return start_streamlit(
            lambda port: ["-m", "cli", "dashboard", "--port", str(port), "--db", str(demo.db), *options],
            demo.env(),
            log,
        )
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    with oidc_provider() as running:
        yield running


@pytest.fixture(scope="module")
def oidc_server(demo, access_map: Path, provider: OidcProvider, tmp_path_factory) -> Iterator[DashboardServer]:
    folder = tmp_path_factory.mktemp("oidc")
    secrets = folder / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "' + "5eC" * 16 + '"\n'
        'client_id = "feedback-analytics"\n'
        'client_secret = "test-client-secret"\n'
        f'server_metadata_url = "{provider.metadata_url}"\n'
    )
    secrets.chmod(0o600)
    options = ("--auth", "oidc", "--secrets", str(secrets), "--access-map", str(access_map))
    running = serve(demo, folder / "server.log", *options)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def proxy_server(demo, access_map: Path, tmp_path_factory) -> Iterator[DashboardServer]:
    options = ("--auth", "proxy", "--trusted-proxy", "127.0.0.2", "--access-map", str(access_map))
    running = serve(demo, tmp_path_factory.mktemp("proxy") / "server.log", *options)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def context(browser) -> Iterator[object]:
    opened = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield opened
    finally:
        opened.close()


def heading(page, text: str):
    return page.get_by_role("heading", name=text, level=1)


def wait_for_run(page) -> None:
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'",
        timeout=LOAD_TIMEOUT_MS,
    )


def assert_nothing_else(page) -> None:
    """No navigation, no sidebar, no filters, no data: the page is the gate's and nothing more."""
    assert page.locator('[data-testid="stSidebar"]').count() == 0
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0
    assert heading(page, "Overview").count() == 0
    assert "Data as of" not in page.locator('[data-testid="stMain"]').inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_role("dialog").count() == 0  # no "Page not found" either


def screenshots(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(400)
        path = ARTIFACTS / f"sign-in-{name}-{width}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 5_000
    page.set_viewport_size({"width": 1280, "height": 900})


def sign_in_with_provider(page, server: DashboardServer, sub: str) -> None:
    page.goto(server.url)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/oauth2/authorize**", timeout=LOAD_TIMEOUT_MS)
    page.locator("input[name=sub]").fill(sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{server.url}/**", timeout=LOAD_TIMEOUT_MS)


def sidebar_text(page) -> str:
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_for_run(page)  # the sidebar fills in while the page runs
    return sidebar.inner_text()


def tenant_options(page) -> list[str]:
    """The sidebar's tenant filter, opened: the tenants the session may choose (its scope, read from the data)."""
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(has_text="Tenant").click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=LOAD_TIMEOUT_MS)
    names = options.all_inner_texts()
    page.keyboard.press("Escape")
    return names


# ---------------------------------------------------------------- OIDC


def test_oidc_signed_out_sees_only_the_sign_in_button(context, oidc_server: DashboardServer) -> None:
    page = context.new_page()
    page.goto(oidc_server.url)
    page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_for_run(page)
    assert page.locator('[data-testid="stMain"]').get_by_role("button").all_inner_texts() == ["Sign in"]
    assert_nothing_else(page)
    page.goto(f"{oidc_server.url}/evals")  # a deep link is the gate too
    page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_for_run(page)
    assert_nothing_else(page)
    assert heading(page, "Evals").count() == 0
    screenshots(page, "oidc-sign-in")


def test_oidc_sign_in_overview_and_sign_out(context, oidc_server: DashboardServer, provider: OidcProvider) -> None:
    provider.set_user("lead-sub", email=LEAD, email_verified=True, name="Lead")
    page = context.new_page()
    sign_in_with_provider(page, oidc_server, "lead-sub")
    heading(page, "Overview").wait_for(timeout=LOAD_TIMEOUT_MS)
    assert f"Signed in as {LEAD}" in sidebar_text(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert tenant_options(page) == ["Acme Corporation"]  # the access map's scope reached the data layer

    page.get_by_role("button", name="Sign out").click()
    # Streamlit clears its cookies and sends the browser to the provider's end-session page, which asks
    page.wait_for_url("**/oauth2/end_session**", timeout=LOAD_TIMEOUT_MS)
    page.locator("form button[type=submit]").first.click()
    page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_for_run(page)
    assert_nothing_else(page)
    page.goto(oidc_server.url)  # a fresh session too
    page.get_by_role("button", name="Sign in").wait_for(timeout=LOAD_TIMEOUT_MS)
    assert_nothing_else(page)


def test_oidc_group_claim_grants_its_tenants(context, oidc_server: DashboardServer, provider: OidcProvider) -> None:
    provider.set_user("analyst-sub", email="analyst@globex.example", groups=["globex-analysts"])
    page = context.new_page()
    sign_in_with_provider(page, oidc_server, "analyst-sub")
    heading(page, "Overview").wait_for(timeout=LOAD_TIMEOUT_MS)
    assert "Signed in as analyst@globex.example" in sidebar_text(page)
    assert tenant_options(page) == ["Globex Corporation"]


def test_oidc_user_not_in_the_access_map_sees_no_access(
    context, oidc_server: DashboardServer, provider: OidcProvider
) -> None:
    provider.set_user("stranger-sub", email="stranger@elsewhere.example", email_verified=True)
    page = context.new_page()
    sign_in_with_provider(page, oidc_server, "stranger-sub")
    heading(page, "No access").wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_for_run(page)
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "stranger@elsewhere.example" in main and "access map" in main
    assert_nothing_else(page)
    screenshots(page, "oidc-no-access")


def test_oidc_unverified_email_is_not_the_users_name(
    context, oidc_server: DashboardServer, provider: OidcProvider
) -> None:
    # a provider that lets users type any address says so with email_verified = false: the map is not fooled
    provider.set_user("impostor-sub", email=LEAD, email_verified=False)
    page = context.new_page()
    sign_in_with_provider(page, oidc_server, "impostor-sub")
    heading(page, "No access").wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_for_run(page)  # the heading shows before the rest of the page: read it once the run is over
    assert "impostor-sub" in page.locator('[data-testid="stMain"]').inner_text()
    assert_nothing_else(page)


# ---------------------------------------------------------------- proxy


def test_proxy_user_sees_their_pages(context, proxy_server: DashboardServer) -> None:
    with reverse_proxy(("127.0.0.1", proxy_server.port), "127.0.0.2", {"X-Forwarded-Email": LEAD}) as proxy:
        page = context.new_page()
        page.goto(proxy.url)
        heading(page, "Overview").wait_for(timeout=LOAD_TIMEOUT_MS)
        assert f"Signed in as {LEAD}" in sidebar_text(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert tenant_options(page) == ["Acme Corporation"]
        assert any(line.startswith("GET /_stcore/stream") for line in proxy.requests)  # the websocket went through


def test_proxy_group_header_grants_its_tenants(context, proxy_server: DashboardServer) -> None:
    headers = {"X-Forwarded-Email": "analyst@globex.example", "X-Forwarded-Groups": "staff, globex-analysts"}
    with reverse_proxy(("127.0.0.1", proxy_server.port), "127.0.0.2", headers) as proxy:
        page = context.new_page()
        page.goto(proxy.url)
        heading(page, "Overview").wait_for(timeout=LOAD_TIMEOUT_MS)
        assert tenant_options(page) == ["Globex Corporation"]


def test_proxy_user_not_in_the_access_map_sees_no_access(context, proxy_server: DashboardServer) -> None:
    with reverse_proxy(("127.0.0.1", proxy_server.port), "127.0.0.2", {"X-Forwarded-Email": "x@y.example"}) as proxy:
        page = context.new_page()
        page.goto(proxy.url)
        heading(page, "No access").wait_for(timeout=LOAD_TIMEOUT_MS)
        wait_for_run(page)
        assert_nothing_else(page)


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Forwarded-Email": LEAD},
        {"X-Forwarded-Email": LEAD, "X-Forwarded-For": "127.0.0.2"},  # uvicorn believes this from 127.0.0.1
        {
            "X-Forwarded-Email": LEAD,
            "X-Forwarded-For": "127.0.0.2",
            "X-Real-IP": "127.0.0.2",
            "Forwarded": "for=127.0.0.2",
        },
    ],
    ids=["header", "header-and-forwarded-for", "every-forwarding-header"],
)
def test_a_forged_identity_header_straight_to_streamlit_is_refused(
    browser, proxy_server: DashboardServer, headers: dict[str, str]
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, extra_http_headers=headers)
    try:
        page = context.new_page()
        page.goto(proxy_server.url)
        heading(page, "Sign-in required").wait_for(timeout=LOAD_TIMEOUT_MS)
        wait_for_run(page)
        assert_nothing_else(page)
        assert LEAD not in page.content()
        if "X-Forwarded-For" in headers and len(headers) == 2:
            screenshots(page, "proxy-sign-in-required")
    finally:
        context.close()


def test_a_proxy_from_an_untrusted_address_is_refused(context, proxy_server: DashboardServer) -> None:
    with reverse_proxy(("127.0.0.1", proxy_server.port), "127.0.0.3", {"X-Forwarded-Email": LEAD}) as proxy:
        page = context.new_page()
        page.goto(proxy.url)
        heading(page, "Sign-in required").wait_for(timeout=LOAD_TIMEOUT_MS)
        wait_for_run(page)
        assert_nothing_else(page)


# ---------------------------------------------------------------- no sign-in


def outside_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (others can reach it), or None."""
    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            if entry.family == socket.AF_INET and not entry.address.startswith("127."):
                return entry.address
    return None


def test_without_sign_in_a_visitor_from_another_machine_is_refused(
    context, demo: DemoWarehouse, tmp_path: Path
) -> None:
    """`streamlit run` by hand on every interface (not through the command, which refuses that): a peer
    that is not loopback gets the sign-in-required page, never the data."""
    address = outside_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to connect from")
    arguments = ["-m", "streamlit", "run", str(APP), "--server.address", "0.0.0.0", "--server.headless", "true"]
    running = start_streamlit(lambda port: [*arguments, "--server.port", str(port)], demo.env(), tmp_path / "log")
    try:
        page = context.new_page()
        page.goto(f"http://{address}:{running.port}/")
        heading(page, "Sign-in required").wait_for(timeout=LOAD_TIMEOUT_MS)
        wait_for_run(page)
        assert_nothing_else(page)
        page.goto(f"http://127.0.0.1:{running.port}/")  # the person at the machine still sees everything
        heading(page, "Overview").wait_for(timeout=LOAD_TIMEOUT_MS)
        assert tenant_options(page)[0] == "All"
    finally:
        running.stop()


def test_a_deep_link_on_a_fresh_server_meets_the_sign_in_first(
    context, demo: DemoWarehouse, access_map: Path, tmp_path: Path
) -> None:
    """The first request a new server gets is a page's URL, with no identity: it runs the entry point, whose
    gate answers with the sign-in-required page (Streamlit runs a page file alone, bypassing app.py, only for a
    folder named `pages/` beside it; the pages live in `app_pages/`). Then every other page's URL, the same."""
    options = ("--auth", "proxy", "--trusted-proxy", "127.0.0.2", "--access-map", str(access_map))
    running = serve(demo, tmp_path / "server.log", *options)
    try:
        page = context.new_page()
        for page_path in ("evals", *(p.address for p in PAGES if p.url_path != "evals")):  # the root: Overview
            page.goto(f"{running.url}/{page_path}")
            heading(page, "Sign-in required").wait_for(timeout=LOAD_TIMEOUT_MS)
            wait_for_run(page)
            assert_nothing_else(page)
            assert all(heading(page, p.title).count() == 0 for p in PAGES), page_path
    finally:
        running.stop()
