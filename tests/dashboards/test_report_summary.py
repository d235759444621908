"""`feedback-analytics report` opens with "Needs attention", a summary a product lead forwards as is: the skill x
dimension pairs that got significantly worse (read from the serving file here, not written down), the candidates
worse than the pinned baseline by name, the sources that stopped arriving, each with its number, interval and a
link to its section. Its period is the dashboard's default, every section's title states its window, a --tenant
report shows no all-tenant number, and the PDF has no mode bar, no heading alone at a page's end, no legend apart
from its chart and no page holding only a few rows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pypdfium2
import pytest

from dashboards import words
from dashboards.filters import DEFAULT_PERIOD
from tests.support.dashboard import AS_OF, DemoWarehouse, all_members_key, chromium, copy_warehouse
from tests.support.ingest import cli_env, run_cli
from warehouse.location import serving_path

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DRAWN = "() => [...document.querySelectorAll('.plotly-graph-div')].every(div => div.querySelector('.main-svg'))"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


def report(db: Path, out: Path, *args: str) -> Path:
    done = run_cli("report", "--db", db, "--out", out, *args, env=cli_env(), timeout=300)
    assert done.returncode == 0 and done.stderr == "", done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def default(demo: DemoWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report with no option but --pdf: the default period."""
    return report(demo.db, tmp_path_factory.mktemp("summary") / "report.html", "--pdf")


def opened(browser, path: Path):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(path.resolve().as_uri())
    page.wait_for_function(DRAWN, timeout=60_000)
    return context, page


