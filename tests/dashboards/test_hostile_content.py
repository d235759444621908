"""Upstream values are data, never markup: the dashboard, the HTML report and its PDF on a hostile data set.

The demo sources with skill ids, dimensions, snippets, comments, a tenant, a project, golden-session messages,
agent config names, a golden set, a surface and conversation ids rewritten as scripts, `onerror` images,
markdown images and links, `javascript:` links, `<a href>`, `<b>`, a right-to-left override and a 1 MB snippet
(tests/support/hostile.py), loaded and built by the real command line. Every payload that could call home
calls a listener on loopback and sets `window.__pwned`. In chromium, on every page and after every option of
every selector: nothing reached the listener, no script ran, no dialog opened, no link or image came from the
data, nothing the payloads wrap is bold, and the payloads are on the page as text (so the checks are not
vacuous). The report is opened from disk the same way; its PDF has no link and the payloads as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support import pdf
from tests.support.dashboard import (
    ARTIFACTS,
    LOAD_TIMEOUT_MS,
    PAGES,
    VIEWPORT,
    DashboardServer,
    chromium,
    cli,
    open_page,
    start_dashboard,
    wait_until_idle,
)
from tests.support.hostile import HostileWarehouse, Listener, hostile_warehouse, listener

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TICK_START = 40  # characters of a payload every view shows, even a tick label cut to charts.TICK_LIMIT
# What the payloads would leave in the DOM: a link or image pointing at the listener or at javascript:, an
# element with an inline handler or a script of a payload's own, and styling of the words the
# payloads wrap (markdown's strong/em, HTML's b, Plotly's bold tspan).
FOREIGN = """(address) => {
    const found = [];
    const xlink = 'http://www.w3.org/1999/xlink';
    const bad = (url) => url && (url.includes(address) || /^\\s*javascript:/i.test(url));
    for (const a of document.querySelectorAll('a')) {
        for (const href of [a.getAttribute('href'), a.getAttributeNS(xlink, 'href')]) {
            if (bad(href)) found.push('link ' + href);
        }
    }
    for (const element of document.querySelectorAll('img, image, iframe, video, audio, source, object, embed')) {
        for (const url of [element.getAttribute('src'), element.getAttribute('href'),
                           element.getAttributeNS(xlink, 'href'), element.getAttribute('data')]) {
            if (bad(url)) found.push(element.tagName + ' ' + url);
        }
    }
    for (const element of document.querySelectorAll('[onerror], [onload], [onclick], [onmouseover]')) {
        found.push('handler ' + element.outerHTML.slice(0, 200));
    }
    for (const script of document.querySelectorAll('script')) {  // a chart's data may quote a payload, as JSON
        if (script.textContent.trim().startsWith('window.__pwned')) found.push('script ' + script.textContent);
    }
    const wrapped = ['bold', 'strong', 'entity', 'a', 'web', 'click', 'x'];
    for (const element of document.querySelectorAll('strong, b, em, i')) {
        if (wrapped.includes(element.textContent.trim())) found.push('styled ' + element.outerHTML.slice(0, 200));
    }
    for (const span of document.querySelectorAll('svg tspan')) {
        const style = span.getAttribute('style') || '';
        if (/font-weight:\\s*bold|font-style:\\s*italic/.test(style) && wrapped.includes(span.textContent.trim())) {
            found.push('styled ' + span.outerHTML.slice(0, 200));
        }
    }
    return found;
}"""
# Everything the page shows as text: the DOM's text and Plotly's SVG text (tables are drawn on a canvas).
SHOWN = """() => document.body.innerText + '\\n' +
    [...document.querySelectorAll('svg text')].map(text => text.textContent).join('\\n')"""


@pytest.fixture(scope="module")
def listening() -> Iterator[Listener]:
    with listener() as seen:
        yield seen


@pytest.fixture(scope="module")
def hostile(listening: Listener, tmp_path_factory: pytest.TempPathFactory) -> HostileWarehouse:
    try:
        return hostile_warehouse(tmp_path_factory.mktemp("hostile"), listening.base)
    except RuntimeError as exc:
        pytest.fail(f"could not build the hostile warehouse: {exc}")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def server(hostile: HostileWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    try:
        running = start_dashboard(hostile.db, hostile.env(), tmp_path_factory.mktemp("hostile-server") / "log")
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield running
    finally:
        running.stop()


class Watch:
    """A browser page whose dialogs are recorded, and the checks every view of the data gets."""

    def __init__(self, browser, listening: Listener, viewport: dict[str, int] = VIEWPORT) -> None:
        self.context = browser.new_context(viewport=viewport)
        self.page = self.context.new_page()
        self.listening = listening
        self.dialogs: list[str] = []
        self.shown: list[str] = []
        self.views = 0
        self.page.on("dialog", self._dialog)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def check(self, where: str) -> None:
        """Nothing called home, ran or was styled; remember what the view shows as text."""
        page = self.page
        page.wait_for_timeout(200)  # an image or a script the view added would have fired by now
        assert self.listening.requests == [], f"{where}: requests reached the listener: {self.listening.requests}"
        assert self.dialogs == [], f"{where}: dialogs opened: {self.dialogs}"
        assert page.evaluate("() => window.__pwned") is None, f"{where}: a payload's script ran"
        foreign = page.evaluate(FOREIGN, self.listening.base.removeprefix("http://"))
        assert foreign == [], f"{where}: {foreign}"
        exceptions = page.locator('[data-testid="stException"]')
        assert exceptions.count() == 0, f"{where}: {exceptions.all_inner_texts()}"
        self.shown.append(page.evaluate(SHOWN))
        self.views += 1

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watch(browser, listening: Listener) -> Iterator[Watch]:
    watching = Watch(browser, listening)
    try:
        yield watching
    finally:
        watching.close()


def selectbox(page, label: str):
    return page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_role("combobox", name=label))


def each_option(page, label: str, visit: Callable[[str], None]) -> list[str]:
    """Choose every option of the selectbox `label` in turn (the one shown first), visiting each; the options."""
    box = selectbox(page, label)
    combobox = box.get_by_role("combobox")
    shown = combobox.input_value()
    visit(shown)
    names = option_names(page, box)
    assert shown in names, (shown, names)
    for name in names:
        if name == shown:
            continue
        combobox.fill(name)  # the list narrows to the options holding this text
        page.get_by_role("listbox").get_by_role("option", name=name, exact=True).click()
        wait_until_idle(page)
        assert combobox.input_value() == name, (combobox.input_value(), name)
        visit(name)
    return names


# Scroll a long list of options (it draws only the options in view) by a few rows; false at its end.
SCROLL = """listbox => {
    let list = listbox;
    while (list && list.scrollHeight <= list.clientHeight) list = list.parentElement;
    if (!list) return false;
    const before = list.scrollTop;
    list.scrollTop = before + 120;
    return list.scrollTop !== before;
}"""


def option_names(page, box) -> list[str]:
    """Every option of a selectbox, in order: its list scrolled from top to bottom."""
    listbox = open_listbox(page, box)
    names: list[str] = []
    for _ in range(1_000):
        for name in listbox.get_by_role("option").all_inner_texts():
            if name not in names:
                names.append(name)
        if not listbox.evaluate(SCROLL):
            page.keyboard.press("Escape")
            return names
        page.wait_for_timeout(100)
    raise AssertionError(f"no end to the options: {names[-3:]}")


def open_listbox(page, box):
    """Open a selectbox's list of options (a click right after a rerun can be lost: try again)."""
    listbox = page.get_by_role("listbox")
    for _ in range(5):
        box.get_by_role("button", name="Open").click()
        try:
            listbox.wait_for(timeout=5_000)
            return listbox
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            wait_until_idle(page)
    listbox.wait_for(timeout=LOAD_TIMEOUT_MS)
    return listbox


