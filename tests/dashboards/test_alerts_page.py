"""Alerts where people look (docs/alerts.md), on the demo warehouse, whose skill cpp-expert got worse from
2026-10-05: the Alerts page lists what fires with its numbers and evidence chart, the Overview counts the firing
alerts by severity and links to the page, the report's summary lists them. A subject from upstream that is markup,
a formula or control characters is shown as text everywhere; with nothing firing each says so."""

from __future__ import annotations

import html
import json
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from dashboards import text, words
from dashboards.report.build import build_report
from tests.support.dashboard import (
    ARTIFACTS,
    AS_OF,
    LOAD_TIMEOUT_MS,
    PAGES,
    DashboardPage,
    DemoWarehouse,
    assert_no_exception,
    chromium,
    copy_warehouse,
    run_page,
    start_dashboard,
    wait_until_idle,
)
from warehouse.access import Scope
from warehouse.location import Warehouse, serving_path

pytestmark = pytest.mark.slow

HOSTILE = "=cmd|' /C calc'!A0 <script>alert(1)</script> [x](javascript:alert(1)) \x1b[31m\u202edone"
RULE = "skill_correction_rate_up"  # seeds/alert_rules.csv: a skill's correction rate rose


def page(url_path: str) -> DashboardPage:
    return next(page for page in PAGES if page.url_path == url_path)


def serving(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(serving_path(db)), read_only=True) as con:
        return con.execute(sql).fetchall()


def markdowns(app: AppTest) -> list[str]:
    return [str(element.value) for kind in ("markdown", "caption", "success", "info") for element in getattr(app, kind)]


