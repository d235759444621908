"""Screenshots of what a product lead sees: every dashboard page at desktop width and at 390 px, and every
page of the report's PDF as PNG, from the demo warehouse (or any built warehouse), with Debian's chromium.

    .venv/bin/python -m tests.support.screenshots OUT_DIR [--db WAREHOUSE] [--tenant KEY] [--period DAYS]

Without --db it builds the demo warehouse (tests/support/dashboard.py) under OUT_DIR/.demo first (a few
minutes). Files: `<page>-desktop.png`, `<page>-390.png` (full page), `report-page-<N>.png`. docs/images/
holds the before/after sets of the README's pages (docs/images/README.md).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

from tests.support.dashboard import PAGES, ROOT, chromium, demo_warehouse, open_page, start_dashboard

WIDTHS = {"desktop": {"width": 1500, "height": 1000}, "390": {"width": 390, "height": 844}}
PDF_SCALE = 1.5  # 108 dpi: readable text, files of a few hundred kB


def dashboard_shots(db: Path, out: Path, env: dict[str, str], query: str = "") -> list[Path]:
    server = start_dashboard(db, env, out / "dashboard.log")
    written = []
    try:
        with chromium() as browser:
            for name, viewport in WIDTHS.items():
                context = browser.new_context(viewport=viewport, device_scale_factor=1)
                page = context.new_page()
                for dashboard_page in PAGES:
                    if query:
                        page.goto(f"{server.url}/{dashboard_page.address}?{query}")
                        open_page_again(page, dashboard_page)
                    else:
                        open_page(page, server, dashboard_page)
                    path = out / f"{dashboard_page.url_path}-{name}.png"
                    whole_page(page, viewport, path)
                    written.append(path)
                context.close()
    finally:
        server.stop()
    return written


# Streamlit scrolls inside its main container, not the document: a full-page shot would stop at the viewport
CONTENT_HEIGHT = """() => Math.max(...[...document.querySelectorAll(
    '[data-testid="stMain"], [data-testid="stAppViewContainer"], [data-testid="stSidebarContent"]'
)].map(element => element.scrollHeight))"""
MAX_HEIGHT = 12_000  # pixels: a longer page is cut there


def whole_page(page, viewport: dict[str, int], path: Path) -> None:
    """A screenshot of the page's whole content: the viewport grown to the content's height, then restored."""
    from tests.support.dashboard import wait_until_idle

    height = min(max(int(page.evaluate(CONTENT_HEIGHT)), viewport["height"]), MAX_HEIGHT)
    page.set_viewport_size({"width": viewport["width"], "height": height})
    page.wait_for_timeout(500)
    wait_until_idle(page)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(viewport)


def open_page_again(page, dashboard_page) -> None:
    from tests.support.dashboard import LOAD_TIMEOUT_MS, wait_until_idle

    page.get_by_role("heading", name=dashboard_page.title, level=1).wait_for(timeout=LOAD_TIMEOUT_MS)
    wait_until_idle(page)


def report_shots(db: Path, out: Path, env: dict[str, str], extra: list[str]) -> list[Path]:
    import pypdfium2

    html = out / "report.html"
    result = subprocess.run(
        [sys.executable, "-m", "cli", "report", "--db", str(db), "--out", str(html), "--pdf", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"report exited {result.returncode}: {result.stderr[-2000:]}")
    document = pypdfium2.PdfDocument(str(html.with_suffix(".pdf")))
    written = []
    for number in range(len(document)):
        path = out / f"report-page-{number + 1}.png"
        document[number].render(scale=PDF_SCALE).to_pil().save(path, optimize=True)
        written.append(path)
    document.close()
    return written


def tenant_name(db: Path, tenant: str) -> str:
    """The tenant filter's URL value: the tenant's display name (a key is looked up in the serving file)."""
    import duckdb

    from warehouse.location import serving_path

    with duckdb.connect(str(serving_path(db)), read_only=True) as connection:
        found = connection.execute(
            "select any_value(tenant_name) from marts.feedback_signals_daily where tenant = $1 or tenant_name = $1",
            [tenant],
        ).fetchall()
    if not found or found[0][0] is None:
        raise SystemExit(f"error: no tenant {tenant!r} in {serving_path(db)}")
    return found[0][0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--db", type=Path, help="a built warehouse (default: build the demo's)")
    parser.add_argument("--tenant", help="a tenant key for the dashboard's filter and the report's --tenant")
    parser.add_argument("--period", type=int, help="the period in days (default: each one's default)")
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.db is None:
        demo = demo_warehouse(args.out.resolve() / ".demo")
        db, env = demo.db, demo.env()
    else:
        db, env = args.db.resolve(), {**os.environ, "FEEDBACK_DB": str(args.db.resolve())}
    tenant = tenant_name(db, args.tenant) if args.tenant else None
    query = "&".join(
        part
        for part in (
            f"tenant={urllib.parse.quote_plus(tenant)}" if tenant else "",
            f"period={args.period}" if args.period else "",
        )
        if part
    )
    written = dashboard_shots(db, args.out, env, query)
    if not args.no_report:
        extra = [
            *(["--tenant", args.tenant] if args.tenant else []),
            *(["--period", str(args.period)] if args.period else []),
        ]
        written += report_shots(db, args.out, env, extra)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
