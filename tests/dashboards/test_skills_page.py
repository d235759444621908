"""The Skills page as a product lead reads it (issue 27, items 1, 3, 4, 6, 9): it leads with what got
significantly worse, by skill and dimension (marts.skill_dimension_changes, read here from the serving file the
dashboard reads), each section's title states its window, the page speaks in words and percentage points rather
than column and variable names, a selected tenant gets "not split by tenant" in place of every number (analyzer
events have no tenant), and at 390 px the lead's numbers and every chart title stay on screen.

AppTest for the content, one chromium page at phone width for the layout; the demo warehouse of the session."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from dashboards import words
from tests.support.dashboard import (
    PAGES,
    DashboardPage,
    DashboardServer,
    DemoWarehouse,
    assert_no_exception,
    chromium,
    copy_warehouse,
    open_page,
    republish,
    run_page,
    start_dashboard,
)
from warehouse.location import serving_path

pytestmark = pytest.mark.slow
SKILLS = next(page for page in PAGES if page.url_path == "skills")
PHONE = {"width": 390, "height": 844}
# Column and variable names, paths: what page text must not show (item 6).
CODES = (
    "skill_id",
    "dimension_hint",
    "recent_sample",
    "prior_sample",
    "not_ok",
    "insufficient_data",
    "min_invocations",
    "trend_window_days",
    "correction_lookback_days",
    "dbt var",
    "seeds/",
    ".duckdb",
)


def served(db: Path, sql: str) -> list[dict[str, Any]]:
    """Rows of the serving file (what the dashboard reads)."""
    with duckdb.connect(str(serving_path(db)), read_only=True) as con:
        cursor = con.execute(sql)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def page_words(app: AppTest) -> list[str]:
    """Every text the page shows: headings, markdown, boxes, tooltips, chart titles and axis titles, table
    column labels."""
    shown = [str(element.value) for kind in ("subheader", "caption", "markdown") for element in getattr(app, kind)]
    shown += [str(element.value) for kind in ("info", "warning", "success", "error") for element in getattr(app, kind)]
    shown += [element.proto.help for element in app.markdown if element.proto.help]
    for chart in app.get("plotly_chart"):
        layout = json.loads(chart.proto.spec)["layout"]
        shown.append(layout["title"]["text"])
        shown.append((layout["title"].get("subtitle") or {}).get("text") or "")
        shown += [layout[axis]["title"]["text"] for axis in ("xaxis", "yaxis") if "title" in layout.get(axis, {})]
    for frame in app.dataframe:
        config = json.loads(frame.proto.columns or "{}")
        shown += [str(column.get("label", "")) for column in config.values()]
        shown += [str(column.get("help", "")) for column in config.values()]
    return shown


def test_the_page_leads_with_the_significant_worsenings_of_the_mart(use_warehouse, demo: DemoWarehouse) -> None:
    """The first section lists every significant worsening of skill_dimension_changes, largest first: skill,
    dimension in words, the change in pp with its interval, both rates and their invocations."""
    worse = served(
        demo.db,
        "select * from marts.skill_dimension_changes where is_significant_worsening "
        "order by rate_change desc, skill_id, dimension",
    )
    tested = served(demo.db, "select count(q_value) as n from marts.skill_dimension_changes")[0]["n"]
    assert worse, "the demo's worsening skill got significantly worse on some dimension"
    use_warehouse(demo.db)
    app = run_page(SKILLS)
    assert_no_exception(app)
    assert app.subheader[0].value == "Got significantly worse: last 30 days vs the 30 days before"
    lead = next(markdown for markdown in app.markdown if "got significantly worse" in markdown.value)
    assert lead.value.startswith(f"**{words.count(len(worse))}** of {words.count(tested)} skill x dimension cells")
    assert lead.proto.help == words.q_value_help(0.05)
    lines = [line for line in lead.value.splitlines() if line.startswith("- ")]
    assert len(lines) == len(worse)
    for line, row in zip(lines, worse, strict=True):
        assert line.startswith(f"- {row['skill_id']}, **{row['dimension'].replace('_', ' ')}**: ")
        assert f"**{words.points(row['rate_change'])}**" in line
        assert f"95% CI {words.points_interval(row['rate_change_ci_low'], row['rate_change_ci_high'])}" in line
        assert f"{words.percent(row['recent_rate'])} of {words.count(row['recent_invocations'])} invocations" in line
        assert f"{words.percent(row['prior_rate'])} of {words.count(row['prior_invocations'])} before" in line
    caption = next(caption.value for caption in app.caption if caption.value.startswith("Last 30 days: "))
    assert "2026-10-03 to 2026-11-01; the 30 days before: 2026-09-03 to 2026-10-02" in caption


def test_nothing_significantly_worse_is_said_with_the_cells_tested(
    use_warehouse, demo: DemoWarehouse, tmp_path: Path
) -> None:
    db = copy_warehouse(demo.db, tmp_path / "calm.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("update marts.skill_dimension_changes set is_significant_worsening = false")
        (tested,) = con.execute("select count(q_value) from marts.skill_dimension_changes").fetchone()
    use_warehouse(republish(db))
    app = run_page(SKILLS)
    assert_no_exception(app)
    said = (
        f"Nothing got significantly worse (last 30 days vs the 30 days before, {words.count(tested)} skill x "
        "dimension cells tested)."
    )
    assert [success.value for success in app.success] == [said]


def test_titles_state_their_windows_and_the_page_speaks_in_words(use_warehouse, demo: DemoWarehouse) -> None:
    """Fixed windows in the titles, the period where it applies; no column or variable name, no path; changes
    in pp (never %), p- and q-values explained in tooltips, not in chart axes or category labels."""
    use_warehouse(demo.db)
    app = run_page(SKILLS)
    assert_no_exception(app)
    assert [subheader.value for subheader in app.subheader] == [
        "Got significantly worse: last 30 days vs the 30 days before",
        "Correction-rate ranking: last 90 days",
        "Trend: last 30 days vs the 30 days before",
        "Change by skill and dimension: last 30 days vs the 30 days before",
        "A skill's weekly rate and events: the period, 2026-10-03 to 2026-11-01 (30 days)",
    ]
    # the freshness line every page opens with (layout.page) is not this page's to change
    shown = [text for text in page_words(app) if not text.startswith("Data as of ")]
    for code in CODES:
        assert not [text for text in shown if code in text], code
    charts = {json.loads(chart.proto.spec)["layout"]["title"]["text"]: chart for chart in app.get("plotly_chart")}
    trend = json.loads(charts["Change in correction rate"].proto.spec)
    assert trend["layout"]["xaxis"]["ticksuffix"] == " pp" and "%" not in trend["layout"]["xaxis"]["tickformat"]
    assert "pp" in trend["layout"]["xaxis"]["title"]["text"]
    for label in trend["data"][0]["y"]:
        assert "p=" not in label and "q=" not in label and "p<" not in label and "q<" not in label, label
    heatmap = json.loads(charts["Change per skill and dimension (pp)"].proto.spec)
    assert heatmap["data"][0]["colorbar"]["ticksuffix"] == " pp"
    table = next(frame for frame in app.dataframe if "q_value" in frame.value.columns)
    config = json.loads(table.proto.columns)
    assert config["p_value"]["help"] == words.P_VALUE_HELP and config["q_value"]["help"] == words.q_value_help(0.05)
    assert all(value.endswith(" pp") or value == words.MISSING for value in table.value["change"])
    assert list(table.value.columns[:2]) == ["skill_id", "change"], "the key numbers first (phone width)"


def test_a_tenant_gets_not_split_in_place_of_every_number(use_warehouse, demo: DemoWarehouse) -> None:
    """Analyzer events have no tenant: with ?tenant=acme every section says so, and the page draws no chart,
    table or number."""
    use_warehouse(demo.db)
    app = run_page(SKILLS, tenant="acme")
    assert_no_exception(app)
    said = [info.value for info in app.info if "not split by tenant" in info.value]
    assert len(said) == len(app.subheader) == 5
    assert not app.get("plotly_chart") and not app.dataframe and not app.metric
    assert not [markdown.value for markdown in app.markdown if "pp" in markdown.value or "%" in markdown.value]


@pytest.fixture(scope="module")
def phone(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The Skills page in chromium at 390 px, on a dashboard server over the demo warehouse."""
    server: DashboardServer = start_dashboard(
        demo.db, demo.env(), tmp_path_factory.mktemp("skills-dashboard") / "server.log"
    )
    try:
        with chromium() as browser:
            context = browser.new_context(viewport=PHONE)
            page = context.new_page()
            open_page(page, server, DashboardPage(SKILLS.script, SKILLS.url_path, SKILLS.title))
            yield page
            context.close()
    finally:
        server.stop()


