"""The dashboard's pages in Streamlit's AppTest (no browser): every page runs without an exception on the
demo warehouse, on a missing, a never-built, an empty and a busy warehouse; the filters change the numbers;
the page-level aggregates agree with the marts they read."""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml
from streamlit.testing.v1 import AppTest

from dashboards import data, text, words
from demo import IMPROVING_SKILL, NEW_SKILL
from tests.support.dashboard import (
    APP,
    PAGES,
    ROOT,
    DashboardPage,
    DemoWarehouse,
    assert_no_exception,
    copy_warehouse,
    empty_warehouse,
    metrics,
    never_built_warehouse,
    republish,
    run_page,
)
from warehouse.location import Warehouse, serving_path

pytestmark = pytest.mark.slow
PAGE_IDS = [page.url_path for page in PAGES]


def page(url_path: str) -> DashboardPage:
    return next(page for page in PAGES if page.url_path == url_path)


def texts(app: AppTest) -> str:
    parts = [
        element.value
        for kind in ("caption", "markdown", "info", "warning", "error", "success")
        for element in getattr(app, kind)
    ]
    return "\n".join(str(part) for part in parts)


def test_pages_and_exposures_name_each_page_at_its_browser_address() -> None:
    """app.py's st.Page list, the tests' PAGES and models/exposures.yml agree; the default page is at the root."""
    app = APP.read_text()
    declared = re.findall(r'st\.Page\(\s*"([^"]+)"[^)]*?url_path="([^"]+)"', app, flags=re.S)
    assert [(p.script, p.url_path) for p in PAGES] == declared
    assert [p.url_path for p in PAGES if p.default] == re.findall(r'url_path="([^"]+)"[^)]*default=True', app)
    exposures = yaml.safe_load((ROOT / "models" / "exposures.yml").read_text())["exposures"]
    pages = [e for e in exposures if e["type"] == "dashboard"]  # the report is an exposure of type analysis
    assert sorted(e["url"] for e in pages) == sorted(f"http://localhost:8501/{p.address}" for p in PAGES)


# -- every page, every warehouse state -----------------------------------------------------------------------
@pytest.mark.parametrize("dashboard_page", PAGES, ids=PAGE_IDS)
def test_every_page_runs_on_demo_data(use_warehouse, demo: DemoWarehouse, dashboard_page: DashboardPage) -> None:
    use_warehouse(demo.db)
    app = run_page(dashboard_page)
    assert_no_exception(app)
    assert [title.value for title in app.title] == [dashboard_page.title]
    assert not app.error, [error.value for error in app.error]
    assert not app.warning, [warning.value for warning in app.warning]
    captions = [caption.value for caption in app.caption]
    assert any("Data as of **2026-11-01**" in caption and "marts built 20" in caption for caption in captions)
    # every table has its download button (dashboards/layout.table); the Overview's movers, a list that reads on a
    # phone, have theirs too
    lists = 1 if dashboard_page.url_path == "overview" else 0
    assert len(app.get("download_button")) == len(app.dataframe) + lists, (len(app.dataframe), dashboard_page.url_path)
    # every rate in a table reads with one decimal (Streamlit's "percent" format would print 33.33%, 0%, 25%)
    for table in app.dataframe:
        for column, config in json.loads(table.proto.columns).items():
            number_format = (config.get("type_config") or {}).get("format")
            assert number_format != "percent", (dashboard_page.url_path, column)
            if number_format == "%.1f%%":
                values = table.value[column].dropna()
                assert ((values >= 0) & (values <= 100)).all() and (values > 1).any(), (column, values.tolist())


@pytest.mark.parametrize("dashboard_page", PAGES, ids=PAGE_IDS)
def test_every_page_explains_a_missing_warehouse(use_warehouse, tmp_path: Path, dashboard_page: DashboardPage) -> None:
    use_warehouse(tmp_path / "nowhere.duckdb")
    app = run_page(dashboard_page)
    assert_no_exception(app)
    assert app.error and "No warehouse at" in app.error[0].value
    commands = "\n".join(markdown.value for markdown in app.markdown)
    assert "make demo" in commands and "feedback-analytics build" in commands
    assert not (tmp_path / "nowhere.duckdb").exists(), "the dashboard must never create the warehouse"


