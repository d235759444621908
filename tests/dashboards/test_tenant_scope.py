"""Tenant scope, enforced where the marts are read: a reader of tenant A asks for tenant B's rows by every
route (each dashboard query, the app with a crafted URL, a cached result, the report) and gets none of them,
nor the rollups over every tenant, nor the sources without a tenant (warehouse/scoped.py)."""

from __future__ import annotations

import csv
import datetime as dt
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboards import data, text
from dashboards.queries import conversations, evals, overview, period_rates, retention, session_feedback, skills
from dashboards.queries import scope as filter_scope
from dashboards.queries import warehouse as warehouse_queries
from dashboards.report import build_report
from tests.support.dashboard import (
    APP,
    APPTEST_TIMEOUT_S,
    PAGES,
    ROOT,
    DashboardPage,
    assert_no_exception,
)
from tests.support.ingest import cli_env, run_cli
from warehouse.access import EVERYTHING, Scope
from warehouse.errors import UserError
from warehouse.location import Warehouse

pytestmark = pytest.mark.slow

A, B = "acme", "globex"  # two demo tenants, both with reactions, workspace rows and eval replays
READER = Scope.only({A})
AS_OF = dt.date(2026, 11, 1)
QUERY_MODULES = (conversations, evals, overview, period_rates, retention, session_feedback, skills, warehouse_queries)
TENANT_COLUMNS = ("tenant", "tenant_name", "source_tenant_id", "tenant_id", "tenant_filter")


def seed_ids(tenant: str) -> set[str]:
    """A tenant's key, display name and source tenant ids (seed `tenants`): what would identify its rows."""
    with (ROOT / "seeds" / "tenants.csv").open() as seed:
        rows = [row for row in csv.DictReader(seed) if row["tenant_key"] == tenant]
    return {tenant, *(row["tenant_name"] for row in rows), *(row["source_tenant_id"] for row in rows)}


A_IDS, B_IDS = seed_ids(A), seed_ids(B)
# what names B in free text: its display name and workspace ids (the demo's texts mention "Globex's 10-K")
B_MARKS = {value for value in B_IDS if value != B}
B_PROJECT = "sales"  # a project of B's reactions only, in the demo


def leaks(text: str) -> set[str]:
    return {value for value in B_MARKS if re.search(rf"\b{re.escape(value)}\b", text, flags=re.I)}


def frames(result: object) -> list[pd.DataFrame]:
    return list(result) if isinstance(result, tuple) else [result]


def rows(frame: pd.DataFrame) -> set[tuple[str, ...]]:
    return set(frame.astype(str).itertuples(index=False, name=None))


def query_functions() -> list[tuple[str, Callable[..., Any]]]:
    """Every public query function of dashboards/queries/ (the filters' own helpers apart)."""
    found = []
    for module in QUERY_MODULES:
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__ and not name.startswith("_"):
                found.append((f"{module.__name__.rsplit('.', 1)[-1]}.{name}", function))
    return found


def b_identifiers() -> dict[str, Any]:
    """Arguments that name B's rows (read with every tenant): a conversation, an eval cell and its replay."""
    with data.use_scope(EVERYTHING):
        conversation = conversations.conversations(AS_OF - dt.timedelta(days=89), AS_OF, False, B, None).iloc[0]
        cell = evals.eval_matrix(B).dropna(subset=["replay_session_id"]).iloc[0]
        skill = skills.skill_correction_rates()["skill_id"].iloc[0]
    return {
        "source_tenant_id": conversation["source_tenant_id"],
        "project": conversation["project"],
        "conversation_id": conversation["conversation_id"],
        "replay_session_id": cell["replay_session_id"],
        "golden_session_id": cell["golden_session_id"],
        "agent_id": cell["agent_id"],
        "skill_id": skill,
    }


def arguments(function: Callable[..., Any], tenant: str | None, ids: dict[str, Any]) -> dict[str, Any]:
    values = {
        "as_of": AS_OF,
        "period_days": 30,
        "retained": False,
        "tenant": tenant,
        "start": AS_OF - dt.timedelta(days=89),
        "end": AS_OF,
        "metrics": overview.HEADLINE_METRICS,
        "metric": "reaction_satisfaction",
        "segment_type": "all",
        "weeks": 12,
        **ids,
    }
    if "tenant" in inspect.signature(function).parameters:
        values["project"] = None  # the project filter is not the question here
    parameters = inspect.signature(function).parameters
    return {name: values[name] for name, p in parameters.items() if p.default is p.empty or name in values}


