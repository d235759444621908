"""Chinese text and emoji are drawn as glyphs, not boxes: in the report's PDF and on the dashboard.

The demo warehouse's serving file, copied, with its busiest skill renamed to
Chinese text and an emoji everywhere it occurs (what an upstream skill id may
be). The PDF of `feedback-analytics report --pdf`: the page holding the
name (its text as pdfium reads it) must draw each of its characters with a
glyph other than .notdef of a font whose glyph programs are in the file and
which fontconfig lists for that character (without one, chromium draws
DejaVu's .notdef box, which carries no text). The dashboard's Skills page in chromium: the element
showing the name is screenshotted, then its characters swapped among
themselves (the Chinese ones reversed, the emoji replaced by another one);
boxes look alike, so the two shots are equal when no font has the glyphs.

The fonts are Debian's fonts-noto-cjk and fonts-noto-color-emoji
(scripts/install-system-packages); without them the tests are skipped, and
fail under CI.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.support import pdf
from tests.support.dashboard import (
    PAGES,
    DemoWarehouse,
    chromium,
    copy_warehouse,
    demo_or_fail,
    open_page,
    start_dashboard,
)
from tests.support.environment import unavailable
from tests.support.ingest import cli_env, run_cli
from warehouse.location import serving_path

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHINESE = "代码审查"  # "code review"
EMOJI, OTHER_EMOJI = "\N{PARTY POPPER}", "\N{TEST TUBE}"  # neither is in DejaVu (which has U+1F600 and a few more)
NAME = f"{CHINESE} {EMOJI}"


def families_covering(char: str) -> set[str]:
    """Every font family the system's fontconfig lists for the character (FONTCONFIG_FILE ignored: the system's
    fonts, whatever configuration chromium was given)."""
    env = {k: v for k, v in os.environ.items() if k not in ("FONTCONFIG_FILE", "FONTCONFIG_PATH")}
    listed = subprocess.run(
        ["fc-list", f":charset={ord(char):x}", "family"], capture_output=True, text=True, env=env, check=False
    ).stdout
    return {name.strip() for line in listed.splitlines() for name in line.split(",") if name.strip()}


@pytest.fixture(scope="module")
def fonts() -> None:
    missing = [char for char in (*CHINESE, EMOJI) if not families_covering(char)]
    if missing:
        unavailable("fonts", f"no installed font has {''.join(missing)!r} (fonts-noto-cjk, fonts-noto-color-emoji)")


@pytest.fixture(scope="module")
def warehouse(fonts: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo warehouse whose busiest skill is named NAME in every mart of its serving file."""
    demo: DemoWarehouse = demo_or_fail(tmp_path_factory.getbasetemp())
    db = copy_warehouse(demo.db, tmp_path_factory.mktemp("fonts") / "fonts.duckdb")
    con = duckdb.connect(str(serving_path(db)))
    try:
        (busiest,) = con.execute(
            "select skill_id from marts.skill_correction_rates order by sample_size desc, skill_id limit 1"
        ).fetchone()
        columns = con.execute(
            "select c.table_name, c.column_name from information_schema.columns c join information_schema.tables t"
            " using (table_catalog, table_schema, table_name) where c.table_schema = 'marts'"
            " and t.table_type = 'BASE TABLE' and c.data_type = 'VARCHAR'"
        ).fetchall()
        for table, column in columns:
            con.execute(f'update marts."{table}" set "{column}" = ? where "{column}" = ?', [NAME, busiest])
        assert con.execute("select count(*) from marts.skill_correction_rates where skill_id = ?", [NAME]).fetchone()
    finally:
        con.close()
    return db


def page_texts(pdf: bytes) -> list[str]:
    """The text of each page as pdfium reads it (through the fonts' ToUnicode maps: a box carries no text)."""
    import pypdfium2 as pdfium

    return [page.get_textpage().get_text_range() for page in pdfium.PdfDocument(pdf)]


def test_the_report_pdf_embeds_glyphs_for_chinese_text_and_emoji(warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = run_cli("report", "--db", warehouse, "--out", out, "--pdf", env=cli_env(), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    html = out.read_text(encoding="utf-8")
    assert NAME in html or json.dumps(NAME)[1:-1] in html, "the report does not show the renamed skill"

    printed = out.with_suffix(".pdf").read_bytes()
    texts = page_texts(printed)
    holding = [number for number, text in enumerate(texts) if CHINESE in text]
    near = [text[max(0, i - 60) : i + 60] for text in texts if (i := text.find(CHINESE[1:])) >= 0]  # boxes' trace
    assert holding, f"no PDF page holds the text {CHINESE!r} (a font without its glyphs draws boxes): {near}"
    fonts = pdf.page_fonts(printed)
    for number in holding:
        assert EMOJI in texts[number], f"page {number + 1} holds {CHINESE!r} but not {EMOJI!r}: {texts[number]!r}"
        for char in (*CHINESE, EMOJI):
            covering = families_covering(char)
            drawing = [font for font in fonts[number] if char in font.draws.values()]
            assert drawing, f"page {number + 1}: no font draws {char!r} ({ord(char):X}) with a glyph of its own"
            wrong = [font.family for font in drawing if font.family not in covering or not font.has_glyphs]
            assert not wrong, (
                f"page {number + 1}: {char!r} ({ord(char):X}) drawn with {wrong}, not a font embedded with its glyph "
                f"(fontconfig lists {sorted(covering)} for it)"
            )


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


def pixels(png: bytes) -> tuple[tuple[int, int], bytes]:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return image.size, image.tobytes()


SWAP = """(element, pairs) => {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const [from, to] of pairs) node.nodeValue = node.nodeValue.split(from).join(to);
    }
}"""


def test_the_dashboard_draws_chinese_text_and_emoji_as_glyphs(
    warehouse: Path, browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    skills = next(page for page in PAGES if page.url_path == "skills")
    log = tmp_path_factory.mktemp("fonts-dashboard") / "dashboard.log"
    server = start_dashboard(warehouse, cli_env(), log)
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    try:
        page = context.new_page()
        open_page(page, server, skills)
        shown = [element for element in page.get_by_text(CHINESE).all() if element.is_visible()]
        assert shown, f"the Skills page shows {NAME!r} nowhere as text (a table drawn on a canvas does not count)"
        element = shown[0].element_handle()  # this element: the locator would find another one after the swap
        assert NAME in (element.text_content() or ""), f"the element shows {element.text_content()!r}, not {NAME!r}"
        element.scroll_into_view_if_needed()
        before, again = pixels(element.screenshot()), pixels(element.screenshot())
        assert before == again, "the element changed between two screenshots: the comparison below would mean nothing"
        element.evaluate(SWAP, [[CHINESE, CHINESE[::-1]]])
        chinese_swapped = pixels(element.screenshot())
        element.evaluate(SWAP, [[EMOJI, OTHER_EMOJI]])
        emoji_swapped = pixels(element.screenshot())
    finally:
        context.close()
        server.stop()
    assert chinese_swapped[0] == before[0], "reversing the Chinese characters changed the element's size"
    assert chinese_swapped != before, f"{CHINESE!r} and {CHINESE[::-1]!r} look the same: boxes, not glyphs"
    assert emoji_swapped != chinese_swapped, f"{EMOJI!r} and {OTHER_EMOJI!r} look the same: boxes, not glyphs"