@pytest.mark.parametrize("dashboard_page", PAGES, ids=PAGE_IDS)
def test_every_page_explains_a_warehouse_never_built(
    use_warehouse, demo: DemoWarehouse, tmp_path: Path, dashboard_page: DashboardPage
) -> None:
    use_warehouse(never_built_warehouse(demo.db, tmp_path / "raw-only.duckdb"))
    app = run_page(dashboard_page)
    assert_no_exception(app)
    # every page reads marts only, the Warehouse page too (its raw counts are a mart as of the build)
    assert app.error and "never built" in app.error[0].value and "feedback-analytics build" in app.error[0].value


@pytest.mark.parametrize("dashboard_page", PAGES, ids=PAGE_IDS)
def test_every_page_runs_on_an_empty_warehouse(
    use_warehouse, demo: DemoWarehouse, tmp_path: Path, dashboard_page: DashboardPage
) -> None:
    use_warehouse(empty_warehouse(demo.db, tmp_path / "empty.duckdb"))
    app = run_page(dashboard_page)
    assert_no_exception(app)
    assert [title.value for title in app.title] == [dashboard_page.title]
    assert not app.error, [error.value for error in app.error]
    if dashboard_page.url_path not in ("warehouse",):
        assert app.info, "an empty warehouse shows empty-state messages, not empty charts"
    assert not app.get("plotly_chart"), "no chart is drawn without data"


