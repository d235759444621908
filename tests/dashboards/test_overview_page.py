"""The Overview and Session feedback pages as a product lead reads them (issue 27): with a tenant chosen, no
number of a source without a tenant stands as that tenant's (it reads "not split by tenant"); the movers name
agent configs, golden sets and tenants as the Evals page does; surfaces, sources and counts read in words with
thousands separators, with no column or dbt variable name; and at 390 px the chart titles stay inside their
charts and the tables' key numbers on screen (chromium).

AppTest for the content, one dashboard server and one chromium for the phone checks; the demo warehouse of the
session (tests/support/dashboard.py) is what every expectation is read from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from dashboards import words
from tests.support.dashboard import (
    LOAD_TIMEOUT_MS,
    PAGES,
    DashboardPage,
    DashboardServer,
    DemoWarehouse,
    all_members_key,
    assert_no_exception,
    chromium,
    run_page,
    start_dashboard,
    wait_until_idle,
)

pytestmark = pytest.mark.slow

AS_OF = "2026-11-01"
PERIOD = 30  # filters.DEFAULT_PERIOD
TENANT, TENANT_NAME = "acme", "Acme Corporation"
PHONE = {"width": 390, "height": 844}
# words a reader should never meet on these pages: codes, column and dbt names
CODES = ("cli_end", "cli_exit", "api_end", "not_ok", "feedback_signals", "session_feedback", "turn_reactions",
         "mover_min_trials", "segment_type", "is_rankable", "seed `", "seeds/", ".duckdb")  # fmt: skip


def page(url_path: str) -> DashboardPage:
    return next(page for page in PAGES if page.url_path == url_path)


def opened(url_path: str, tenant: str | None = None) -> AppTest:
    app = run_page(page(url_path))
    if tenant:
        app.selectbox(key="tenant").set_value(tenant).run()  # the widget's value is the key, it shows the name
    assert_no_exception(app)
    return app


def figures(app: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def shown(app: AppTest) -> str:
    """Everything the page writes: text, cards (value and help), table cells and headers, and every chart's
    titles, axis titles and trace names."""
    parts = [
        str(element.value)
        for kind in ("caption", "markdown", "info", "warning", "subheader")
        for element in getattr(app, kind)
    ]
    parts += [f"{metric.label}\n{metric.value}\n{metric.help or ''}" for metric in app.metric]
    parts += [frame.value.to_csv() for frame in app.dataframe]
    for figure in figures(app):
        layout = figure["layout"]
        parts += [layout["title"]["text"], layout["title"].get("subtitle", {}).get("text", "")]
        parts += [str(axis.get("title", {}).get("text", "")) for key, axis in layout.items() if "axis" in key]
        parts += [str(trace.get("name", "")) for trace in figure["data"]]
    return "\n".join(parts)


def period_rate(demo: DemoWarehouse, metric: str, tenant_filter: str | None = None) -> tuple[float, int]:
    everyone = all_members_key(demo.db)
    with duckdb.connect(str(demo.db), read_only=True) as con:
        return con.execute(
            """
            select rate, trials from marts.metric_rates_by_period
            where as_of_date = $as_of and period_days = $period and is_retention_filtered and segment_type = 'all'
              and metric = $metric and tenant_filter = $tenant and project_filter = $all
            """,
            {"as_of": AS_OF, "period": PERIOD, "metric": metric, "tenant": tenant_filter or everyone, "all": everyone},
        ).fetchone()


# -- item 1: the tenant filter -------------------------------------------------------------------------------------
def test_with_a_tenant_the_overview_shows_no_all_tenant_rate(on_demo: DemoWarehouse) -> None:
    app = opened("overview", TENANT)
    cards = {metric.label: metric.value for metric in app.metric}
    for label in ("Session positive rate", "Correction rate (all skills)"):
        assert words.NOT_SPLIT_BY_TENANT in cards[label] and "%" not in cards[label], cards
    rate, _ = period_rate(on_demo, "reaction_satisfaction", TENANT)
    assert cards["Reaction satisfaction"] == words.percent(rate), "the tenant's own rate stays"
    page_text = shown(app)
    for metric in ("session_positive_rate", "correction_rate"):
        rate, trials = period_rate(on_demo, metric)  # the all-tenant numbers
        assert words.percent(rate) not in page_text and f"n = {words.count(trials)}" not in page_text, metric
    # the movers hold no segment of a tenantless source, and say why
    movers = "\n".join(str(element.value) for element in app.markdown)
    assert "Eval pass rate" in movers or "Reaction satisfaction" in movers
    assert "Session positive rate," not in movers and "Correction rate," not in movers
    assert "skill " not in movers and "surface " not in movers
    assert any(words.NOT_SPLIT_BY_TENANT in caption.value and "left out" in caption.value for caption in app.caption)


def test_with_a_project_the_overview_says_what_has_no_project(on_demo: DemoWarehouse) -> None:
    """Evals have a tenant but no project, the unified signals likewise: under a project filter their numbers
    would be the whole tenant's."""
    app = opened("overview", TENANT)
    app.selectbox(key="project").set_value("docs").run()
    assert_no_exception(app)
    cards = {metric.label: metric.value for metric in app.metric}
    assert words.NOT_SPLIT_BY_PROJECT in cards["Eval pass rate"], cards
    assert words.NOT_SPLIT_BY_TENANT in cards["Session positive rate"], cards
    assert cards["Reaction satisfaction"].endswith("%"), "reactions have a project"
    assert any(info.value.startswith(f"Signal volume by source: {words.NOT_SPLIT_BY_PROJECT}") for info in app.info)
    assert not [figure for figure in figures(app) if "Feedback signals" in figure["layout"]["title"]["text"]]
    movers = "\n".join(str(element.value) for element in app.markdown)
    assert "Eval pass rate," not in movers
    assert any(f"Eval pass rate: {words.NOT_SPLIT_BY_PROJECT}" in caption.value for caption in app.caption)


