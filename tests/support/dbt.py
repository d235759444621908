"""Running dbt from the tests: the venv's dbt on this project, output kept out of the repository."""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path
from typing import Any

from operations.build import dbt_command

REPO = Path(__file__).resolve().parents[2]


def _verb_and_arguments(command: list[str]) -> list[str]:
    """["source", "freshness", "--select", "x"] -> ["source freshness", "--select", "x"]."""
    words = 0
    while words < len(command) and not command[words].startswith("-"):
        words += 1
    return [" ".join(command[:words]), *command[words:]]


def run_dbt(
    command: list[str], *, warehouse: Path, work_dir: Path, as_of: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a dbt command against `warehouse`, keeping target/ and logs/ out of the repository. `as_of` goes in
    FEEDBACK_AS_OF, as `feedback-analytics build` passes it: unlike a changed --vars, a new instant keeps dbt's
    partial parsing of the work_dir (a full parse is about 8 s, three times that under load)."""
    instant = {} if as_of is None else {"FEEDBACK_AS_OF": as_of}
    return subprocess.run(
        dbt_command(*_verb_and_arguments(command), work_dir=work_dir),
        cwd=REPO,
        env={**os.environ, "FEEDBACK_DB": str(warehouse), **instant},
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def assert_same_rows(
    expected: list[tuple[Any, ...]], actual: list[tuple[Any, ...]], what: str, *, tolerance: float
) -> None:
    """Row for row equal; floats within `tolerance` (a sum's last bits depend on the order DuckDB's threads add in)."""
    assert len(expected) == len(actual), f"{what}: {len(expected)} rows, then {len(actual)}"
    for old, new in zip(expected, actual, strict=True):
        for a, b in zip(old, new, strict=True):
            if isinstance(a, float) and isinstance(b, float):
                assert math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance), f"{what}: {old} != {new}"
            else:
                assert a == b, f"{what}: {old} != {new}"
