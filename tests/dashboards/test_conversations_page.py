"""The Conversations, Retention and Warehouse pages as a product lead reads them (issue 27, items 1, 5, 6, 9):
a conversation's reactions in time order with what was said; with a tenant selected, the counts over every
tenant say "not split by tenant" in place of a number; page text in words (no column, table, seed or dbt
variable names), counts with thousands separators; the warehouse file named on the Warehouse page only; at
390 px the tables keep their key numbers on screen and no chart title is cut.

AppTest on the demo warehouse, expectations read from its serving file; the 390 px checks in chromium."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml
from streamlit.testing.v1 import AppTest

from dashboards import words
from dashboards.filters import DEFAULT_PERIOD
from tests.support.dashboard import (
    LOAD_TIMEOUT_MS,
    PAGES,
    ROOT,
    DashboardPage,
    DemoWarehouse,
    assert_no_exception,
    chromium,
    metrics,
    run_page,
    start_dashboard,
    wait_until_idle,
)
from warehouse.location import serving_path

pytestmark = pytest.mark.slow
TENANT = "acme"
THREE_PAGES = ("conversations", "retention", "warehouse")
REACTION_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · turn \d+ · ")


def page(url_path: str) -> DashboardPage:
    return next(page for page in PAGES if page.url_path == url_path)


def serving(demo: DemoWarehouse, sql: str, parameters: list | None = None) -> pd.DataFrame:
    with duckdb.connect(str(serving_path(demo.db)), read_only=True) as con:
        return con.execute(sql, parameters or []).df()


def leaves(node: object) -> Iterator[object]:
    """The page's elements in the order they are drawn (blocks opened)."""
    children = getattr(node, "children", None)
    if children is None:
        yield node
        return
    for child in children.values():
        yield from leaves(child)


def texts(app: AppTest) -> list[str]:
    """What the page says in its own words: titles, captions, markdown, boxes, metrics and their help."""
    said = [
        str(element.value)
        for kind in ("title", "subheader", "caption", "markdown", "info", "warning", "error", "success")
        for element in getattr(app, kind)
    ]
    said += [f"{metric.label}\n{metric.value}\n{metric.help or ''}" for metric in app.metric]
    said += [expander.label for expander in app.expander]
    return said


def shown_columns(frame_element: object) -> dict[str, dict]:
    """A table's shown columns: name -> its column config (label, help, format), in the order shown."""
    config = json.loads(frame_element.proto.columns or "{}")
    frame = frame_element.value
    order = list(frame_element.proto.column_order) or list(frame.columns)
    return {name: config.get(name, {}) for name in order if not config.get(name, {}).get("hidden")}


