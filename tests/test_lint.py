"""The style checks CI enforces, as part of the test suite: ruff on the Python, sqlfluff (dbt templater) on the SQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PYTHON_PATHS = [
    p
    for p in ("warehouse", "cli", "demo", "ingest", "operations", "dashboards", "tests", "bench")
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
    # an in-memory database keeps the templater off any real warehouse file
    result = run([str(BIN / "sqlfluff"), "lint", "models", "tests/dbt"], FEEDBACK_DB=":memory:")
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert "All Finished" in result.stdout