def figures(app: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def firing_now(db: Path) -> list[tuple[str, str, str, str]]:
    return serving(db, "select rule_id, rule_name, subject, severity from marts.alert_states where is_firing")


@pytest.fixture(scope="module")
def hostile_db(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy whose served alert of cpp-expert names a hostile subject instead (every alert mart's rows)."""
    db = copy_warehouse(demo.db, tmp_path_factory.mktemp("hostile-alerts") / "hostile.duckdb")
    with duckdb.connect(str(serving_path(db))) as con:
        for mart in ("alert_states", "alert_evaluations", "alert_evidence_daily"):
            con.execute(
                f"update marts.{mart} set subject = $hostile where rule_id = $rule and subject = 'cpp-expert'",
                {"hostile": HOSTILE, "rule": RULE},
            )
    return db


@pytest.fixture(scope="module")
def quiet_db(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy served with no alert episode at all (the evaluations kept: the rules did run)."""
    db = copy_warehouse(demo.db, tmp_path_factory.mktemp("quiet-alerts") / "quiet.duckdb")
    with duckdb.connect(str(serving_path(db))) as con:
        con.execute("delete from marts.alert_states")
    return db


def test_the_alerts_page_shows_what_fires_with_its_evidence(use_warehouse, demo: DemoWarehouse) -> None:
    firing = firing_now(demo.db)
    subjects = {subject for _, _, subject, _ in firing}
    assert (RULE, "cpp-expert") in {(rule, subject) for rule, _, subject, _ in firing}, firing
    assert "deslop" not in subjects, "the improving skill fires nothing"
    use_warehouse(demo.db)
    app = run_page(page("alerts"))
    assert_no_exception(app)
    assert not app.error and not app.warning, [e.value for e in [*app.error, *app.warning]]
    shown = "\n".join(markdowns(app))
    assert f"**{len(firing)} {'alert' if len(firing) == 1 else 'alerts'} firing**" in shown
    for _, rule_name, subject, severity in firing:
        assert f"{words.severity_badge(severity)} **{rule_name}** · {text.markdown(subject)} · firing since" in shown
    # cpp-expert's change with its interval, n and q, in words
    (value, change, low, high, n, q), *_ = serving(
        demo.db,
        f"""select evaluations.value, evaluations.value_change, evaluations.change_ci_low, evaluations.change_ci_high,
                   evaluations.n, evaluations.q_value
            from marts.alert_evaluations as evaluations
            where rule_id = '{RULE}' and subject = 'cpp-expert' and evaluated_on = date '{AS_OF}'""",
    )
    assert (
        f"{words.percent(value)} in the recent window (n = {words.count(n)})" in shown
        and f"**{words.points(change)}** (95% CI {words.points_interval(low, high)}), q {words.probability(q)}" in shown
    ), shown
    table = app.dataframe[0].value
    assert sorted(table["subject"]) == sorted(subjects)
    # one evidence chart per statistical alert: both windows with their bands, the baseline rate as a line
    charts = figures(app)
    titles = [chart["layout"]["title"]["text"] for chart in charts]
    assert any("cpp-expert" in title for title in titles), titles
    chart = next(chart for chart in charts if "Correction rate: cpp-expert" in chart["layout"]["title"]["text"])
    assert {trace["name"] for trace in chart["data"]} >= {"recent window", "baseline window"}
    assert [shape["type"] for shape in chart["layout"]["shapes"]] == ["rect", "line"]


def test_a_reader_of_some_tenants_is_told_the_alerts_are_not_theirs(use_warehouse, demo: DemoWarehouse) -> None:
    from dashboards import data

    use_warehouse(demo.db)
    app = run_page(page("alerts"), **{data.SCOPE_KEY: Scope.only({"acme"})})
    assert_no_exception(app)
    assert any(info.value.startswith("Alerts: not available") for info in app.info)
    assert not app.dataframe and not app.get("plotly_chart")


def test_a_hostile_subject_is_text_on_the_page_and_in_the_report(use_warehouse, hostile_db: Path) -> None:
    use_warehouse(hostile_db)
    app = run_page(page("alerts"))
    assert_no_exception(app)
    shown = markdowns(app)
    heading = [line for line in shown if "firing since" in line and "script" in line]
    assert len(heading) == 1 and text.markdown(HOSTILE) in heading[0], heading
    assert not any("<script>" in line.replace(text.markdown(HOSTILE), "") for line in shown)
    assert HOSTILE in list(app.dataframe[0].value["subject"])  # a table cell is text as it is
    (title,) = [
        chart["layout"]["title"]["text"] for chart in figures(app) if "calc" in chart["layout"]["title"]["text"]
    ]
    assert "&lt;script&gt;" in title and "<script>" not in title and "\u202e" not in title and "\x1b" not in title
    report = build_report(Warehouse.at(hostile_db), as_of=None, tenant=None).html
    assert html.escape(text.visible(HOSTILE)) in report
    assert "<script>alert(1)" not in report and "\u202e" not in report and "\x1b" not in report


def test_the_overview_counts_the_firing_alerts_by_severity(use_warehouse, demo: DemoWarehouse) -> None:
    firing = firing_now(demo.db)
    by_severity = {severity: sum(1 for *_, s in firing if s == severity) for *_, severity in firing}
    use_warehouse(demo.db)
    app = run_page(page("overview"))
    assert_no_exception(app)
    (link,) = app.get("page_link")
    assert link.proto.page == "alerts"
    line = link.proto.label
    assert line.startswith(f"**{len(firing)} {'alert' if len(firing) == 1 else 'alerts'} firing** on {AS_OF}: "), line
    for severity, count in by_severity.items():
        assert f"{count} {words.severity_badge(severity)}" in line, line


def test_with_nothing_firing_each_place_says_so(use_warehouse, quiet_db: Path) -> None:
    use_warehouse(quiet_db)
    alerts = run_page(page("alerts"))
    assert_no_exception(alerts)
    assert [success.value for success in alerts.success][0].startswith(
        f"No alert is firing on {AS_OF}. The rules were last evaluated {AS_OF} "
    )
    assert not alerts.get("plotly_chart")
    overview = run_page(page("overview"))
    assert f"No alerts firing on {AS_OF}." in [caption.value for caption in overview.caption]
    assert not overview.get("page_link")
    report = build_report(Warehouse.at(quiet_db), as_of=None, tenant=None).html
    assert f"No alert fires on {AS_OF} (the rules were last evaluated {AS_OF} " in report
    assert "<h3>Alerts firing</h3>" not in report


def test_the_report_summary_lists_the_firing_alerts(on_demo: DemoWarehouse) -> None:
    report = build_report(Warehouse.at(on_demo.db), as_of=None, tenant=None).html
    summary = report[report.index("id='needs-attention'") : report.index("id='alerts'")]
    assert "<h3>Alerts firing</h3>" in summary
    for _, rule_name, subject, severity in firing_now(on_demo.db):
        assert f"<a href='#alerts'>{html.escape(f'{rule_name}, {subject}')}</a>: {severity}, firing since" in summary
    tenant = build_report(Warehouse.at(on_demo.db), as_of=None, tenant="acme").html
    assert "Alerts: not split by tenant" in tenant and "<h3>Alerts firing</h3>" not in tenant


# each chart's title, subtitle and legend: their text and box, and the chart's
CHART_TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
    const frame = plot.getBoundingClientRect();
    return [...plot.querySelectorAll('.gtitle, .gtitle-subtitle, .legendtext, .annotation-text')].map(part => {
        const box = part.getBoundingClientRect();
        return {text: part.textContent, left: box.left, right: box.right, frame_left: frame.left,
                frame_right: frame.right};
    });
})"""


@pytest.mark.browser
def test_in_chromium_the_hostile_subject_is_text_and_the_chart_fits_a_phone(
    demo: DemoWarehouse, hostile_db: Path, tmp_path: Path
) -> None:
    """At 390 px and at desktop width: the evidence chart is drawn with its title, legend and marks inside its
    frame, the hostile subject is shown literally (no element of its markup), and each width is saved as a
    screenshot (tests/artifacts/dashboard-alerts-<width>.png)."""
    server = start_dashboard(hostile_db, demo.env(hostile_db), tmp_path / "dashboard.log")
    try:
        with chromium() as browser:
            for name, width in (("390", 390), ("desktop", 1500)):
                context = browser.new_context(viewport={"width": width, "height": 3000})
                shown = context.new_page()
                shown.goto(f"{server.url}/alerts")
                shown.get_by_role("heading", name="Alerts", level=1).wait_for(timeout=LOAD_TIMEOUT_MS)
                wait_until_idle(shown)
                body = shown.inner_text("[data-testid='stMain']")
                assert "<script>alert(1)</script>" in body and "\\u202e" in body, body[:2000]
                assert shown.evaluate("() => [...document.scripts].some(s => s.text.includes('alert(1)'))") is False
                assert shown.locator("[data-testid='stMain'] a[href^='javascript']").count() == 0
                parts = shown.evaluate(CHART_TEXTS)
                assert {"recent window", "baseline window"} <= {part["text"] for part in parts}, parts
                for part in parts:
                    assert part["frame_left"] - 1 <= part["left"] and part["right"] <= part["frame_right"] + 1, part
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                shown.screenshot(path=str(ARTIFACTS / f"dashboard-alerts-{name}.png"), full_page=True)
                context.close()
    finally:
        server.stop()


def test_operational_alerts_read_their_value_against_the_threshold() -> None:
    """No chart for a silent source, a failed nightly or a load that quarantined too much: their words."""
    assert words.operational_reading("source_silent", 96.4, 72.0) == (
        "No signal for 96 hours; the rule allows 72 hours of silence."
    )
    assert words.operational_reading("quarantine_share", 0.125, 0.05) == (
        "A load quarantined 12.5% of the rows it read; the rule allows 5.0%."
    )
    assert words.operational_reading("nightly_failed", 1.0, None) == (
        "The latest nightly run failed a step or never finished."
    )
    assert words.severity_badge("critical") == ":red-badge[critical]"
    assert words.severity_badge("]<b>[x](y)") == ":gray-badge[bxy]"  # a seed's odd severity cannot break out
