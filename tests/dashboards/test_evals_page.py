"""The Evals page answers what happened, not only how often (issue 27, items 1, 5, 6, 7, 9 on Evals).

AppTest on the demo warehouse: a cell's divergences are a table of expected against actual per dimension;
the cells worse than the pinned baseline are listed by name with their accuracy change in pp; the matrix's
columns carry their pass rates; the trends carry each point's 95% interval and its "k of n", on an axis from
0; a selected project says "not split by project" instead of numbers. Chromium at 390 px: the matrix's labels
stay inside the chart without overlapping, and the tables show their key columns first.

What the page must show is read from the serving file's marts as main already had them (eval_matrix,
eval_cell_dimensions, eval_set_accuracy_trend_rollup), never written into the test."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboards import data, text, words
from dashboards.queries import scope as filter_scope
from tests.support.dashboard import (
    PAGES,
    DashboardServer,
    DemoWarehouse,
    assert_no_exception,
    chromium,
    open_page,
    run_page,
    start_dashboard,
)
from warehouse.location import Warehouse, serving_path

EVALS = next(page for page in PAGES if page.url_path == "evals")
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def use_demo(monkeypatch: pytest.MonkeyPatch, demo: DemoWarehouse) -> Iterator[Path]:
    monkeypatch.setenv("FEEDBACK_DB", str(demo.db))  # for the AppTest runs' entry point
    monkeypatch.setenv("DBT_TARGET_PATH", str(demo.dbt_target))
    data.clear_caches()
    with data.use_warehouse(Warehouse.at(demo.db)):  # for the queries this test calls itself
        yield demo.db
    data.clear_caches()


def marts(demo: DemoWarehouse, sql: str, parameters: list[object] | None = None) -> list[tuple]:
    with duckdb.connect(str(serving_path(demo.db)), read_only=True) as con:
        return con.execute(sql, parameters or []).fetchall()


def markdown_text(app: AppTest) -> str:
    return "\n".join(
        str(element.value) for kind in ("markdown", "caption", "info", "success") for element in getattr(app, kind)
    )


def figures(app: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def values(array: object) -> list:
    """A Plotly JSON array as a list: plain, or typed ({"dtype", "bdata", "shape"}: base64 of a numpy array)."""
    if isinstance(array, dict) and "bdata" in array:
        decoded = np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
        if "shape" in array:
            decoded = decoded.reshape([int(size) for size in str(array["shape"]).split(",")])
        return decoded.tolist()
    return list(array)


def titled(app: AppTest, title: str) -> list[dict]:
    return [figure for figure in figures(app) if title in (figure["layout"].get("title") or {}).get("text", "")]


def test_a_cells_divergences_are_a_table_of_expected_against_actual(use_demo, demo: DemoWarehouse) -> None:
    # the latest replay of a cell with divergences, and what they say (the raw JSON main already published)
    golden, agent, replay = marts(
        demo,
        "select golden_session_id, agent_id, replay_session_id from marts.eval_cell_dimensions "
        "where is_latest_replay and divergence_count > 0 order by golden_session_id, agent_id limit 1",
    )[0]
    raw = marts(demo, "select divergences from marts.eval_cell_dimensions where replay_session_id = ?", [replay])
    expected = sorted(
        (item["dimension"], str(item["expected"]), str(item["actual"]))
        for (divergences,) in raw
        for item in json.loads(divergences)
    )
    assert expected

    app = run_page(EVALS)
    app.selectbox(key="eval_cell").set_value((golden, agent)).run()
    assert_no_exception(app)
    tables = [frame.value for frame in app.dataframe if {"expected", "actual"} <= set(frame.value.columns)]
    assert tables, [list(frame.value.columns) for frame in app.dataframe]
    table = tables[0]
    assert list(table.columns[:3]) == ["dimension", "expected", "actual"]  # what a phone shows first
    shown = sorted(
        (row.dimension, row.expected, row.actual) for row in table.itertuples() if row.expected != "no divergence"
    )
    assert shown == expected
    assert {"passed", "failed"} >= set(table["result"]) and "failed" in set(table["result"])
    assert not any(cell.startswith(("[{", "{")) for cell in table["expected"])  # no raw JSON left


def worse_heading(cells: int) -> str:
    return f"Worse than the baseline: {words.count(cells)} {'cell' if cells == 1 else 'cells'}**"


def test_the_cells_worse_than_the_baseline_are_listed_by_name(use_demo, demo: DemoWarehouse) -> None:
    worse = marts(
        demo,
        """
        select cells.golden_session_label, cells.agent_config_label,
               cells.overall_accuracy - baseline.overall_accuracy, cells.tenant
        from marts.eval_matrix as cells
        join marts.eval_matrix as baseline
          on baseline.golden_session_id = cells.golden_session_id and baseline.agent_id = cells.baseline_agent_id
        where cells.versus_baseline = 'worse'
        """,
    )
    assert worse, "the demo has cells worse than their baseline"
    app = run_page(EVALS)
    assert_no_exception(app)
    shown = markdown_text(app)
    assert worse_heading(len(worse)) in shown
    for golden_label, agent_label, change, _ in worse:
        line = next(
            (row for row in shown.splitlines() if text.markdown(golden_label) in row and "fails where" in row), ""
        )
        assert text.markdown(agent_label) in line and words.points(round(change, 6)) in line, (golden_label, line)

    # one tenant: only its own cells (evals carry a tenant, so the filter applies)
    tenant = worse[0][3]
    mine = run_page(EVALS, tenant=tenant)
    assert_no_exception(mine)
    shown = markdown_text(mine)
    assert worse_heading(sum(row[3] == tenant for row in worse)) in shown
    for _, _, change, owner in worse:
        if owner != tenant:
            assert words.points(round(change, 6)) not in shown


def test_every_matrix_column_shows_its_pass_rate(use_demo, demo: DemoWarehouse) -> None:
    columns = marts(
        demo,
        """
        select golden_set, agent_config_label, count(case when passed then 1 end), count(passed)
        from marts.eval_matrix where passed is not null group by all
        """,
    )
    app = run_page(EVALS)
    assert_no_exception(app)
    (matrix,) = titled(app, "Latest finished replay")
    ticks = [
        category
        for name, axis in matrix["layout"].items()
        if name.startswith("xaxis")
        for category in axis.get("categoryarray") or []
    ]
    # under every column: its passing cells of those with a result
    assert sorted(re.sub(r"^.*<br>", "", tick) for tick in ticks) == sorted(f"{k}/{n}" for _, _, k, n in columns)
    key = markdown_text(app)
    for golden_set, label, passing, finished in columns:
        block = key.split(f"Golden set {text.markdown(golden_set)}\n", 1)[1].split("\n- ", 1)[0]
        assert text.markdown(label) in block
        assert f"{passing} of {finished} pass ({words.percent(passing / finished)})" in block, (golden_set, label)


def test_trend_points_carry_their_interval_and_n_on_an_axis_from_zero(use_demo, demo: DemoWarehouse) -> None:
    sizes = {
        row[0]
        for row in marts(
            demo,
            "select replays from marts.eval_set_accuracy_trend_rollup "
            "where run_date between date '2026-10-03' and date '2026-11-01' and tenant_filter like '%(all)'",
        )
    }
    app = run_page(EVALS)
    assert_no_exception(app)
    charts = titled(app, "Pass rate per run day")
    assert len(charts) == len(marts(demo, "select distinct golden_set from marts.eval_matrix"))
    flips = 0
    for figure in charts:
        assert figure["layout"]["yaxis"]["range"][0] == 0 and figure["layout"]["yaxis"]["range"][1] >= 1
        bands = [trace for trace in figure["data"] if trace.get("fill") == "toself"]
        lines = [trace for trace in figure["data"] if trace.get("fill") != "toself"]
        assert bands and len(bands) == len(lines)
        for trace in lines:
            assert "95% CI" in trace["hovertemplate"] and "%{text}" in trace["hovertemplate"]
            points = zip(values(trace["y"]), values(trace["customdata"]), values(trace["text"]), strict=True)
            for y, (low, high, n), label in points:
                passed, replays = map(int, re.fullmatch(r"<br>(\d+) of (\d+) replays passed", label).groups())
                assert replays == n and replays in sizes
                assert abs(y - passed / replays) < 1e-6 and low <= y <= high
                flips += passed < replays
                if 0 < passed < replays:
                    assert low < y < high
    assert flips, "the demo has a day where one replay of 8 failed: it reads as '7 of 8 replays passed'"
    for figure in titled(app, "Mean accuracy per run day"):
        assert figure["layout"]["yaxis"]["range"][0] == 0
        assert any(trace.get("fill") == "toself" for trace in figure["data"])
        assert all(
            re.fullmatch(r"<br>mean of \d+ replays' accuracy", label)
            for trace in figure["data"]
            if trace.get("fill") != "toself"
            for label in values(trace["text"])
        )


def test_with_a_project_selected_every_part_says_not_split_by_project(use_demo, demo: DemoWarehouse) -> None:
    project = filter_scope.projects(None)[0]
    app = run_page(EVALS, project=project)
    assert_no_exception(app)
    notes = [str(info.value) for info in app.info]
    for part in ("The eval matrix", "Regressions", "The baseline comparison", "The eval trends"):
        assert any(note.startswith(f"{part}: not split by project") for note in notes), notes
    assert not app.get("plotly_chart") and not app.dataframe


# -- 390 px, in chromium ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    try:
        started = start_dashboard(demo.db, demo.env(), tmp_path_factory.mktemp("evals") / "dashboard.log")
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def phone(server: DashboardServer) -> Iterator[object]:
    with chromium() as browser:
        context = browser.new_context(viewport=PHONE, device_scale_factor=1)
        page = context.new_page()
        open_page(page, server, EVALS)
        yield page
        context.close()


OUTSIDE_OR_OVERLAPPING = """root => {
    const svg = root.querySelector('svg.main-svg').getBoundingClientRect();
    const box = element => element.getBoundingClientRect();
    const texts = [...root.querySelectorAll('.xtick text, .ytick text, .gtitle, .annotation-text, .g-gtitle text')];
    const outside = texts
        .filter(element => element.textContent.trim())
        .filter(element => box(element).left < svg.left - 1 || box(element).right > svg.right + 1)
        .map(element => element.textContent);
    const overlapping = [];
    for (const axis of root.querySelectorAll('.xaxislayer-above')) {
        const ticks = [...axis.querySelectorAll('.xtick text')].map(box);
        ticks.forEach((a, i) => ticks.slice(i + 1).forEach(b => {
            const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
            if (!apart) overlapping.push([a.left, b.left]);
        }));
    }
    const angles = [...root.querySelectorAll('.xtick text')].map(t => t.getAttribute('transform') || '')
        .filter(transform => transform.includes('rotate'));
    return {outside, overlapping, rotated: angles.length, ticks: root.querySelectorAll('.xtick text').length};
}"""


def test_at_390_px_the_matrix_labels_stay_inside_the_chart_and_apart(phone) -> None:
    matrix = phone.locator(".st-key-eval_matrix_chart .js-plotly-plot")
    matrix.scroll_into_view_if_needed()
    found = matrix.evaluate(OUTSIDE_OR_OVERLAPPING)
    assert found["ticks"] > 0
    assert found["outside"] == [], f"labels cut by the chart's edge at 390 px: {found['outside']}"
    assert found["overlapping"] == [] and found["rotated"] == 0, found


RENDERED_HEADERS = "frame => [...frame.querySelectorAll('th[role=columnheader]')].map(th => th.innerText.trim())"


@pytest.mark.parametrize(
    ("index", "key_columns"),
    [
        (0, ["Dimension", "Expected", "Actual"]),  # a cell's divergences
        (1, ["Golden session", "Agent config", "Accuracy change"]),  # regressions
        (2, ["Golden set", "Candidate", "Pass-rate difference"]),  # candidates against the baseline
    ],
    ids=["divergences", "regressions", "baseline"],
)
def test_at_390_px_the_tables_show_their_key_columns(phone, index: int, key_columns: list[str]) -> None:
    """The grid renders the columns in view (its accessible table holds their headers); only the last of them may
    be cut by the edge, so the key columns come first and another rendered column follows them."""
    table = phone.locator('[data-testid="stDataFrame"]').nth(index)
    table.scroll_into_view_if_needed()
    rendered = table.evaluate(RENDERED_HEADERS)
    assert rendered[: len(key_columns)] == key_columns and len(rendered) > len(key_columns), rendered