def assert_nothing_of_b(name: str, result: object, allowed: list[pd.DataFrame] | None) -> None:
    """No row names B (or no tenant); a frame without a tenant column holds only rows A's own query returns
    (`allowed`: the same call for tenant A with every tenant readable), or none when the call has no tenant."""
    for index, frame in enumerate(frames(result)):
        for column in (c for c in TENANT_COLUMNS if c in frame.columns):
            values = set(frame[column].astype(str))
            assert not values & B_IDS, (name, column, values & B_IDS)
            assert values <= A_IDS, (name, column, values - A_IDS)
        if not set(TENANT_COLUMNS) & set(frame.columns):
            extra = rows(frame) - (rows(allowed[index]) if allowed is not None else set())
            assert not extra, (name, f"{len(extra)} rows that tenant {A}'s own query does not return")


@pytest.mark.parametrize("asked", [B, None], ids=["tenant=B", "tenant=None"])
def test_every_dashboard_query_of_a_tenant_a_reader_returns_nothing_of_b(on_demo, asked: str | None) -> None:
    ids = b_identifiers()
    checked, a_rows = [], 0
    for name, function in query_functions():
        has_tenant = "tenant" in inspect.signature(function).parameters
        allowed = None
        if has_tenant:
            with data.use_scope(EVERYTHING):
                allowed = frames(function(**arguments(function, A, ids)))
        with data.use_scope(READER):
            result = function(**arguments(function, asked, ids))
            mine = function(**arguments(function, A, ids)) if has_tenant else None
        assert_nothing_of_b(name, result, allowed)
        a_rows += sum(len(frame) for frame in frames(mine)) if mine is not None else 0
        checked.append(name)
    assert len(checked) >= 30, checked
    assert a_rows > 1000  # the reader does get tenant A's own rows: the check above is not of empty results


def test_the_filters_list_only_the_readers_tenants(on_demo) -> None:
    with data.use_scope(READER):
        assert list(filter_scope.tenants()) == [A]
        assert set(filter_scope.projects(None)) == set(filter_scope.projects(A))
        status = data.status()
    assert {tenant for tenant, _, _ in status.tenant_projects} == {A}
    with data.use_scope(EVERYTHING):
        assert B in filter_scope.tenants()


def test_a_result_cached_for_every_tenant_is_not_served_to_a_tenant_reader(on_demo) -> None:
    """The same call, first by a reader of everything (cached), then by a reader of A: no all-tenant rollup."""
    call = (AS_OF, 30, False, None, None, overview.HEADLINE_METRICS)
    with data.use_scope(EVERYTHING):
        everything = period_rates.period_rates(*call)
        volume = overview.signal_volume_daily(AS_OF - dt.timedelta(days=29), AS_OF, False, None)
    assert set(everything["metric"]) == set(overview.HEADLINE_METRICS)
    with data.use_scope(READER):
        assert period_rates.period_rates(*call).empty  # the rollups over every tenant are not A's
        mine = overview.signal_volume_daily(AS_OF - dt.timedelta(days=29), AS_OF, False, None)
    assert not mine.empty and mine["signals"].sum() < volume["signals"].sum()
    assert not {"session_feedback", "analyzer"} & set(mine["source_system"])


# -- the app, as a browser would drive it -------------------------------------------------------------------------
def run_as(page: DashboardPage, scope: Scope, **query: str) -> AppTest:
    """The entry point, then the page, in a session whose scope sign-in would have set, with crafted filter
    values: as URL parameters, and as the widgets' state (what a bound URL parameter or a crafted widget message
    from the browser sets: AppTest does not read bound URL parameters itself)."""
    app = AppTest.from_file(str(APP), default_timeout=APPTEST_TIMEOUT_S)
    app.session_state[data.SCOPE_KEY] = scope
    for key, value in query.items():
        app.query_params[key] = value
        app.session_state[key] = value
    app.run()
    app.switch_page(page.script).run()
    return app