def summary_items(browser, path: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Needs attention's groups: title -> [(link text, link target, item text)]."""
    context, page = opened(browser, path)
    try:
        return page.eval_on_selector(
            "#needs-attention ~ .attention",
            """box => Object.fromEntries([...box.querySelectorAll('h3')].map(h => [h.textContent,
                [...h.nextElementSibling.querySelectorAll('li')].map(li => {
                    const a = li.querySelector('a'); return [a.textContent, a.getAttribute('href'), li.textContent];
                })]))""",
        )
    finally:
        context.close()


def serving(demo: DemoWarehouse, sql: str, params: dict | None = None) -> list[tuple]:
    with duckdb.connect(str(serving_path(demo.db)), read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


def test_the_summary_leads_with_every_significant_worsening_of_a_skill_and_dimension(
    browser, default: Path, demo: DemoWarehouse
) -> None:
    worse = serving(
        demo,
        """select skill_id, dimension, rate_change, rate_change_ci_low, rate_change_ci_high, recent_start, recent_end
           from marts.skill_dimension_changes where is_significant_worsening order by rate_change desc""",
    )
    assert worse, "the demo has a skill that got worse on some dimension"
    groups = summary_items(browser, default)
    # the windows of dbt_project.yml's trend_window_days (30), first and last day inclusive
    title = "Got significantly worse: skill and dimension, last 30 days vs the 30 days before"
    assert list(groups)[:2] == ["Alerts firing", title]  # after the alerts (the demo's cpp-expert fires), it leads
    shown = {label: text for label, _, text in groups[title]}
    assert list(shown) == [f"{skill}, {dimension}" for skill, dimension, *_ in worse]
    for skill, dimension, change, low, high, *_ in worse:
        text = shown[f"{skill}, {dimension}"]
        assert f": {words.points(change)} (95% CI {words.points_interval(low, high)})" in text, text
        assert " pp" in text and "%" in text and "n = " in text and "q " in text
    assert {href for _, href, _ in groups[title]} == {"#skill-dimension-changes"}


def test_the_summary_names_the_candidates_worse_than_the_baseline(browser, default: Path, demo: DemoWarehouse) -> None:
    cells = serving(
        demo,
        """select golden_set, agent_config_label, golden_session_label from marts.eval_matrix
           where versus_baseline = 'worse' order by all""",
    )
    assert cells, "the demo has a candidate that fails where the baseline passes"
    items = summary_items(browser, default)["Worse than the pinned baseline"]
    for golden_set, candidate, session in cells:
        found = [text for label, _, text in items if label.startswith(f"{candidate} on {golden_set}")]
        assert len(found) == 1 and f"“{session}”" in found[0], (candidate, golden_set, items)
        assert re.search(r"[-+]?\d+\.\d pp \(95% CI [-+]\d+\.\d to [-+]\d+\.\d pp", found[0]), found[0]
    assert {href for _, href, _ in items} == {"#eval-baseline"}


def test_every_link_of_the_summary_leads_to_a_section(browser, default: Path) -> None:
    context, page = opened(browser, default)
    try:
        targets = page.eval_on_selector_all("a[href^='#']", "links => links.map(a => a.getAttribute('href'))")
        assert len(targets) >= 5
        for target in set(targets):
            assert page.locator(target).count() == 1, target
            assert page.eval_on_selector(target, "e => e.tagName") in ("H2", "H3"), target
    finally:
        context.close()


def test_a_source_that_stopped_arriving_is_listed(browser, demo: DemoWarehouse, tmp_path: Path) -> None:
    """Turn reactions stop after 2026-10-25 in a copy (their daily signals deleted in the warehouse, then
    source_freshness_daily rebuilt and published by a build of that model): the summary lists them with their last
    day, the others not."""
    db = copy_warehouse(demo.db, tmp_path / "stopped.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute(
            "delete from marts.feedback_signals_daily where source_system = 'turn_reactions' "
            "and signal_date > date '2026-10-25'"
        )
    target = {"DBT_TARGET_PATH": str(tmp_path / "target"), "DBT_LOG_PATH": str(tmp_path / "logs")}
    built = run_cli("build", "--db", db, "--", "--select", "source_freshness_daily", env=cli_env(**target), timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    out = report(db, tmp_path / "stopped.html")
    stopped = summary_items(browser, out)["Sources that stopped arriving"]
    assert stopped == [["Turn reactions", "#sources", f"Turn reactions: last signal 2026-10-25, 7 days before {AS_OF}"]]
    context, page = opened(browser, out)
    try:
        rows = page.eval_on_selector_all(
            "#sources ~ table >> nth=0 >> tbody tr", "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))"
        )
    finally:
        context.close()
    status = {row[0]: row[3] for row in rows}
    assert status == {
        "Session feedback": "arriving",
        "Skill analyzer events": "arriving",
        "Turn reactions": "stopped arriving",
        "Workspace feedback": "arriving",
    }


def test_nothing_stopped_in_the_demo(browser, default: Path) -> None:
    assert "Sources that stopped arriving" not in summary_items(browser, default)


def test_the_period_is_the_dashboards_and_every_title_states_its_window(browser, default: Path) -> None:
    context, page = opened(browser, default)
    try:
        title = page.inner_text("h1")
        headings = page.eval_on_selector_all("h2", "hs => hs.map(h => h.textContent)")
        shown = page.inner_text("body")
    finally:
        context.close()
    assert title.endswith(f"({DEFAULT_PERIOD} days)") and DEFAULT_PERIOD == 30
    window = re.compile(r"\d{4}-\d{2}-\d{2}|last \d+ days|as of the last build|latest replay")
    assert headings[0].startswith("Needs attention, ")
    assert all(window.search(heading) for heading in headings), headings
    assert any("last 30 days vs the 30 days before" in heading for heading in headings)
    for code in ("trend_significance_level", "correction_lookback_days", "seeds/", ".duckdb", "var "):
        assert code not in shown, code
    # p and q are explained once, in words
    assert shown.count("Benjamini-Hochberg): among rows with q at or below") == 1


def test_a_tenant_report_shows_no_number_of_every_tenant(browser, demo: DemoWarehouse, tmp_path: Path) -> None:
    out = report(demo.db, tmp_path / "acme.html", "--tenant", "acme")
    context, page = opened(browser, out)
    try:
        shown = page.inner_text("body")
        headline = page.eval_on_selector_all(
            "#headline-rates ~ table >> nth=0 >> tbody tr",
            "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))",
        )
    finally:
        context.close()
    everyone = serving(
        demo,
        """select metric, rate, trials from marts.metric_rates_by_period
           where as_of_date = $day and period_days = 30 and is_retention_filtered and segment_type = 'all'
             and tenant_filter = $all and project_filter = $all
             and metric in ('session_positive_rate', 'correction_rate')""",
        {"day": AS_OF, "all": all_members_key(demo.db)},
    )
    assert len(everyone) == 2
    for metric, rate, trials in everyone:
        assert f"n = {words.count(trials)}" not in shown and f"{words.percent(rate)} (95% CI" not in shown, metric
    cells = {row[0]: row[1] for row in headline}
    assert cells["Session positive rate"] == cells["Correction rate (all skills)"] == "not split by tenant"
    assert cells["Reaction satisfaction"].endswith("%")  # acme's own
    for section in ("Got significantly worse: skill and dimension", "Skills that got significantly worse",
                    "Session feedback by modality", "Retention status"):  # fmt: skip
        assert re.search(rf"{section}[^\n]*\n+Not split by tenant: this source has no tenant", shown), section
    assert "cpp-expert" not in shown  # no skill: analyzer events have no tenant
    assert re.search(r"Session feedback\tnot split by tenant", shown)


# -- the PDF ------------------------------------------------------------------------------------------------------
def squeezed(text: str) -> str:
    return re.sub(r"\s", "", text)


def test_the_pdf_has_no_mode_bar(browser, default: Path) -> None:
    context, page = opened(browser, default)
    try:
        page.emulate_media(media="print")
        assert page.locator(".modebar-btn").count() == 0
        assert page.eval_on_selector_all(
            ".modebar-container", "bars => bars.every(bar => getComputedStyle(bar).display === 'none')"
        )
    finally:
        context.close()


def headings_and_notes(browser, path: Path) -> list[tuple[str, str]]:
    context, page = opened(browser, path)
    try:
        return page.eval_on_selector_all(
            "h1, h2, h3",
            """hs => hs.map(h => [h.textContent, (h.nextElementSibling && h.nextElementSibling.matches('p.note'))
                ? h.nextElementSibling.textContent : ''])""",
        )
    finally:
        context.close()


def found_on(document: pypdfium2.PdfDocument, text: str, *, whole_word: bool = False) -> list[tuple[int, float]]:
    """(page number, the lowest bottom of its characters) of every place `text` is printed."""
    places = []
    for number in range(len(document)):
        textpage = document[number].get_textpage()
        searcher = textpage.search(text, match_case=True, match_whole_word=whole_word)
        while (match := searcher.get_next()) is not None:
            start, count = match
            places.append((number, min(textpage.get_charbox(start + i)[1] for i in range(count))))
    return places


def test_no_heading_ends_a_pdf_page(browser, default: Path) -> None:
    """Below every heading (and its note), on its page, is what it heads."""
    blocks = headings_and_notes(browser, default)
    document = pypdfium2.PdfDocument(str(default.with_suffix(".pdf")))
    try:
        after = (0, float("inf"))  # headings in document order: each is the first place after the one before
        for heading, note in blocks[1:]:
            places = found_on(document, heading[:40].rsplit(" ", 1)[0] if len(heading) > 40 else heading)
            places = [place for place in places if (place[0], -place[1]) > (after[0], -after[1])]
            assert places, heading
            number, bottom = after = places[0]
            page = document[number]
            below = page.get_textpage().get_text_bounded(0, 0, page.get_size()[0], bottom - 1)
            assert squeezed(below).replace(squeezed(note), "", 1), f"{heading!r} ends page {number + 1}"
    finally:
        document.close()
    assert len(blocks) >= 10


def test_no_pdf_page_holds_only_a_few_table_rows(browser, default: Path) -> None:
    """A page without a heading is one a section runs over to: it is not a table's last few rows alone."""
    headings = [squeezed(heading) for heading, _ in headings_and_notes(browser, default)]
    document = pypdfium2.PdfDocument(str(default.with_suffix(".pdf")))
    try:
        for number in range(len(document)):
            page = document[number]
            textpage = page.get_textpage()
            if any(heading in squeezed(textpage.get_text_range()) for heading in headings):
                continue
            height = page.get_size()[1]
            lowest = min(textpage.get_charbox(i)[1] for i in range(textpage.count_chars()))
            assert (height - lowest) / height > 0.4, f"page {number + 1} holds only a few lines"
    finally:
        document.close()


def test_legends_stay_with_their_charts(browser, default: Path) -> None:
    """Every legend entry of a chart is printed on the page of the chart's title: the last page holding that
    title (a section heading may repeat the title's words on the page before)."""
    context, page = opened(browser, default)
    try:
        charts = page.eval_on_selector_all(
            ".plotly-graph-div",
            # a long title wraps (dashboards/charts.py): its lines, joined as the PDF's text joins them
            """divs => divs.map(div => {
                const title = div.querySelector('.gtitle');
                const lines = [...title.querySelectorAll('tspan.line')].map(t => t.textContent);
                return [lines.length ? lines.join(' ') : title.textContent,
                        [...div.querySelectorAll('.legendtext')].map(t => t.textContent)];
            })""",
        )
    finally:
        context.close()
    document = pypdfium2.PdfDocument(str(default.with_suffix(".pdf")))
    try:
        texts = [" ".join(document[number].get_textpage().get_text_range().split()) for number in range(len(document))]
        legends = 0
        for title, entries in charts:
            pages = [number for number, text in enumerate(texts) if " ".join(title.split()) in text]
            assert pages, (title, "not printed")
            for entry in entries:
                assert pages[-1] in {number for number, _ in found_on(document, entry, whole_word=True)}, (title, entry)
                legends += 1
    finally:
        document.close()
    assert legends >= 5