@pytest.mark.browser
def test_at_390_px_the_lead_numbers_and_chart_titles_stay_on_screen(phone) -> None:
    """Every line of the lead (skill, dimension, change in pp) lies within the 390 px viewport, and every chart
    title lies within its chart (a Plotly title does not wrap: a long one is cut at the chart's edge)."""
    lead = phone.locator('[data-testid="stMarkdownContainer"] li').filter(has_text=" pp")
    assert lead.count() > 0
    for index in range(lead.count()):
        item = lead.nth(index)
        item.scroll_into_view_if_needed()
        box = item.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (item.text_content(), box)
    charts = phone.locator('[data-testid="stPlotlyChart"]')
    assert charts.count() >= 3
    for index in range(charts.count()):
        chart = charts.nth(index)
        chart.scroll_into_view_if_needed()
        svg = chart.locator(".main-svg").first.bounding_box()
        for part in (".gtitle", ".gtitle-subtitle"):
            titles = chart.locator(part)
            said = titles.first.text_content() if titles.count() else ""
            if not (said or "").strip():
                continue
            box = titles.first.bounding_box()
            assert box and svg and box["x"] >= svg["x"] - 1, (said, box, svg)
            assert box["x"] + box["width"] <= svg["x"] + svg["width"] + 1, (said, box, svg)