def shown(app: AppTest) -> str:
    """Every text and table cell the page shows, and every option of its selectors."""
    parts = [
        str(element.value)
        for kind in ("title", "caption", "markdown", "info", "warning", "error", "metric", "subheader")
        for element in getattr(app, kind)
    ]
    parts += [frame.value.astype(str).to_csv() for frame in app.dataframe]
    parts += [str(option) for box in app.selectbox for option in box.options]
    return "\n".join(parts)


@pytest.mark.parametrize("dashboard_page", PAGES, ids=[page.url_path for page in PAGES])
def test_a_crafted_url_shows_a_tenant_a_reader_nothing_of_b(on_demo, dashboard_page: DashboardPage) -> None:
    app = run_as(dashboard_page, READER, tenant=B, project=B_PROJECT)
    assert_no_exception(app)
    assert not leaks(shown(app)), dashboard_page.url_path
    for frame in app.dataframe:  # every table's tenant columns hold A's identifiers only
        for column in (c for c in TENANT_COLUMNS if c in frame.value.columns):
            assert set(frame.value[column].astype(str)) <= A_IDS, (dashboard_page.url_path, column)
    tenant = app.selectbox(key="tenant")
    assert tenant.value == A and tenant.options == ["Acme Corporation"]
    project = app.selectbox(key="project")
    assert project.value != B_PROJECT and B_PROJECT not in project.options


@pytest.mark.parametrize("url_path", ["session-feedback", "skills", "retention", "warehouse"])
def test_a_page_of_sources_without_a_tenant_says_so_to_a_tenant_reader(on_demo, url_path: str) -> None:
    app = run_as(next(page for page in PAGES if page.url_path == url_path), READER)
    assert_no_exception(app)
    assert any("not available" in info.value and A in info.value for info in app.info), [i.value for i in app.info]
    assert not app.get("plotly_chart") and not app.dataframe


def test_the_overview_says_which_headlines_a_tenant_reader_lacks(on_demo) -> None:
    app = run_as(PAGES[0], READER)
    cards = {metric.label: metric.value for metric in app.metric}
    assert cards["Session positive rate"] == "not available"
    assert cards["Correction rate (all skills)"] == "not available"
    assert cards["Reaction satisfaction"].endswith("%")  # tenant A's own rate


# -- the report -------------------------------------------------------------------------------------------------------
def test_report_of_one_tenant_leaves_out_the_sources_without_one(on_demo, tmp_path: Path) -> None:
    out = tmp_path / "acme.html"
    done = run_cli("report", "--db", on_demo.db, "--out", out, "--tenant", A, env=cli_env())
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    text = re.sub(r"<script>.*?</script>", "", page, flags=re.S)
    assert not leaks(text)
    for section in (
        "Session feedback by modality",
        "Skills that got significantly worse",
        "Change by skill and dimension",
    ):
        # --tenant narrows the report of every tenant: not split (a reader of one tenant: not available)
        assert re.search(rf"<h2 id='[a-z-]+'>{section}[^<]*</h2><p class='note'>Not split by tenant: ", text), section
    assert ">not split by tenant</td>" in text and "Acme Corporation" in text


def test_report_for_a_tenant_reader_refuses_another_tenant(on_demo) -> None:
    with pytest.raises(UserError, match=rf"^no tenant '{B}' in the marts; the tenants are: Acme Corporation$"):
        build_report(Warehouse.at(on_demo.db), as_of=None, period_days=7, tenant=B, scope=READER)
    made = build_report(Warehouse.at(on_demo.db), as_of=None, period_days=7, tenant=None, scope=READER)  # one tenant
    text = re.sub(r"<script>.*?</script>", "", made.html, flags=re.S)
    assert "Acme Corporation" in text
    assert not leaks(text)


def test_the_not_available_note_shows_the_readers_tenant_keys_as_text(on_demo) -> None:
    # tenant keys are upstream values (the access map repeats them): a key written as a markdown link must not
    # become one in the note that replaces a tenantless page
    hostile = "[acme](http://127.0.0.1:9/a)"
    app = run_as(next(page for page in PAGES if page.url_path == "session-feedback"), Scope.only({A, hostile}))
    assert_no_exception(app)
    notes = [info.value for info in app.info if "not available" in info.value]
    assert notes and all(text.markdown(hostile) in note for note in notes), notes