def figures(app: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def figure_words(figure: dict) -> list[str]:
    layout = figure["layout"]
    title = layout.get("title", {})
    said = [str(title.get("text", "")), str(title.get("subtitle", {}).get("text", ""))]
    said += [str(layout.get(axis, {}).get("title", {}).get("text", "")) for axis in ("xaxis", "yaxis")]
    said.append(str(layout.get("legend", {}).get("title", {}).get("text", "")))
    said += [str(trace.get("name", "")) for trace in figure["data"]]
    return said


def test_drill_down_lists_a_conversations_reactions_in_time_order_with_their_texts(on_demo: DemoWarehouse) -> None:
    """The page opens the most recent conversation of the period: each of its active reactions, in time order,
    says when, who (user or machine), what (in words), the machine's confidence, and its text or "no comment"."""
    as_of = serving(on_demo, "select max(as_of_date) as as_of from marts.metric_rates_by_period")["as_of"][0]
    start = pd.Timestamp(as_of) - pd.Timedelta(days=DEFAULT_PERIOD - 1)
    chosen = serving(
        on_demo,
        """
        select source_tenant_id, project, conversation_id from marts.conversation_satisfaction
        where last_activity_at >= ? and last_activity_at < ? + interval 1 day
        order by last_activity_at desc, conversation_id limit 1
        """,
        [start.to_pydatetime(), pd.Timestamp(as_of).to_pydatetime()],
    ).iloc[0]
    expected = serving(
        on_demo,
        """
        select reacted_at, origin, reaction, confidence, comment_text from marts.turn_reactions_active
        where source_tenant_id = ? and project = ? and conversation_id = ?
        order by reacted_at
        """,
        [chosen["source_tenant_id"], chosen["project"], chosen["conversation_id"]],
    )
    # what makes this conversation a fair test: several reactions, said and unsaid, a user's and the machine's
    assert len(expected) >= 2 and expected["comment_text"].isna().any() and expected["comment_text"].notna().any()
    assert set(expected["origin"]) == {"user", "machine"}

    app = run_page(page("conversations"))
    assert_no_exception(app)
    drawn = list(leaves(app.main))
    cards = [
        (str(element.value), drawn[index + 1])
        for index, element in enumerate(drawn)
        if getattr(element, "type", None) == "markdown" and REACTION_LINE.match(str(element.value))
    ]
    assert len(cards) == len(expected), [line for line, _ in cards]
    for (line, comment), reaction in zip(cards, expected.itertuples(), strict=True):
        assert line.startswith(f"{pd.Timestamp(reaction.reacted_at):%Y-%m-%d %H:%M:%S} UTC"), line
        assert f" · {words.origin(reaction.origin)} · " in line and f"**{words.reaction(reaction.reaction)}**" in line
        assert (f"confidence {reaction.confidence:.2f}" in line) == (reaction.origin == "machine"), line
        if pd.isna(reaction.comment_text):
            assert (comment.type, comment.value) == ("caption", "no comment")
        else:
            assert (comment.type, comment.value) == ("text", reaction.comment_text)
    assert str(chosen["conversation_id"]) in "\n".join(texts(app))
    said = "\n".join(texts(app)) + "\n".join(str(element.value) for element in app.text)
    assert not re.search(r"\bNone\b", said)
    history = app.dataframe[-1].value  # every stored reaction: a comment is text or "no comment", never None
    assert history["comment_text"].notna().all() and "no comment" in set(history["comment_text"])


@pytest.mark.parametrize("url_path", THREE_PAGES)
def test_with_a_tenant_the_counts_over_every_tenant_say_not_split(on_demo: DemoWarehouse, url_path: str) -> None:
    app = run_page(page(url_path))
    app.selectbox(key="tenant").set_value(TENANT).run()
    assert_no_exception(app)
    said = "\n".join(texts(app))
    assert words.NOT_SPLIT_BY_TENANT in said
    shown = metrics(app)
    if url_path == "conversations":  # replaced and cleared reactions: no tenant; satisfaction: the tenant's
        assert not {"User reactions", "Replacements", "Reversals", "Clears"} & set(shown), shown
        assert "replaced or cleared" not in said
        assert shown["Satisfaction, user reactions"].endswith("%")
    elif url_path == "retention":  # the policies stay, their row counts do not
        assert shown["Next purge deletes"] == shown["Next purge archives"] == words.NOT_SPLIT_BY_TENANT
        assert shown["Policies"] == words.count(len(serving(on_demo, "select * from marts.retention_policy_summary")))
        (policies,) = app.dataframe
        assert not {"rows_kept", "rows_outside_window"} & set(shown_columns(policies))
        assert not app.get("plotly_chart")
    else:  # warehouse: every count is over every tenant but the turn reactions' sources, which are the tenant's
        assert shown == {}
        assert not app.get("plotly_chart")
        (sources,) = app.dataframe
        own = serving(
            on_demo,
            "select distinct source_tenant_id from marts.feedback_signals "
            "where tenant = ? and source_system = 'turn_reactions'",
            [TENANT],
        )
        assert not sources.value.empty and set(sources.value["tenant"]) == set(own["source_tenant_id"])


def test_the_warehouse_file_is_named_on_the_warehouse_page_only(on_demo: DemoWarehouse) -> None:
    folder = str(on_demo.db.parent)
    for dashboard_page in PAGES:
        app = run_page(dashboard_page)
        assert_no_exception(app)
        said = "\n".join(texts(app))
        if dashboard_page.url_path == "warehouse":
            assert str(serving_path(on_demo.db)) in said
        else:
            assert folder not in said, (dashboard_page.url_path, [line for line in texts(app) if folder in line])


def identifiers(demo: DemoWarehouse) -> set[str]:
    """Names a reader should never have to read: the marts' multi-word column and table names, the seeds' and
    the dbt variables' names."""
    names = serving(
        demo,
        "select column_name as name from information_schema.columns where table_schema = 'marts' "
        "union select table_name from information_schema.tables where table_schema = 'marts'",
    )["name"]
    variables = yaml.safe_load((ROOT / "dbt_project.yml").read_text())["vars"]
    seeds = [path.stem for path in (ROOT / "seeds").rglob("*.csv")]
    return {name for name in (*names, *variables, *seeds) if "_" in name}


@pytest.mark.parametrize("url_path", THREE_PAGES)
def test_page_text_is_in_words_and_counts_have_separators(on_demo: DemoWarehouse, url_path: str) -> None:
    """No column, table, seed or dbt variable name in what the page says, in a table's headers or in a chart;
    no empty table cell (a table shows it as `None`); every whole-number column shows thousands separators."""
    app = run_page(page(url_path))
    assert_no_exception(app)
    said = texts(app)
    for table in app.dataframe:
        columns = shown_columns(table)
        said += [f"{config.get('label', name)}\n{config.get('help', '')}" for name, config in columns.items()]
        shown = table.value[list(columns)]
        assert not shown.isna().any().any(), shown.columns[shown.isna().any()].tolist()  # a table shows it as None
        for name, config in columns.items():
            if pd.api.types.is_integer_dtype(table.value[name]):
                assert config.get("type_config", {}).get("format") == "localized", (name, config)
    for figure in figures(app):
        said += figure_words(figure)
    names = identifiers(on_demo)
    found = {name for name in names for line in said if re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/.-])", line)}
    assert not found, found