def _hold_for_writing(path: Path) -> subprocess.Popen:
    """Another process that opens `path` for writing (as ingest, purge and build open the warehouse) and keeps it."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys, time; con = duckdb.connect({str(path)!r}); print('locked', flush=True); "
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


@pytest.mark.parametrize("dashboard_page", PAGES, ids=PAGE_IDS)
def test_a_writer_on_the_warehouse_never_makes_a_page_wait(
    use_warehouse, demo: DemoWarehouse, tmp_path: Path, dashboard_page: DashboardPage
) -> None:
    """While ingest, purge or build holds the warehouse's write lock, every page reads the serving file: the
    same numbers as before, no busy message, no wait for the lock."""
    db = use_warehouse(copy_warehouse(demo.db, tmp_path / "busy.duckdb"))
    quiet = run_page(dashboard_page)
    holder = _hold_for_writing(db)
    try:
        data.clear_caches()
        started = time.monotonic()
        app = run_page(dashboard_page)
        waited = time.monotonic() - started
        assert_no_exception(app)
        assert not app.error and not app.warning, texts(app)
        assert "being written" not in texts(app) and "held for writing" not in texts(app)
        assert metrics(app) == metrics(quiet)
        assert waited < data.LOCK_RETRY_SECONDS + 20, "a page waited for the writer's lock"
    finally:
        holder.kill()
        holder.wait()


def test_a_foreign_writer_on_the_serving_file_shows_a_message_not_a_traceback(
    use_warehouse, demo: DemoWarehouse, tmp_path: Path
) -> None:
    """Nothing of ours opens the serving file for writing (a publish renames a new file in); if another tool
    does, a page says so after a short wait."""
    db = use_warehouse(copy_warehouse(demo.db, tmp_path / "held.duckdb"))
    holder = _hold_for_writing(serving_path(db))
    try:
        started = time.monotonic()
        app = run_page(page("overview"))
        assert_no_exception(app)
        assert "held for writing by another process" in texts(app)
        assert time.monotonic() - started < 60
    finally:
        holder.kill()
        holder.wait()


def test_every_call_lets_go_of_the_file(use_warehouse, demo: DemoWarehouse, tmp_path: Path) -> None:
    """Calls from several threads at once, and one whose statement fails, leave no attachment behind: a writer
    process opens the serving file at once afterwards."""
    db = use_warehouse(copy_warehouse(demo.db, tmp_path / "released.duckdb"))
    warehouse = Warehouse.at(db)

    def count(_: int) -> pd.DataFrame:
        with data.use_warehouse(warehouse):  # a thread of its own starts with no warehouse given
            return data.query("select count(*) as n from marts.build_info")

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(count, range(8)))
    assert [int(frame["n"][0]) for frame in results] == [1] * 8
    with pytest.raises(data.WarehouseUnavailable, match="lacks a table"):
        data.query("select * from marts.no_such_mart")
    writer = subprocess.run(
        [sys.executable, "-c", f"import duckdb; duckdb.connect({str(serving_path(db))!r}).execute('checkpoint')"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert writer.returncode == 0, writer.stderr  # an attachment left behind would hold the file's lock


def test_pages_read_through_publishes(use_warehouse, demo: DemoWarehouse, tmp_path: Path) -> None:
    """Publishes renaming new serving files in while pages query: every query answers, with the numbers of
    the old file or the new one (here the same numbers), never an error."""
    db = use_warehouse(copy_warehouse(demo.db, tmp_path / "publishing.duckdb"))
    expected = data.query("select count(*) as n, sum(responses) as s from marts.session_feedback_daily")
    stop = threading.Event()
    publishes = []

    def publish_in_a_loop() -> None:
        while not stop.is_set():
            publishes.append(republish(db))

    publisher = threading.Thread(target=publish_in_a_loop)
    publisher.start()
    answers = []
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline or len(publishes) < 3:
            data.clear_caches()
            answers.append(data.query("select count(*) as n, sum(responses) as s from marts.session_feedback_daily"))
            assert data.status().ready
    finally:
        stop.set()
        publisher.join()
    assert len(publishes) >= 3 and len(answers) > 10
    assert all(answer.equals(expected) for answer in answers)


# -- filters change the numbers ------------------------------------------------------------------------------
def test_period_filter_changes_the_headline_numbers(use_warehouse, demo: DemoWarehouse) -> None:
    use_warehouse(demo.db)
    app = run_page(page("overview"))
    thirty = metrics(app)
    app.segmented_control(key="period").set_value(7).run()
    assert_no_exception(app)
    assert "2026-10-26 to 2026-11-01 (7 days)" in texts(app)
    seven = metrics(app)
    assert thirty.keys() == seven.keys()
    assert thirty["Session positive rate"] != seven["Session positive rate"]
    assert thirty["Correction rate (all skills)"] != seven["Correction rate (all skills)"]


def test_as_of_filter_slices_the_daily_series(use_warehouse, demo: DemoWarehouse) -> None:
    use_warehouse(demo.db)
    app = run_page(page("session-feedback"))
    latest = metrics(app)["Responses"]
    app.date_input(key="as_of").set_value(dt.date(2026, 8, 15)).run()
    assert_no_exception(app)
    assert "2026-07-17 to 2026-08-15 (30 days)" in texts(app)
    assert metrics(app)["Responses"] != latest


def test_session_feedback_splits_by_modality(use_warehouse, demo: DemoWarehouse) -> None:
    """The page's modality table holds the period's rates per modality from metric_rates_by_period (text and
    voice: the demo writes modality inside `value`, as upstream does), and the answers add up to the total."""
    use_warehouse(demo.db)
    app = run_page(page("session-feedback"))
    assert_no_exception(app)
    (table,) = [frame.value for frame in app.dataframe if "modality" in frame.value.columns]
    assert set(table["modality"]) == {"text", "voice"}
    assert f"{int(table['responses'].sum()):,}" == metrics(app)["Responses"]
    with duckdb.connect(str(demo.db), read_only=True) as con:
        marts = con.execute(
            """
            select segment_value, rate from marts.metric_rates_by_period
            where as_of_date = date '2026-11-01' and period_days = 30 and is_retention_filtered
              and segment_type = 'modality' and metric = 'session_positive_rate' and trials > 0
            """
        ).fetchall()
    shown = {modality: rate / 100 for modality, rate in zip(table["modality"], table["positive_rate"], strict=True)}
    assert shown == pytest.approx(dict(marts), abs=1e-12)  # shown in percent (dashboards/layout.py PERCENT)


def test_tenant_and_project_filters_change_satisfaction(use_warehouse, demo: DemoWarehouse) -> None:
    use_warehouse(demo.db)
    app = run_page(page("conversations"))
    everyone = metrics(app)["Satisfaction, user reactions"]
    app.selectbox(key="tenant").set_value("acme").run()  # the value is the tenant key, the option shows its name
    assert_no_exception(app)
    acme = metrics(app)["Satisfaction, user reactions"]
    assert acme != everyone
    assert app.selectbox(key="project").options == ["All", "codegen", "docs", "support"]
    app.selectbox(key="project").set_value("docs").run()
    assert metrics(app)["Satisfaction, user reactions"] != acme
    table = app.dataframe[0].value  # the conversations of the period follow both filters
    assert set(table["tenant"]) == {"acme"} and set(table["project"]) == {"docs"}
    assert set(table["tenant_name"]) == {"Acme Corporation"}
    # a tenant without that project resets the project to All instead of failing
    app.selectbox(key="tenant").set_value("globex").run()
    assert_no_exception(app)
    assert app.selectbox(key="project").value == "All"


def test_tenant_filter_lists_names_and_shows_a_tenants_reactions_and_workspace_rows(
    use_warehouse, demo: DemoWarehouse
) -> None:
    """The reactions name a tenant `initech`, the workspace gives it a uuid: the filter lists one tenant per
    customer by its display name (seed `tenants`), and choosing Initech shows both its reactions and its
    workspace feedback in the unified signal volume, the counts of feedback_signals_daily for its key."""
    use_warehouse(demo.db)
    app = run_page(page("overview"))
    tenant = app.selectbox(key="tenant")
    assert tenant.options == ["All", "Acme Corporation", "Globex Corporation", "Initech", "Umbrella Corporation"]
    tenant.set_value("initech").run()
    assert_no_exception(app)
    assert app.selectbox(key="tenant").value == "initech"
    assert "Initech" in texts(app) and "initech" not in texts(app).replace("Initech", "")
    volume = plotly_figures(app)["Feedback signals per day by source"]
    shown = {trace["name"]: sum(plotly_numbers(trace["y"])) for trace in volume["data"]}
    assert set(shown) == {"Turn reactions", "Workspace feedback"}, "only the sources with a tenant, both of them"
    with duckdb.connect(str(demo.db), read_only=True) as con:
        expected = dict(
            con.execute(
                """
                select source_system, sum(signals) from marts.feedback_signals_daily
                where tenant = 'initech' and signal_date between date '2026-10-03' and date '2026-11-01'
                group by all
                """
            ).fetchall()
        )
        source_ids = {
            system: ids
            for system, ids in con.execute(
                "select source_system, list(distinct source_tenant_id) from marts.feedback_signals "
                "where tenant = 'initech' group by all"
            ).fetchall()
        }
    assert shown == {words.source(system): float(count) for system, count in expected.items()}
    assert all(count > 0 for count in shown.values())
    assert len(source_ids["turn_reactions"]) == len(source_ids["workspace"]) == 1
    assert source_ids["turn_reactions"] != source_ids["workspace"], "one tenant, two source ids"

    app.switch_page(page("conversations").script).run()
    assert_no_exception(app)
    table = app.dataframe[0].value
    assert not table.empty and set(table["tenant_name"]) == {"Initech"}


def test_retention_switch_shows_what_the_next_purge_removes_only_when_off(use_warehouse, demo: DemoWarehouse) -> None:
    """Session feedback keeps 180 days (cutoff 2026-05-05 as of 2026-11-01): a 30-day window ending
    2026-05-20 reaches into what the next purge deletes."""
    use_warehouse(demo.db)
    app = run_page(page("session-feedback"), as_of=dt.date(2026, 5, 20))
    retained = int(metrics(app)["Responses"].replace(",", ""))
    app.toggle(key="retained").set_value(False).run()
    assert_no_exception(app)
    assert "everything stored" in texts(app)
    everything = int(metrics(app)["Responses"].replace(",", ""))
    assert everything > retained


def test_skills_show_the_insufficient_data_state(use_warehouse, demo: DemoWarehouse, tmp_path: Path) -> None:
    db = copy_warehouse(demo.db, tmp_path / "thin.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute(
            "update marts.skill_correction_rates set sample_size = 3, sufficient_data = false where skill_id = ?",
            [NEW_SKILL],
        )
    use_warehouse(republish(db))
    app = run_page(page("skills"))
    assert_no_exception(app)
    assert any("Too few invocations to rank" in warning.value and NEW_SKILL in warning.value for warning in app.warning)


def test_skills_show_the_undated_events_per_skill(use_warehouse, demo: DemoWarehouse, tmp_path: Path) -> None:
    """Events the analyzer wrote without a timestamp are in no window: the page says how many each skill has,
    and the skill's drill-down says they are not listed (skill_correction_rates.undated_events)."""
    db = copy_warehouse(demo.db, tmp_path / "undated.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("update marts.skill_correction_rates set undated_events = 4 where skill_id = ?", [NEW_SKILL])
    use_warehouse(republish(db))
    app = run_page(page("skills"), skill=NEW_SKILL)
    assert_no_exception(app)
    assert any(info.value.startswith("Undated events: 4 ") for info in app.info)
    shown = next(frame.value for frame in app.dataframe if "undated_events" in frame.value.columns)
    assert shown[["skill_id", "undated_events"]].values.tolist() == [[NEW_SKILL, 4]]
    assert "Not listed: 4 undated event(s) of this skill, in no period." in texts(app)


def plotly_figures(app: AppTest) -> dict[str, dict]:
    """The page's Plotly figures as JSON, by title (on one line: charts.py wraps long titles with <br>)."""
    figures = [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]
    return {figure["layout"]["title"]["text"].replace("<br>", " "): figure for figure in figures}


def plotly_numbers(values: list | dict) -> list[float]:
    """A trace's numbers from its JSON: a list (null for a missing value) or Plotly's typed array (base64)."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float).tolist()
    return [math.nan if value is None else float(value) for value in values]


def test_skills_state_the_build_windows_and_leave_a_missing_trend_out(
    use_warehouse, demo: DemoWarehouse, tmp_path: Path
) -> None:
    """The Skills page says the windows its marts were built with (the marts record the vars of their build;
    here as if built with correction_lookback_days 60 and trend_window_days 14), not the project defaults; a
    skill whose prior window is empty has a NULL trend: no bar (not a bar at 0) and an n/a label."""
    db = copy_warehouse(demo.db, tmp_path / "windows.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("update marts.skill_correction_rates set correction_lookback_days = 60")
        con.execute("update marts.skill_dimension_hotspots set correction_lookback_days = 60")
        con.execute("update marts.skill_correction_trends set trend_window_days = 14")
        shifted = "recent_start = recent_end - 13, prior_end = recent_end - 14, prior_start = recent_end - 27"
        con.execute(f"update marts.skill_dimension_changes set {shifted}")
        missing = [
            skill_id
            for (skill_id,) in con.execute(
                "select skill_id from marts.skill_correction_trends where trend is null"
            ).fetchall()
        ]
    assert missing, "the demo has a skill without a prior window"
    use_warehouse(republish(db))
    app = run_page(page("skills"))
    assert_no_exception(app)
    figures = plotly_figures(app)
    words = "\n".join([texts(app), *(subheader.value for subheader in app.subheader), *figures, json.dumps(figures)])
    assert "last 60 days" in words and "60 days to 2026-11-01" in words
    assert "last 14 days vs the 14 days before" in words
    for default in ("last 90 days", "90 days to", "last 30 days", "the 30 before", "30 days before"):
        assert default not in words, f"{default!r}: a window the build did not use"

    trend = figures["Change in correction rate"]
    bar = trend["data"][0]
    by_label = dict(zip(bar["y"], plotly_numbers(bar["x"]), strict=True))
    for skill_id in missing:
        label = next(label for label in by_label if label.startswith(f"{skill_id}: "))
        assert "n/a" in label
        assert math.isnan(by_label[label]), f"{skill_id} has no trend: no bar, not a bar at {by_label[label]}"
    assert sum(not math.isnan(value) for value in by_label.values()) == len(by_label) - len(missing) > 0


def test_skills_show_q_values_and_significance_after_correction(use_warehouse, demo: DemoWarehouse) -> None:
    """The trend table shows each skill's p-value and Benjamini-Hochberg q-value as the mart holds them (two
    significant digits, "< 0.0001" for the smallest, never "0.0000"); the star and the Significant column
    follow the q-value (is_significant), not p < 0.05."""
    use_warehouse(demo.db)
    app = run_page(page("skills"))
    assert_no_exception(app)
    table = next(frame.value for frame in app.dataframe if "q_value" in frame.value.columns)
    assert list(table.columns[-3:]) == ["p_value", "q_value", "is_significant"]
    with duckdb.connect(str(serving_path(demo.db)), read_only=True) as con:
        mart = {
            skill: (p, q, significant)
            for skill, p, q, significant in con.execute(
                "select skill_id, p_value, q_value, is_significant from marts.skill_correction_trends"
            ).fetchall()
        }
    tested = [row for row in table.itertuples() if mart[row.skill_id][1] is not None]
    assert tested and any(mart[row.skill_id][1] < 1e-4 for row in tested), "no very small q-value: a weak check"
    for row in tested:
        p, q, significant = mart[row.skill_id]
        assert (row.p_value, row.q_value) == (words.probability(p), words.probability(q))
        assert q >= p and bool(row.is_significant) == significant == (q <= 0.05)
    assert "0.0000" not in set(table["p_value"]) | set(table["q_value"])
    labels = plotly_figures(app)["Change in correction rate"]["data"][0]["y"]
    starred = {label.split(":")[0] for label in labels if label.endswith(" *")}
    assert starred == set(table.loc[table["is_significant"].astype(bool), "skill_id"])


def test_skill_events_show_snippets_only_when_ingested(use_warehouse, demo: DemoWarehouse, tmp_path: Path) -> None:
    use_warehouse(demo.db)
    with_snippets = run_page(page("skills"), skill=IMPROVING_SKILL)
    events = with_snippets.dataframe[-1].value
    assert "user_message_snippet" in events.columns
    # an acceptance has no dimension or correction type: a dash, never "None"
    acceptances = events[events["outcome"] == "acceptance"]
    assert not acceptances.empty and set(acceptances["dimension_hint"]) == {"—"}
    assert not events[["dimension_hint", "correction_type", "user_message_snippet"]].isna().any().any()

    db = copy_warehouse(demo.db, tmp_path / "no-snippets.duckdb")
    with duckdb.connect(str(db)) as con:  # what `ingest analyzer --no-snippets` then `build` leave
        tables = con.execute(
            """
            select table_schema, table_name from information_schema.columns
            join information_schema.tables using (table_catalog, table_schema, table_name)
            where column_name = 'user_message_snippet' and table_type = 'BASE TABLE'
            """
        ).fetchall()
        for schema, table in tables:
            con.execute(f'update "{schema}"."{table}" set user_message_snippet = null')
    use_warehouse(republish(db))
    without = run_page(page("skills"), skill=IMPROVING_SKILL)
    assert_no_exception(without)
    assert "user_message_snippet" not in without.dataframe[-1].value.columns
    assert "No message snippets were ingested" in texts(without)


def test_eval_cell_drill_down_follows_the_chosen_cell(use_warehouse, demo: DemoWarehouse) -> None:
    use_warehouse(demo.db)
    with duckdb.connect(str(demo.db), read_only=True) as con:
        cells = con.execute(
            "select golden_session_id, agent_id, cell_status, replay_session_id, golden_session_label, "
            "agent_config_label from marts.eval_matrix"
        ).fetchall()
    app = run_page(page("evals"))
    detail = "\n".join(markdown.value for markdown in app.markdown)
    assert "**pass** · golden session" not in detail, "the cell shown first is one that does not pass"

    golden, agent, _, replay, golden_label, agent_label = next(cell for cell in cells if cell[2] == "pass")
    app.selectbox(key="eval_cell").set_value((golden, agent)).run()
    assert_no_exception(app)
    detail = "\n".join(markdown.value for markdown in app.markdown)
    # by name, with the id beside it; both come from upstream, so markdown shows them as text (dashboards/text.py)
    shown = (
        f"**pass** · golden session {text.markdown(golden_label)} ({text.markdown(golden)}) · "
        f"agent config {text.markdown(agent_label)} ({text.markdown(agent)})"
    )
    assert shown in detail
    dimensions = app.dataframe[0].value  # expected against actual per dimension (tests/dashboards/test_evals_page.py)
    assert (
        list(dimensions.columns[:3]) == ["dimension", "expected", "actual"] and (dimensions["result"] == "passed").all()
    )
    assert replay in detail


def test_benchmark_helper_runs(demo: DemoWarehouse) -> None:
    result = subprocess.run(
        [sys.executable, "bench/dashboard_queries.py", "--db", str(demo.db), "--loads", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for dashboard_page in PAGES:
        assert dashboard_page.title in result.stdout