def test_with_a_tenant_session_feedback_shows_no_number(on_demo: DemoWarehouse) -> None:
    app = opened("session-feedback", TENANT)
    cards = {metric.label: metric.value for metric in app.metric}
    assert set(cards) == {"Responses", "Positive rate", "Skip rate"}
    assert all(words.NOT_SPLIT_BY_TENANT in value for value in cards.values()), cards
    assert any(words.NOT_SPLIT_BY_TENANT in info.value for info in app.info)
    assert not app.get("plotly_chart") and not app.dataframe
    rate, trials = period_rate(on_demo, "session_positive_rate")
    page_text = shown(app)
    assert words.percent(rate) not in page_text and words.count(trials) not in page_text


# -- item 5: the movers by name --------------------------------------------------------------------------------------
def test_movers_name_agent_configs_golden_sets_and_tenants(on_demo: DemoWarehouse) -> None:
    app = opened("overview")
    movers = "\n".join(str(element.value) for element in app.markdown) + "\n".join(
        frame.value.to_csv() for frame in app.dataframe
    )
    with duckdb.connect(str(on_demo.db), read_only=True) as con:
        # the significant eval segments rank first among the movers; their names as the Evals page has them
        expected = con.execute(
            """
            with segments as (
                select segment from marts.metric_rates_by_period
                where as_of_date = $as_of and period_days = $period and is_retention_filtered
                  and metric = 'eval_pass_rate' and segment_type = 'golden_set_agent' and is_rankable
                  and is_significant_change and tenant_filter = $all and project_filter = $all
            ),
            names as (
                select distinct golden_set, agent_id, agent_config_label, tenant_name from marts.eval_matrix
            )
            select segments.segment, names.agent_config_label, names.golden_set, names.tenant_name
            from segments
            join names on segments.segment = names.golden_set || ' / agent ' || substr(names.agent_id, 1, 8)
            """,
            {"as_of": AS_OF, "period": PERIOD, "all": all_members_key(on_demo.db)},
        ).fetchall()
    assert expected, "the demo has a significant eval mover"
    for segment, label, golden_set, tenant_name in expected:
        assert f"{label} on {golden_set} at {tenant_name}" in movers, (segment, movers)
        assert segment not in movers
    assert not re.search(r"agent [0-9a-f]{8}", movers), "no config named by its id"