def title_boxes(page: object) -> list[dict]:
    """Each chart's title and subtitle: their text, left and right edge, and the chart's."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
            const frame = plot.getBoundingClientRect();
            return [...plot.querySelectorAll('.gtitle, .gtitle-subtitle')].map(title => {
                const box = title.getBoundingClientRect();
                return {text: title.textContent, left: box.left, right: box.right,
                        plot_left: frame.left, plot_right: frame.right};
            });
        })"""
    )


def table_headers(page: object) -> list[list[str]]:
    """The column headers each table draws on screen (its grid's rendered part), table by table."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(grid =>
            [...grid.querySelectorAll('table[role=grid] th')].map(header => header.innerText.trim()))"""
    )


# the key numbers of each page's tables, in the order the tables come
KEY_COLUMNS = {
    "conversations": [{"Satisfaction", "Reactions"}],
    "retention": [{"Next purge", "Kept"}],
    "warehouse": [{"Landed", "Quarantined"}, {"Active reactions"}, {"Rows"}, {"Landed"}],
}


def test_at_390_px_tables_keep_their_key_numbers_and_chart_titles_fit(demo: DemoWarehouse, tmp_path: Path) -> None:
    server = start_dashboard(demo.db, demo.env(), tmp_path / "dashboard.log")
    try:
        with chromium() as browser:
            context = browser.new_context(viewport={"width": 390, "height": 5000})
            browser_page = context.new_page()
            for url_path in THREE_PAGES:
                dashboard_page = page(url_path)
                browser_page.goto(f"{server.url}/{dashboard_page.address}")
                browser_page.get_by_role("heading", name=dashboard_page.title, level=1).wait_for(
                    timeout=LOAD_TIMEOUT_MS
                )
                wait_until_idle(browser_page)
                headers = table_headers(browser_page)
                assert len(headers) >= len(KEY_COLUMNS[url_path]), (url_path, headers)
                for on_screen, key in zip(headers, KEY_COLUMNS[url_path], strict=False):
                    assert key <= set(on_screen), (url_path, key, on_screen)
                titles = title_boxes(browser_page)
                assert titles, url_path
                for title in titles:
                    assert title["plot_left"] <= title["left"] and title["right"] <= title["plot_right"], title
            context.close()
    finally:
        server.stop()


def test_reaction_words() -> None:
    assert [words.reaction(code) for code in ("ok", "not_ok", "neutral", None)] == [
        "OK",
        "not OK",
        "neutral",
        "no value",
    ]
    assert words.origin("machine") == "machine (inferred)" and words.origin("robot") == "robot"