def test_every_page_and_selector_shows_the_data_as_text(
    watch: Watch, server: DashboardServer, hostile: HostileWarehouse
) -> None:
    page = watch.page
    for dashboard_page in PAGES:
        open_page(page, server, dashboard_page)
        watch.check(dashboard_page.url_path)
        where = dashboard_page.url_path
        tenants = each_option(page, "Tenant", lambda tenant, where=where: watch.check(f"{where}, tenant {tenant}"))
        assert len(tenants) >= 5 and any("<a href=" in tenant for tenant in tenants), tenants
        for days in ("7 days", "90 days"):  # with the last tenant chosen
            page.locator('[data-testid="stSidebar"]').get_by_role("radio", name=days).click()
            wait_until_idle(page)
            watch.check(f"{where}, period {days}")
    open_page(page, server, next(p for p in PAGES if p.url_path == "conversations"))
    projects = each_option(page, "Project", lambda project: watch.check(f"conversations, project {project}"))
    assert any("<img" in project for project in projects), projects
    open_page(page, server, next(p for p in PAGES if p.url_path == "skills"))
    skills = each_option(page, "Skill", lambda skill: watch.check(f"skills, skill {skill}"))
    assert "\\u202eevil-skill" in skills, skills  # the override shows as its code point, in the options too
    open_page(page, server, next(p for p in PAGES if p.url_path == "evals"))
    cells = each_option(page, "Cell", lambda cell: watch.check(f"evals, cell {cell}"))
    assert len(cells) >= 20, cells
    shown = "\n".join(watch.shown)
    payloads = hostile.hostile
    for name in ("script", "img", "markdown_image", "javascript_link", "web_link", "anchor", "bold", "strong",
                 "svg", "entity"):  # fmt: skip
        assert payloads[name] in shown, f"the {name} payload is not shown as text"
    assert "\\u202eevil" in shown and "\u202e" not in shown  # the override is inert: shown as its code point
    assert f"conv {payloads['script']}" in shown  # a conversation id, in the line above its turns
    assert f"tenant {payloads['anchor']}" in shown  # a tenant name, in the scope line and the selector
    assert watch.views > 100


