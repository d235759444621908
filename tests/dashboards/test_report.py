"""`feedback-analytics report`: one HTML file that chromium opens from disk with the network blocked, every chart
drawn with its title, axes and as-of note, the headline numbers those of the marts; `--pdf` prints it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.support.dashboard import DemoWarehouse, all_members_key, chromium, copy_warehouse
from tests.support.ingest import cli_env, run_cli
from warehouse.location import serving_path

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DRAWN = "() => [...document.querySelectorAll('.plotly-graph-div')].every(div => div.querySelector('.main-svg'))"
SECTIONS = [  # the report of 2026-11-01, --period 7: each title states its window
    "Needs attention, 2026-10-26 to 2026-11-01 (7 days)",
    "Alerts firing on 2026-11-01",
    "Headline rates, 2026-10-26 to 2026-11-01 (7 days)",
    "Weekly trends, the 12 weeks to 2026-11-01",
    "Session feedback by modality, 2026-10-26 to 2026-11-01 (7 days)",
    "Got significantly worse: skill and dimension, last 30 days vs the 30 days before",
    "Skills that got significantly worse, last 30 days vs the 30 days before",
    "Change by skill and dimension, last 30 days vs the 30 days before",
    "Eval matrix, the latest replay of each cell",
    "Sources, last signal on or before 2026-11-01",
    "Retention status, as of the last build",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


def report(db: Path, out: Path, *args: str) -> tuple[int, str]:
    """Write the report; (charts it says it drew, what it printed)."""
    done = run_cli("report", "--db", db, "--out", out, *args, env=cli_env(), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""  # no warnings of Streamlit's cache outside a server
    return int(re.search(r"(\d+) charts", done.stdout)[1]), done.stdout


@pytest.fixture(scope="module")
def weekly(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    out = tmp_path_factory.mktemp("report") / "weekly.html"
    charts, _ = report(demo.db, out, "--pdf", "--period", "7")
    return out, charts


def open_offline(browser, path: Path) -> tuple[object, object, list[str]]:
    """The file in a fresh page where every request but the file itself is refused and recorded."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    refused: list[str] = []

    def route(request_route) -> None:
        url = request_route.request.url
        if url == path.resolve().as_uri():
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.goto(path.resolve().as_uri())
    page.wait_for_function(DRAWN, timeout=60_000)
    return context, page, refused


def test_every_chart_is_drawn_from_disk_with_no_request(browser, weekly: tuple[Path, int]) -> None:
    path, charts = weekly
    assert path.stat().st_size > 4_000_000  # Plotly's bundle, inlined
    text = path.read_text()
    assert text.count("plotly.js v") == 1 and not re.search(r"<(script|link)[^>]+(src|href)=", text)
    context, page, refused = open_offline(browser, path)
    try:
        assert refused == []
        assert charts >= 5
        assert page.eval_on_selector_all(".plotly-graph-div", "divs => divs.length") == charts
        for chart in range(1, charts + 1):
            div = f"#chart-{chart}"
            title = page.locator(f"{div} .gtitle").first.text_content()
            assert title.strip(), chart
            assert "as of" in page.locator(f"{div} .infolayer").first.text_content(), (chart, title)  # the subtitle
            # axis titles: xtitle, x2title, ... (a stacked figure titles its last x axis)
            assert page.locator(f"{div} text[class^='x'][class$='title']").count() >= 1, title
            assert page.locator(f"{div} text[class^='y'][class$='title']").count() >= 1, title
        headings = page.eval_on_selector_all("h2", "hs => hs.map(h => h.textContent)")
        assert headings == SECTIONS
    finally:
        context.close()


def test_the_headline_numbers_are_the_marts(browser, weekly: tuple[Path, int], demo: DemoWarehouse) -> None:
    path, _ = weekly
    context, page, _ = open_offline(browser, path)
    try:
        rows = page.eval_on_selector_all(
            "h2:text('Headline rates') ~ table >> nth=0 >> tbody tr",
            "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))",
        )
    finally:
        context.close()
    shown = {row[0]: row for row in rows}
    with duckdb.connect(str(demo.db), read_only=True) as con:
        marts = con.execute(
            """
            select metric, rate, rate_ci_low, rate_ci_high, trials, is_significant_change
            from marts.metric_rates_by_period
            where as_of_date = date '2026-11-01' and period_days = 7 and is_retention_filtered
              and segment_type = 'all' and tenant_filter = $all and project_filter = $all
            """,
            {"all": all_members_key(demo.db)},
        ).fetchall()
    labels = {
        "session_positive_rate": "Session positive rate",
        "reaction_satisfaction": "Reaction satisfaction",
        "correction_rate": "Correction rate (all skills)",
        "eval_pass_rate": "Eval pass rate",
    }
    checked = 0
    for metric, rate, low, high, trials, significant in marts:
        if metric not in labels:
            continue
        row = shown[labels[metric]]
        assert row[1:3] == [f"{rate:.1%}", f"{low:.1%} to {high:.1%}"], metric
        assert row[7] == f"{trials:,.0f}" and row[6].startswith("significantly" if significant else "not"), metric
        checked += 1
    assert checked == 4


