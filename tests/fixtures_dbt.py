"""Running dbt from the tests: the venv's dbt on this project, output kept out of the repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def dbt_executable() -> str:
    beside_python = Path(sys.executable).with_name("dbt")
    found = str(beside_python) if beside_python.exists() else shutil.which("dbt")
    if not found:
        pytest.fail("dbt is not installed: run `make venv`")
    return found


def run_dbt(command: list[str], *, warehouse: Path, work_dir: Path) -> subprocess.CompletedProcess[str]:
    """Run a dbt command against `warehouse`, keeping target/ and logs/ out of the repository."""
    return subprocess.run(
        [
            dbt_executable(),
            *command,
            "--project-dir",
            str(REPO),
            "--profiles-dir",
            str(REPO),
            "--target-path",
            str(work_dir / "target"),
            "--log-path",
            str(work_dir / "logs"),
        ],
        cwd=REPO,
        env={**os.environ, "FEEDBACK_DB": str(warehouse)},
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