@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots_of_hostile_values(browser, listening: Listener, server: DashboardServer, width: int) -> None:
    """The Skills and Evals pages with hostile values, desktop and phone width, into tests/artifacts/."""
    watching = Watch(browser, listening, {"width": width, "height": 900})
    try:
        for url_path in ("skills", "evals"):
            open_page(watching.page, server, next(p for p in PAGES if p.url_path == url_path))
            watching.check(url_path)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            # Streamlit scrolls inside its main container: grow the window to its height for the whole page
            height = watching.page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
            watching.page.set_viewport_size({"width": width, "height": min(height + 40, 12_000)})
            watching.page.wait_for_timeout(500)  # Plotly relayouts on resize
            watching.page.screenshot(path=str(ARTIFACTS / f"hostile-{url_path}-{width}.png"), full_page=True)
            # the page is no wider than the window: long values wrap or are cut, they do not push the layout
            overflow = watching.page.evaluate(
                "() => document.querySelector('[data-testid=\"stMain\"]').scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, f"{url_path} at {width} px is {overflow} px wider than the window"
    finally:
        watching.close()


@pytest.fixture(scope="module")
def report(hostile: HostileWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile-report") / "report.html"
    done = cli("report", "--db", str(hostile.db), "--out", str(out), "--pdf", env=hostile.env(), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_report_shows_the_data_as_text(
    browser, listening: Listener, report: Path, hostile: HostileWarehouse
) -> None:
    watching = Watch(browser, listening)
    try:
        page = watching.page
        page.goto(report.resolve().as_uri())
        page.wait_for_function(
            "() => [...document.querySelectorAll('.plotly-graph-div')].every(div => div.querySelector('.main-svg'))",
            timeout=LOAD_TIMEOUT_MS,
        )
        watching.check("report")
        shown = watching.shown[-1]
        for name in ("script", "img", "anchor", "bold", "markdown_image"):
            # a chart's tick label may cut a long payload (charts.TICK_LIMIT): its start is the markup, as text
            assert hostile.hostile[name][:TICK_START] in shown, f"the {name} payload is not shown as text"
    finally:
        watching.close()
    assert listening.requests == []


def test_the_pdf_has_no_link_from_the_data(report: Path, listening: Listener) -> None:
    printed = report.with_suffix(".pdf").read_bytes()
    assert printed.startswith(b"%PDF")
    inflated = pdf.everything(printed)
    # chromium writes a link as a /Link annotation with a /URI action; the report's own links lead to its
    # sections (a /Dest in the file, no /URI)
    assert b"/URI" not in inflated
    links = re.findall(rb"/Subtype\s*/Link(.*?)>>", inflated, re.DOTALL)
    assert all(b"/Dest" in link for link in links), links
    assert listening.base.removeprefix("http://").encode() not in inflated
    assert b"/JavaScript" not in inflated and b"/JS" not in inflated


def test_the_pdf_shows_the_payloads_as_text(report: Path, hostile: HostileWarehouse) -> None:
    """The printed text (the fonts' ToUnicode maps give the characters back) holds the payloads literally;
    compared without white space, since a table cell may wrap a value over lines."""
    printed = re.sub(r"\s", "", pdf.text(report.with_suffix(".pdf").read_bytes()))
    for name in ("script", "img", "anchor", "bold"):
        start = re.sub(r"\s", "", hostile.hostile[name][:TICK_START])
        assert start in printed, f"the {name} payload is not printed as text"
