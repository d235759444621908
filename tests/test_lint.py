"""The style checks CI enforces, as part of the test suite: ruff on the Python, sqlfluff on the SQL (dbt templater) and
on the macros (jinja templater)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PYTHON_PATHS = [
    p
    for p in ("warehouse", "cli", "demo", "ingest", "operations", "dashboards", "tests", "bench", "scripts")
    if (ROOT / p).exists()
]


def run(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **env}, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("check", [["check"], ["format", "--check"]], ids=["ruff-check", "ruff-format"])
def test_ruff(check: list[str]) -> None:
    result = run([str(BIN / "ruff"), *check, *PYTHON_PATHS])
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_sqlfluff_with_the_dbt_templater(tmp_path: Path) -> None:
    # an in-memory database keeps the templater off any real warehouse file; dbt's target/ and logs/ go to this
    # test's folder, not the checkout another test worker's dbt may be using
    result = run(
        [str(BIN / "sqlfluff"), "lint", "models", "tests/dbt"],
        FEEDBACK_DB=":memory:",
        DBT_TARGET_PATH=str(tmp_path / "target"),
        DBT_LOG_PATH=str(tmp_path / "logs"),
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert "All Finished" in result.stdout


def test_sqlfluff_on_the_macros_with_the_jinja_templater() -> None:
    """The dbt templater skips macro files, so macros/ is linted with the jinja templater (see macros/.sqlfluff)."""
    result = run([str(BIN / "sqlfluff"), "lint", "--templater", "jinja", "--format", "json", "macros"])
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    linted = {Path(entry["filepath"]).as_posix() for entry in json.loads(result.stdout)}
    macro_files = {path.relative_to(ROOT).as_posix() for path in (ROOT / "macros").rglob("*.sql")}
    assert macro_files and linted == macro_files, sorted(macro_files ^ linted)