def test_session_feedback_is_split_by_modality(browser, weekly: tuple[Path, int], demo: DemoWarehouse) -> None:
    """The report's modality table is metric_rates_by_period's `modality` segments (text and voice, from the
    demo's records, which carry `modality` inside `value` as upstream writes it)."""
    path, _ = weekly
    context, page, _ = open_offline(browser, path)
    try:
        rows = page.eval_on_selector_all(
            "h2:text('Session feedback by modality') ~ table >> nth=0 >> tbody tr",
            "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))",
        )
    finally:
        context.close()
    with duckdb.connect(str(demo.db), read_only=True) as con:
        marts = con.execute(
            """
            select segment_value, metric, rate, rate_ci_low, rate_ci_high, trials
            from marts.metric_rates_by_period
            where as_of_date = date '2026-11-01' and period_days = 7 and is_retention_filtered
              and segment_type = 'modality' and trials > 0
            """
        ).fetchall()
    expected: dict[str, dict[str, str]] = {}
    for modality, metric, rate, low, high, trials in marts:
        row = expected.setdefault(modality, {})
        if metric == "session_positive_rate":
            row["positive"] = f"{rate:.1%}"
            row["positive_ci"] = f"{low:.1%} to {high:.1%}"
        else:
            row["responses"] = f"{trials:,.0f}"
            row["skip"] = f"{rate:.1%}"
    assert set(expected) == {"text", "voice"}
    shown = {row[0]: {"responses": row[1], "positive": row[2], "positive_ci": row[3], "skip": row[4]} for row in rows}
    assert shown == expected


def test_pdf_of_the_same_report(weekly: tuple[Path, int]) -> None:
    pdf = weekly[0].with_suffix(".pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(pdf) > 50_000
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) >= 2


def test_one_tenant_and_a_past_day(browser, demo: DemoWarehouse, tmp_path: Path) -> None:
    out = tmp_path / "initech.html"
    charts, said = report(demo.db, out, "--tenant", "initech", "--as-of", "2026-10-15", "--period", "30")
    assert "data as of 2026-10-15" in said
    context, page, refused = open_offline(browser, out)
    try:
        assert refused == [] and page.eval_on_selector_all(".plotly-graph-div", "divs => divs.length") == charts
        meta = page.inner_text("p.meta")
        assert "Data as of 2026-10-15 (UTC) · Initech" in meta and "marts built as of 2026-11-01" in meta
        assert page.inner_text("h1") == "Feedback report, 2026-09-16 to 2026-10-15 (30 days)"
    finally:
        context.close()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--tenant", "nobody"), "error: no tenant 'nobody' in the marts; the tenants are: "),
        (("--as-of", "2026-12-24"), "error: --as-of 2026-12-24: the marts hold the days "),
        (("--period", "14"), "error: --period 14: the marts hold periods of 1, 7, 30, 90 days"),
    ],
)
def test_a_wrong_option_gets_one_line(
    demo: DemoWarehouse, tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    done = run_cli("report", "--db", demo.db, "--out", tmp_path / "r.html", *args, env=cli_env())
    assert done.returncode == 2 and done.stderr.startswith(expected) and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "r.html").exists()


def test_a_serving_file_from_an_older_version_gets_one_line(demo: DemoWarehouse, tmp_path: Path) -> None:
    """A serving file published before a mart existed (say, by the previous version): rebuild, says one line."""
    db = copy_warehouse(demo.db, tmp_path / "older.duckdb")
    with duckdb.connect(str(serving_path(db))) as con:
        con.execute("drop table marts.eval_baseline_comparison")
    done = run_cli("report", "--db", db, "--out", tmp_path / "r.html", env=cli_env())
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot read the serving file of {db}: ")
    assert "eval_baseline_comparison" in done.stderr and "`feedback-analytics build`" in done.stderr
    assert not (tmp_path / "r.html").exists()
