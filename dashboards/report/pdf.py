"""Writing the report: the HTML file (renamed into place) and its PDF, printed by headless chromium."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from warehouse.errors import UserError
from warehouse.private_files import install, staging_folder, temporary_beside

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))


def write(path: Path, text: str) -> None:
    """Write the file under a temporary name beside it (unpredictable, created exclusively) and rename it into place."""
    temporary = temporary_beside(path, "writing")
    try:
        temporary.write_text(text, encoding="utf-8")
        install(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def print_pdf(page: Path, pdf: Path, *, timeout: float = 120) -> None:
    """Print the HTML file to PDF with headless chromium (the charts drawn first: scripts run before printing)."""
    if not CHROMIUM.exists():
        raise UserError(f"--pdf needs chromium at {CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM")
    with staging_folder(pdf, f".{pdf.name}.printing-") as partial:  # unpredictable, created exclusively
        _print_to(page, partial, pdf, timeout)


def _print_to(page: Path, partial: Path, pdf: Path, timeout: float) -> None:
    command = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-pdf-header-footer",
        "--run-all-compositor-stages-before-draw",
        "--virtual-time-budget=20000",
        f"--print-to-pdf={partial}",
        page.resolve().as_uri(),
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
        )
    except (subprocess.TimeoutExpired, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise UserError(f"chromium could not print {page} to PDF: {exc}") from None
    if done.returncode != 0 or not partial.exists() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise UserError(
            f"chromium could not print {page} to PDF: {detail[-1] if detail else f'exit {done.returncode}'}"
        )
    install(partial, pdf)