# -- item 6: words, units, no codes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("url_path", ["overview", "session-feedback"])
def test_pages_read_in_words_with_separated_counts(on_demo: DemoWarehouse, url_path: str) -> None:
    app = opened(url_path)
    page_text = shown(app)
    for code in CODES:
        assert code not in page_text, code
    # a sidebar filter's help names no seed or column
    assert "seed" not in (app.selectbox(key="tenant").help or "")
    for count in re.findall(r"n = ([\d,]+)", page_text):
        assert re.fullmatch(r"\d{1,3}(,\d{3})*", count), count
    if url_path == "session-feedback":
        names = {trace["name"] for figure in figures(app) for trace in figure["data"] if "name" in trace}
        assert {words.surface(code) for code in ("cli_end", "cli_exit", "api_end")} <= names
    else:
        # a mover of more than a thousand trials shows its n with a separator (the correction rate's skills)
        assert re.search(r"n = \d{1,3},\d{3}", "\n".join(str(element.value) for element in app.markdown))


# -- item 9: at 390 px ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    try:
        running = start_dashboard(demo.db, demo.env(), tmp_path_factory.mktemp("overview") / "server.log")
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def phone(server: DashboardServer) -> Iterator[object]:
    with chromium() as browser:
        context = browser.new_context(viewport=PHONE)
        try:
            yield context.new_page()
        finally:
            context.close()


def open_on_phone(phone, server: DashboardServer, url_path: str) -> None:
    chosen = page(url_path)
    phone.goto(f"{server.url}/{chosen.address}")
    phone.get_by_role("heading", name=chosen.title, level=1).wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_until_idle(phone)


# every chart: its title's, subtitle's and axis titles' boxes against the chart's own svg box
TITLE_BOXES = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].map(chart => {
    const svg = chart.querySelector('.main-svg').getBoundingClientRect();
    const boxes = [...chart.querySelectorAll('.gtitle, .gtitle-subtitle, .xtitle, .ytitle')]
        .map(t => t.getBoundingClientRect());
    return {title: chart.querySelector('.gtitle')?.textContent, svg: [svg.left, svg.right],
            texts: boxes.map(b => [b.left, b.right])};
})"""


@pytest.mark.browser
@pytest.mark.parametrize("url_path", ["overview", "session-feedback"])
def test_at_390_px_chart_titles_stay_inside_their_charts(phone, server: DashboardServer, url_path: str) -> None:
    open_on_phone(phone, server, url_path)
    charts = phone.evaluate(TITLE_BOXES)
    assert charts, "the page draws charts"
    for chart in charts:
        left, right = chart["svg"]
        assert right <= PHONE["width"] + 1, chart
        assert chart["texts"], chart
        for text_left, text_right in chart["texts"]:
            assert left - 1 <= text_left and text_right <= right + 1, chart


@pytest.mark.browser
def test_at_390_px_the_key_numbers_stay_on_screen(phone, server: DashboardServer) -> None:
    # the movers: each one, its change in pp and its n, within the screen's width
    open_on_phone(phone, server, "overview")
    movers = phone.locator('[data-testid="stMarkdownContainer"] li').filter(has_text=" pp")
    assert movers.count() > 0
    for index in range(movers.count()):
        box = movers.nth(index).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], movers.nth(index).inner_text()
    # the modality table: its rate and count columns are the ones drawn in the screen's width (the grid's
    # accessible table holds the columns it draws)
    open_on_phone(phone, server, "session-feedback")
    table = phone.locator('[data-testid="stDataFrame"]').first
    box = table.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]
    headers = table.locator('th[role="columnheader"]').all_inner_texts()
    assert {"Modality", "Positive rate", "Skip rate", "Responses"} <= {header.strip() for header in headers}, headers
